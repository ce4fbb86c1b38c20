"""One owner for the sentences a person reads (#49 item 3): `facerec/words/`. The parts below the interfaces decide
with numbers and take their sentences from words; they never write a number into a sentence themselves, so a
threshold or a score reads the same from every part and every interface."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "facerec"
NUMBER_WORDS = {"score_text", "similarity_text", "rate_text", "percent_text", "plural"}  # facerec.words.phrasing
PARTS = ("gallery", "faces", "openset", "storage", "vectors", "video", "access", "metrics.py", "settings.py",
         "names.py", "errors.py")


def calls_of_number_words(path: Path, root: Path = PACKAGE.parent) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in NUMBER_WORDS:
                found.append(f"{path.relative_to(root)}:{node.lineno} {name}")
    return found


def part_modules() -> list[Path]:
    return [path for part in PARTS for path in ([PACKAGE / part] if part.endswith(".py") else
                                                 sorted((PACKAGE / part).rglob("*.py")))]


def test_the_parts_phrase_no_number_themselves() -> None:
    assert len(part_modules()) > 80
    assert [call for path in part_modules() for call in calls_of_number_words(path)] == []


def test_the_check_finds_a_part_that_phrases_a_number(tmp_path: Path) -> None:
    module = tmp_path / "facerec" / "gallery" / "refusal.py"
    module.parent.mkdir(parents=True)
    module.write_text("from facerec.words.phrasing import score_text\n\n"
                      "def why(rule):\n    return f'below {score_text(rule.threshold)}'\n")
    assert [call.split(" ")[1] for call in calls_of_number_words(module, tmp_path)] == ["score_text"]


def test_words_import_nothing_but_words() -> None:
    for path in sorted((PACKAGE / "words").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            modules = ([node.module] if isinstance(node, ast.ImportFrom) and node.module else
                       [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
            for module in modules:
                assert not module.startswith("facerec") or module.startswith("facerec.words"), (path.name, module)
