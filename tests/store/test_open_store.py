"""Choosing the store from a location, an environment variable or the default path."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import UsageError
from assay.store import DEFAULT_DB_PATH, SQLiteStore, Store, open_store


@pytest.fixture(autouse=True)
def _no_database_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)


def opened_path(location: str | Path | None) -> Path:
    store: Store = open_store(location)
    try:
        assert isinstance(store, SQLiteStore)
        return store.path
    finally:
        store.close()


def test_default_is_under_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert Path(".assay/assay.db") == DEFAULT_DB_PATH
    assert opened_path(None) == tmp_path / ".assay" / "assay.db"
    assert (tmp_path / ".assay" / "assay.db").is_file()


def test_an_empty_environment_variable_means_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASSAY_DATABASE_URL", "")
    assert opened_path(None) == tmp_path / ".assay" / "assay.db"


def test_plain_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert opened_path(tmp_path / "p.db") == tmp_path / "p.db"
    assert opened_path(str(tmp_path / "s.db")) == tmp_path / "s.db"
    assert opened_path("rel/r.db") == tmp_path / "rel" / "r.db"


def test_sqlite_urls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert opened_path(f"sqlite:///{tmp_path}/abs.db") == tmp_path / "abs.db"
    assert opened_path("sqlite:///rel.db") == tmp_path / "rel.db"
    assert opened_path(f"sqlite+pysqlite:///{tmp_path}/driver.db") == tmp_path / "driver.db"


def test_environment_variable_when_no_location(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASSAY_DATABASE_URL", f"sqlite:///{tmp_path}/from-env.db")
    assert opened_path(None) == tmp_path / "from-env.db"
    # An explicit location wins over the environment.
    assert opened_path(tmp_path / "explicit.db") == tmp_path / "explicit.db"
    assert not (tmp_path / ".assay").exists()


@pytest.mark.parametrize(
    "url",
    [
        "postgresql+psycopg://assay:s3cret@db.internal:5432/assay",
        "postgresql://localhost/assay",
        "postgres://u:p@h/d",
    ],
)
def test_postgres_is_not_supported_yet(url: str) -> None:
    with pytest.raises(UsageError) as info:
        open_store(url)
    message = str(info.value)
    scheme = url.split("://", maxsplit=1)[0]
    assert message == (
        f"the store location is a PostgreSQL URL ('{scheme}://...'), and PostgreSQL run "
        "stores are not supported yet: they arrive with the store migration work, together "
        "with the extra to install then (pip install 'assay[postgres]'). For now use a SQLite "
        "file: a path or sqlite:///path/to/assay.db."
    )
    assert "s3cret" not in message


def test_postgres_from_the_environment_names_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ASSAY_DATABASE_URL", "postgresql+psycopg://u:pw@h/d")
    with pytest.raises(UsageError, match=r"^\$ASSAY_DATABASE_URL is a PostgreSQL URL"):
        open_store(None)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("mysql://u:pw@h/d", "uses the unsupported database scheme 'mysql'"),
        ("sqlite://", "names an in-memory SQLite database"),
        ("sqlite:///:memory:", "names an in-memory SQLite database"),
        ("sqlite:///x.db?mode=ro", "carries URL query parameters (mode)"),
    ],
)
def test_unusable_urls(url: str, expected: str) -> None:
    with pytest.raises(UsageError) as info:
        open_store(url)
    assert expected in str(info.value)
    assert "pw" not in str(info.value)
