"""Bring a store's schema to the current version with Alembic, when it is opened.

Opening is on every command's path, so the common case stays cheap: one query reads the
`alembic_version` row, and Alembic is imported only when the schema is behind. A database
made before migrations existed (it has `runs` but no version row) is stamped as the first
revision, whose tables it has, and upgraded from there.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Connection, Engine, inspect, text

__all__ = ["HEAD_REVISION", "current_revision", "migrate"]

HEAD_REVISION = "0001"
"""The newest migration; a test checks it is the head of `migrations/versions`."""

_FIRST_REVISION = "0001"
_SCRIPTS = Path(__file__).with_name("migrations")


def _revision(conn: Connection) -> str | None:
    if not inspect(conn).has_table("alembic_version"):
        return None
    version: str | None = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    return version


def current_revision(engine: Engine) -> str | None:
    """The schema version recorded in the database, or None when it has none."""
    with engine.connect() as conn:
        return _revision(conn)


def migrate(engine: Engine) -> None:
    """Upgrade the schema to `HEAD_REVISION` (create it in an empty database)."""
    if current_revision(engine) == HEAD_REVISION:
        return
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(_SCRIPTS))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        if _revision(conn) is None and inspect(conn).has_table("runs"):
            command.stamp(config, _FIRST_REVISION)  # made before migrations existed
        command.upgrade(config, "head")
