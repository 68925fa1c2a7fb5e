"""Where the run store is, decided without opening it (or importing SQLAlchemy).

`assay run` learns where its runs go long before it touches the database, and a long run
may never touch it from its own process at all (its writer process does): see
`DeferredStore`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from assay.errors import UsageError

__all__ = ["DATABASE_URL_ENV", "DEFAULT_DB_PATH", "StoreLocation", "resolve_location"]

DEFAULT_DB_PATH = Path(".assay/assay.db")
"""Where runs are stored when nothing else is configured, relative to the working directory."""

DATABASE_URL_ENV = "ASSAY_DATABASE_URL"
"""Environment variable naming the store when no location is passed."""

POSTGRES_SCHEMES = ("postgresql", "postgres")


@dataclass(frozen=True, slots=True)
class StoreLocation:
    """A store's location: a SQLite file's absolute path, or a database URL."""

    value: Path | str
    """The SQLite file, or the URL (which may hold a password: never print it)."""
    source: str
    """Where the location came from, for messages ("$ASSAY_DATABASE_URL")."""

    @property
    def backend(self) -> str:
        """`sqlite` or `postgresql`, as the URL's scheme names it."""
        if isinstance(self.value, Path):
            return "sqlite"
        backend = self.value.split("://", 1)[0].lower().split("+", 1)[0]
        return "postgresql" if backend in POSTGRES_SCHEMES else backend


def resolve_location(location: str | Path | None, *, fallback: str | None) -> StoreLocation:
    """The store `open_store` opens for these arguments (the first set wins: `location`,
    `$ASSAY_DATABASE_URL`, `fallback`, `.assay/assay.db` under the working directory).

    Raises:
        UsageError: The location is a URL of a database assay cannot use.
    """
    source = "the store location"
    if location is None:
        location = os.environ.get(DATABASE_URL_ENV) or None
        source = f"${DATABASE_URL_ENV}"
    if location is None:
        location = fallback
        source = "the project's store"
    if location is None:
        location = Path.cwd() / DEFAULT_DB_PATH
    if isinstance(location, Path) or "://" not in location:
        # Absolute now: the store may be opened later, or by a process with its own directory.
        return StoreLocation(Path(location).expanduser().absolute(), source)
    where = StoreLocation(location, source)
    if where.backend not in ("postgresql", "sqlite"):
        # Only the scheme is echoed back: the rest of a database URL may hold a password.
        scheme = location.split("://", 1)[0].lower()
        raise UsageError(
            f"{source} uses the unsupported database scheme '{scheme}'; use a SQLite file "
            "(a path or sqlite:///path/to/assay.db) or PostgreSQL "
            "(postgresql+psycopg://user@host/dbname)"
        )
    return where
