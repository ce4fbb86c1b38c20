"""SQL lives in facerec/storage/ (and the vector engines' own folders, facerec/vectors/): no other module imports
SQLAlchemy or runs SQL, so a schema change means reading one folder (issue #49, item 2).

Checked on the syntax tree, not by a text search: `import sqlalchemy`, `from sqlalchemy... import ...`,
`importlib.import_module("sqlalchemy...")` and `__import__("sqlalchemy")` all count, and so do calls of `text(...)`,
`select(...)` imported from sqlalchemy and any `.execute(...)` call.

One transaction owner: only the store opens and ends transactions. Outside storage/ and vectors/ no module calls
`.begin()`, `.commit()` or `.rollback()`, nor a raw write session (`.writing()`, `.writing_sightings()`, which
the store once offered beside `transaction()` and no longer does), nor a session of its own (`.session()`): a
service reads and writes through the tables of a unit of work, `with store.transaction() as tx:` (or
`store.sightings_transaction()`, `store.reading()`), and the store commits when the block ends (#65 item 3).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "facerec"
ALLOWED = ("storage", "vectors")  # folders directly under facerec/ that may speak SQL
SQL_CALLS = {"text", "select"}  # when imported from sqlalchemy
TRANSACTION_CALLS = {"begin", "commit", "rollback", "writing", "writing_sightings"}  # the store's business
SESSION_CALLS = {"session"}  # a session of one's own: a service reads through `store.reading()`

def _is_sqlalchemy(name: str | None) -> bool:
    return bool(name) and (name == "sqlalchemy" or name.startswith("sqlalchemy."))


def sql_in(path: Path) -> list[str]:
    """Each place in one module that imports SQLAlchemy or runs SQL, as 'line: what'."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    from_sqlalchemy: set[str] = set()
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names if _is_sqlalchemy(a.name)]
        elif isinstance(node, ast.ImportFrom) and _is_sqlalchemy(node.module):
            found.append(f"{node.lineno}: from {node.module} import ...")
            from_sqlalchemy |= {a.asname or a.name for a in node.names}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        first = node.args[0] if node.args else None
        if name in {"import_module", "__import__"} and isinstance(first, ast.Constant) \
                and isinstance(first.value, str) and _is_sqlalchemy(first.value):
            found.append(f"{node.lineno}: {name}({first.value!r})")
        elif isinstance(func, ast.Name) and name in SQL_CALLS and name in from_sqlalchemy:
            found.append(f"{node.lineno}: {name}(...)")
        elif isinstance(func, ast.Attribute) and name == "execute":
            found.append(f"{node.lineno}: .execute(...)")
        elif isinstance(func, ast.Attribute) and name in TRANSACTION_CALLS:
            found.append(f"{node.lineno}: .{name}() (only the store opens and ends transactions)")
        elif isinstance(func, ast.Attribute) and name in SESSION_CALLS and not node.args:
            found.append(f"{node.lineno}: .{name}() (a service reads and writes through a unit of work)")
    return found


def sql_outside_storage() -> dict[str, list[str]]:
    """Every module outside the allowed folders that speaks SQL, by its path under facerec/."""
    result = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] in ALLOWED:
            continue
        if found := sql_in(path):
            result[relative.as_posix()] = found
    return result


def test_no_sql_outside_storage() -> None:
    assert sql_outside_storage() == {}, ("SQL and transactions belong to facerec/storage/: add a named method to "
                                         "the store's table object and call it inside store.transaction()")


def test_the_check_sees_every_form(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import importlib\nimport sqlalchemy as sa\nfrom sqlalchemy.orm import Session\n"
                      "from sqlalchemy import select, text\n"
                      "importlib.import_module('sqlalchemy.orm')\n__import__('sqlalchemy')\n"
                      "select(1)\ntext('x')\nsession.execute(q)\n"
                      "with store.writing() as s, s.begin():\n    s.commit()\n"
                      "with store.session() as s:\n    pass\n", encoding="utf-8")
    assert [line.split(":")[0] for line in sql_in(module)] == ["2", "3", "4", "5", "6", "7", "8", "9", "10", "10",
                                                              "11", "12"]
    clean = tmp_path / "clean.py"
    clean.write_text("def select(x):\n    return x\n\nselect(1)\n", encoding="utf-8")
    assert sql_in(clean) == []
