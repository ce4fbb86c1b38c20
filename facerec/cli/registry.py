"""The parser every facerec command line is built on: the options all commands share, how a command is added,
and how a parsed command runs (user errors as one line and exit code 1, never a traceback)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, Protocol

from facerec.errors import FaceRecError
from facerec.settings import DEBUG_ENV, debug_requested
from facerec.version import __version__


class CommandAdder(Protocol):
    def __call__(self, name: str, handler: Callable, help_text: str,
                 json_file: bool = False) -> argparse.ArgumentParser: ...


def new_parser(prog: str, description: str):
    """(parser, command, subparsers, common options): `command(name, handler, help)` adds a subcommand that
    takes the common options and `--json` (with `json_file`, `--json OUT` writes the JSON to OUT)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--version", action="version", version=f"facerec {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--home", help="gallery folder (default: $FACEREC_HOME, else ./facerec_home)")
    common.add_argument("--db", metavar="URL",
                        help="gallery database (default: $FACEREC_DATABASE_URL, else gallery.db in the gallery "
                             "folder), e.g. postgresql+psycopg://user@host/facerec")
    common.add_argument("--fpir", type=float,
                        help="accepted stranger-match rate (false-positive identification rate, 0.01 = 1%%, the "
                             "default): the threshold in force is derived from it for the gallery's size")
    common.add_argument("--threshold", type=float,
                        help="pin the threshold on the normalised score instead, e.g. 6 (overrides --fpir; "
                             "a value between -1 and 1 is an old cosine pin and is refused)")
    common.add_argument("--model", help="ONNX model file (default: the shipped model)")
    common.add_argument("--pack", help="model pack by name instead (`facerec models` lists them; default: "
                                       "$FACEREC_PACK, else facerec-r18-arcface)")
    sub = parser.add_subparsers(metavar="COMMAND")

    def command(name: str, handler: Callable, help_text: str, json_file: bool = False) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help_text, description=help_text)
        p.set_defaults(handler=handler)
        if json_file:
            p.add_argument("--json", nargs="?", const="-", metavar="OUT",
                           help="print JSON instead of a table; with OUT, write the JSON there and print the table")
        else:
            p.add_argument("--json", action="store_const", const="-", help="print JSON instead of a table")
        return p

    return parser, command, sub, common


INTERNAL_ERROR = 70  # EX_SOFTWARE: not the user's input, facerec's own failure


def run_parser(parser: argparse.ArgumentParser, argv: list[str] | None = None) -> int:
    """Parse and run one command; what reaches the user on failure is one line on stderr."""
    from facerec.cli.output import error_line, terminal_text
    from facerec.storage.failures import DatabaseFailure, failure_reason

    os.umask(0o077)  # galleries and exports hold faces: owner only
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return args.handler(args) or 0
    except FaceRecError as error:
        print(f"error: {terminal_text(error_line(error, getattr(args, 'hints', {})))}", file=sys.stderr)
        return 1
    except (FileNotFoundError, NotADirectoryError) as error:
        print(f"error: {terminal_text(error)}", file=sys.stderr)
        return 1
    except DatabaseFailure as error:
        print(f"error: the gallery database failed ({terminal_text(failure_reason(error))})",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # noqa: BLE001 - a bug, not the user's mistake: said as one, traceback on request
        if debug_requested():
            raise
        print(f"error: facerec failed unexpectedly ({type(error).__name__}: {terminal_text(error)[:200]}); this is a "
              f"bug: please report it (set {DEBUG_ENV}=1 for the traceback)", file=sys.stderr)
        return INTERNAL_ERROR
