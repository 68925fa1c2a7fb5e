"""Database failures reported as one line, never as a traceback that prints the SQL.

SQLAlchemy's exceptions render the statement and its parameters (case outputs, judge
justifications, snapshots) and would reach users as an "internal error". A lock held past the
busy timeout, a full disk, a damaged or read-only file or a lost server connection is none of
that: `StoreUnavailableError` says which store failed and the driver's own one-line reason.
Constraint violations, values the database refuses (`DataError`) and SQL errors are left
alone: the store turns the first into `ConflictError` itself, keeps NUL out of text
(`json_without_nul`), and the rest are bugs.
"""

from __future__ import annotations

from functools import partial

from sqlalchemy import Engine, event
from sqlalchemy.engine import ExceptionContext
from sqlalchemy.exc import DatabaseError as _DatabaseError
from sqlalchemy.exc import DBAPIError, InterfaceError, InternalError, OperationalError

from assay.store._errors import StoreUnavailableError

__all__ = ["failure_message", "report_failures"]

_MAX_REASON = 200


def report_failures(engine: Engine, where: str) -> None:
    """Raise `StoreUnavailableError` instead of the driver's failures on `engine`."""
    event.listen(engine, "handle_error", partial(_translate, where))


def _translate(where: str, context: ExceptionContext) -> None:
    failure = context.sqlalchemy_exception
    if context.is_pre_ping or not _is_unavailable(failure):
        return  # the pool reconnects after a failed ping; other errors keep their type
    raise StoreUnavailableError(failure_message(where, context.original_exception))


def _is_unavailable(failure: BaseException | None) -> bool:
    if isinstance(failure, OperationalError | InternalError | InterfaceError):
        return True
    # A damaged SQLite file raises the driver's bare DatabaseError ("malformed").
    return type(failure) in (_DatabaseError, DBAPIError)


def failure_message(where: str, original: BaseException | None) -> str:
    """`the run store WHERE failed: REASON`: the driver's first line, without SQL."""
    text = str(original).strip().splitlines()[0] if original is not None and str(original) else ""
    # sqlite3 quotes the undecodable text itself ("... with text '<the row's data>'").
    reason = text.split(" with text '", 1)[0][:_MAX_REASON] or type(original).__name__
    if "locked" in reason:
        reason += " (another process held its lock past the busy timeout)"
    return f"the run store {where} failed: {reason}"
