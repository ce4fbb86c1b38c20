"""`facerec ...`: a thin command-line shell over the Gallery API and the evaluation modules.

Every command takes `--home DIR` (default FACEREC_HOME, else ./facerec_home) and `--json`. Exit codes: 0 ok,
1 a user error (bad photo, no face, unknown name, ...) reported as one line on stderr, 2 a usage error.
Text for the terminal is printed with invisible and control characters shown as escapes (`\x1b`, `\u202e`), so
a name can never move the cursor, recolour or reorder what is printed; `--json` output is ASCII-escaped JSON.
Files the CLI writes (gallery, exports) are readable by their owner only.

One module per command group: people (enroll, identify, verify, ...), gallery_admin (export, import, health,
keys, ...), suggestions (people seen often, not enrolled), evaluation (eval, eval-pairs), models (the model packs), tags (face tags in XMP: read, enroll from, write), watch (cameras, events to
webhooks and MQTT). Making the model is `facerec-train` (facerec.train.cli).
"""

from __future__ import annotations

import argparse

from facerec.cli import evaluation, gallery_admin, library_groups, models, people, suggestions, tags, watch
from facerec.cli.registry import new_parser, run_parser


def main(argv: list[str] | None = None) -> int:
    return run_parser(build_parser(), argv)


def build_parser() -> argparse.ArgumentParser:
    parser, command, sub, common = new_parser("facerec", "Enroll faces from one photo and identify them.")
    for group in (people, library_groups, suggestions, tags, watch, gallery_admin, evaluation, models):
        group.register(command, sub, common)
    return parser
