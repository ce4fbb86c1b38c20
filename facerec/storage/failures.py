"""What a failing database raises, named by the storage layer so the interfaces can catch it without importing the
database library themselves (SQL and SQLAlchemy stay in facerec/storage/, tests/test_sql_boundary.py)."""

from __future__ import annotations

from sqlalchemy.exc import IntegrityError, SQLAlchemyError

DatabaseFailure = SQLAlchemyError  # any error the database or its driver raised
ConflictingWrite = IntegrityError  # a write a constraint refused (a unique name taken by a concurrent writer)


def failure_reason(error: BaseException) -> BaseException:
    """The driver's own error under `error` when there is one (it says what the database said), else `error`."""
    return getattr(error, "orig", None) or error
