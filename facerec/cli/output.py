"""What every facerec command shares: opening the gallery, one-line errors with command-line hints, and output
(JSON, tables, progress bars) that no name can turn into terminal control sequences."""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
import unicodedata
from pathlib import Path

from facerec.errors import FaceRecError, MultipleFaces
from facerec.settings import columns_requested


def error_line(error: FaceRecError, hints: dict | None = None) -> str:
    """The one line the CLI prints for a user error: the error's message, then what to do on the command line
    (`hints`: {error class: sentence, or a function of the error giving one}) where the command knows."""
    text = str(error).strip()
    text = text if not text or text[-1] in ".?!" else text + "."
    for kind, hint in (hints or {}).items():
        if isinstance(error, kind):
            hint = hint(error) if callable(hint) else hint
            return f"{text} {hint}" if hint else text
    return text


def pick_face_hint(option: str):
    """The hint for a photo with several faces: which option picks one, and the numbers it takes."""

    def hint(error: MultipleFaces) -> str:
        count = len(error.faces)
        return f"Pick one with {option} (0 to {count - 1}, left to right)." if count else f"Pick one with {option}."

    return hint


def open_gallery(args):
    from facerec.gallery import Gallery

    overrides = {"home": args.home, "similarity_threshold": args.threshold, "model_path": chosen_model(args),
                 "fpir": args.fpir, "database_url": args.db}
    gallery = Gallery.open(**{k: v for k, v in overrides.items() if v is not None and k != "home"}, home=args.home)
    maintenance = gallery.services().maintenance
    for warning in [*maintenance.notices, *maintenance.warnings(), *maintenance.server_warnings()]:
        if warning:
            print(f"warning: {terminal_text(warning)}", file=sys.stderr)
    return gallery


def chosen_model(args):
    """The model file `--model` or `--pack NAME` names (None: the environment's or the default)."""
    from facerec.errors import InvalidArgument
    from facerec.settings import pack_file

    if not getattr(args, "pack", None):
        return args.model
    if args.model:
        raise InvalidArgument("--model and --pack both choose the model: give one of them")
    try:
        return pack_file(args.pack)
    except ValueError as error:
        raise InvalidArgument(str(error)) from None


def settings_from(args):
    from facerec.settings import Settings

    return Settings.from_env(home=args.home, similarity_threshold=args.threshold, model_path=chosen_model(args),
                             fpir=args.fpir, database_url=args.db)


def emit(args, data, table: list[list] | None = None, headers: list[str] | None = None, text: str = "") -> None:
    """JSON on stdout with `--json`; with `--json FILE` (eval commands) JSON goes to FILE and the table to stdout."""
    if args.json == "-":
        print(json.dumps(plain(data), indent=1, default=str))
        return
    if args.json:
        Path(args.json).write_text(json.dumps(plain(data), indent=1, default=str))
    width = terminal_width()
    if text:
        print("\n".join(wrapped(terminal_text(line), width) for line in text.split("\n")))
    if table is not None and headers:
        print("\n".join(table_lines([[terminal_text(c) for c in row] for row in table], headers, width)))


def terminal_width() -> int | None:
    """The columns to fit: `COLUMNS` when set, else the terminal's; None when the output goes to a file or a pipe
    and no width was asked for (lines are then left whole, for grep and for programs)."""
    if not columns_requested() and not sys.stdout.isatty():
        return None
    return max(40, shutil.get_terminal_size((100, 24)).columns)


def wrapped(line: str, width: int | None) -> str:
    """`line` broken at spaces into lines of at most `width` characters, continuations indented by two."""
    if width is None or len(line) <= width:
        return line
    return textwrap.fill(line, width, subsequent_indent="  ", break_long_words=True, break_on_hyphens=False)


def table_lines(rows: list[list[str]], headers: list[str], width: int | None) -> list[str]:
    """A table that fits `width`: columns side by side, the last one wrapped within what is left; when even the
    other columns do not fit, one block per row ("header: value" lines, wrapped)."""
    cells = [[str(h) for h in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    fixed = sum(widths[:-1]) + 2 * (len(headers) - 1)
    if width is None or fixed + widths[-1] <= width:
        return ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    last = width - fixed
    if last >= 20:
        lines = []
        for row in cells:
            pieces = textwrap.wrap(row[-1], last, break_long_words=True) or [""]
            lines.append("  ".join(c.ljust(w) for c, w in zip(row[:-1], widths)) + "  " + pieces[0])
            lines += [" " * fixed + piece for piece in pieces[1:]]
        return lines
    lines = []
    for row in cells[1:]:
        lines += [wrapped(f"{header}: {value}", width) for header, value in zip(headers, row)] + [""]
    return lines[:-1]


def terminal_text(value: object) -> str:
    """`value` as one line for a terminal: control, format and separator characters (escape sequences, zero-width
    and right-to-left override characters, newlines) written as Python escapes instead of acting on the display."""
    return "".join(repr(char)[1:-1] if unicodedata.category(char) in UNPRINTABLE else char for char in str(value))


UNPRINTABLE = {"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"}


def plain(value):
    """NaN -> null, so the JSON is valid for any parser."""
    import math

    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def progress_bar(total: int, label: str, unit: str = "photo"):
    from tqdm import tqdm

    bar = tqdm(total=total, desc=label, unit=unit, file=sys.stderr, disable=total < 2, mininterval=0.5)
    return bar


def warn(warnings: list[str]) -> None:
    for warning in warnings:
        print(f"warning: {terminal_text(warning)}", file=sys.stderr)
