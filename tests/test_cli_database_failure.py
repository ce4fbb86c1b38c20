"""A database that fails under a command reaches the user as one line and exit code 1, never a traceback: the
CLI catches the storage layer's `DatabaseFailure` without importing the database library itself."""

from __future__ import annotations

from sqlalchemy import text

from facerec.cli.registry import new_parser, run_parser
from facerec.storage import Store


def test_a_failing_query_is_one_line_and_exit_code_1(tmp_path, capsys) -> None:
    store = Store(f"sqlite:///{tmp_path / 'gallery.db'}")

    def query_a_missing_table(_args) -> int:
        with store.session() as session:
            session.execute(text("SELECT * FROM no_such_table"))
        return 0

    parser, command, _sub, _common = new_parser("facerec", "test")
    command("broken", query_a_missing_table, "runs a query the database refuses")
    try:
        code = run_parser(parser, ["broken"])
    finally:
        store.dispose()
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("error: the gallery database failed (no such table: no_such_table)")
    assert err.count("\n") == 1 and "Traceback" not in err
