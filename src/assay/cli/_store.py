"""The `--db` option and opening the run store, shared by the commands that read stored runs."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from assay.store import Store

__all__ = ["db_option", "open_cli_store"]


def db_option(function: click.decorators.FC) -> click.decorators.FC:
    """Add `--db` (the store location) to a command."""
    return click.option("--db", help="The run store (a SQLite path or database URL).")(function)


def open_cli_store(db: str | None) -> contextlib.closing[Store]:
    """The run store `--db`, `$ASSAY_DATABASE_URL` or the project's `store:` names, closed
    when the `with` block ends; the project's other settings are not loaded."""
    from assay.config import project_store
    from assay.store import open_store

    return contextlib.closing(open_store(db, fallback=project_store()))
