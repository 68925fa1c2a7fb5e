"""A PostgreSQL run store's database, for teams that share one history (`ASSAY_DATABASE_URL`).

The driver is psycopg 3, installed with the `assay[postgres]` extra; nothing imports it until
a PostgreSQL URL is opened, so SQLite users never pay for it.
"""

from __future__ import annotations

import importlib.util

from sqlalchemy import create_engine
from sqlalchemy.engine import URL

from assay.errors import UsageError
from assay.store._database import SQLDatabase
from assay.store._location import StoreLocation

__all__ = ["PostgresDatabase", "postgres_url"]

_DRIVER = "postgresql+psycopg"
_ACCEPTED = ("postgres", "postgresql", _DRIVER)


def postgres_url(url: URL, source: str) -> URL:
    """`url` with the psycopg 3 driver, which is the one assay installs and tests.

    Raises:
        UsageError: The URL asks for another driver (e.g. psycopg2), or names no database.
    """
    if url.drivername not in _ACCEPTED:
        raise UsageError(
            f"{source} asks for the driver '{url.drivername}'; assay talks to PostgreSQL "
            f"through psycopg 3: write the URL as {_DRIVER}://user@host/dbname"
        )
    if not url.database:
        raise UsageError(
            f"{source} names no database; write it as {_DRIVER}://user@host:5432/dbname"
        )
    return url.set(drivername=_DRIVER)


class PostgresDatabase(SQLDatabase):
    """A run store's database in PostgreSQL (`PostgresStore` adds the result models).

    Args:
        url: A `postgresql+psycopg://` URL (see `postgres_url`).

    Raises:
        UsageError: psycopg is not installed, or the server cannot be reached.
    """

    def __init__(self, url: URL) -> None:
        if importlib.util.find_spec("psycopg") is None:
            raise UsageError(
                "PostgreSQL run stores need the psycopg driver, which is not installed; "
                "install it with: pip install 'assay[postgres]'"
            )
        self._url = url
        # pre_ping: a server restart between two commands of `assay serve` costs a reconnect,
        # not an error page.
        engine = create_engine(url, pool_pre_ping=True)
        super().__init__(
            engine,
            url.render_as_string(hide_password=True),
            location=StoreLocation(url.render_as_string(hide_password=False), "the store location"),
        )

    def _hint(self, reason: str) -> str:
        return (
            "Check that the server is running, the database exists, and the user may "
            "create tables in it."
        )
