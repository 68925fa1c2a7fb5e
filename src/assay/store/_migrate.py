"""Bring a store's schema to the current version with Alembic, when it is opened.

Opening is on every command's path, so the common case stays cheap: one query reads the
`alembic_version` row, and Alembic is imported only when the schema is behind. A new (empty)
database gets the current tables directly from `_tables.metadata`, which a test keeps equal to
what the migrations build: importing Alembic and replaying every migration cost ~0.15 s of
the first run in a fresh checkout or CI job. A database made before migrations existed (it
has `runs` but no version row) is stamped as the first revision, whose tables it has, and
upgraded from there.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Column, Connection, Engine, MetaData, String, Table, inspect, text

from assay.errors import UsageError
from assay.store._tables import metadata

__all__ = ["HEAD_REVISION", "current_revision", "migrate"]

HEAD_REVISION = "0006"
"""The newest migration; a test checks it is the head of `migrations/versions`."""

_FIRST_REVISION = "0001"
_LOCK_KEY = 0x61737361  # "assa": the advisory lock assay's migrations hold on PostgreSQL
_SCRIPTS = Path(__file__).with_name("migrations")
_VERSION = Table(
    "alembic_version",
    MetaData(),
    Column("version_num", String(32), primary_key=True),
)
"""Alembic's version table, as Alembic creates it, for stores created without Alembic."""


def _revision(conn: Connection) -> str | None:
    if not inspect(conn).has_table("alembic_version"):
        return None
    version: str | None = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    return version


def current_revision(engine: Engine) -> str | None:
    """The schema version recorded in the database, or None when it has none."""
    with engine.connect() as conn:
        return _revision(conn)


def migrate(engine: Engine, where: str) -> None:
    """Upgrade the schema to `HEAD_REVISION` (create it in an empty database).

    Raises:
        UsageError: The store was upgraded by a newer assay, whose schema this one does not
            know (`where` names the store in the message).
    """
    if current_revision(engine) == HEAD_REVISION:
        return
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            # Two processes opening a new database at once: the second waits, then finds
            # the schema current. (SQLite's write transaction already excludes the other.)
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
        found = _revision(conn)
        if found == HEAD_REVISION:
            return
        tables = inspect(conn).get_table_names()
        if found is None and not tables:
            metadata.create_all(conn)
            _VERSION.create(conn)
            conn.execute(_VERSION.insert().values(version_num=HEAD_REVISION))
            return
        if found is None or "runs" not in tables:  # another application's Alembic too
            _check_assay_tables(conn, tables, where)
        _upgrade(conn, found, where)


_ASSAY_TABLES = frozenset({*metadata.tables, "alembic_version"})
_RUN_COLUMNS = frozenset({"id", "suite", "target", "status", "started_at", "snapshot"})
_LISTED_TABLES = 5


def _check_assay_tables(conn: Connection, tables: list[str], where: str) -> None:
    """Refuse to add assay's tables to a database that is not a run store.

    An unversioned database is only taken for a store made before migrations existed when
    all its tables are assay's and `runs` has assay's columns; anything else is somebody
    else's data (`--db` pointed at an application's database, a shared PostgreSQL schema).

    Raises:
        UsageError: The database holds other tables; the message names them.
    """
    others = sorted(set(tables) - _ASSAY_TABLES)
    runs_columns = (
        {column["name"] for column in inspect(conn).get_columns("runs")}
        if "runs" in tables
        else set()
    )
    if not others and runs_columns >= _RUN_COLUMNS:
        return
    shown = sorted(others or tables)
    listed = ", ".join(shown[:_LISTED_TABLES]) + (", ..." if len(shown) > _LISTED_TABLES else "")
    schema = inspect(conn).default_schema_name if conn.dialect.name != "sqlite" else None
    place = f"{where} (schema {schema})" if schema else where
    raise UsageError(
        f"{place} is not an assay run store: it holds other tables ({listed}), and assay does "
        "not add its tables to another application's database. Point --db (or "
        "$ASSAY_DATABASE_URL, or the project's `store:`) at a new file or an empty database"
    )


def _upgrade(conn: Connection, found: str | None, where: str) -> None:
    """Bring a schema at revision `found` (None: made before migrations) to the head."""
    from alembic import command
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(_SCRIPTS))
    known = {script.revision for script in ScriptDirectory.from_config(config).walk_revisions()}
    if found is not None and found not in known:
        raise UsageError(
            f"the run store {where} has schema version {found}, written by a newer "
            f"assay than this one (which knows up to {HEAD_REVISION}); upgrade assay "
            "(pip install -U assay) to use it"
        )
    config.attributes["connection"] = conn
    if found is None and inspect(conn).has_table("runs"):
        command.stamp(config, _FIRST_REVISION)  # made before migrations existed
    command.upgrade(config, "head")
