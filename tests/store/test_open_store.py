"""Choosing the store from a location, an environment variable or the default path."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from assay.errors import UsageError
from assay.store import DEFAULT_DB_PATH, PostgresStore, SQLiteStore, Store, open_store


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


def test_a_postgres_url_opens_a_postgres_store(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_DATABASE_URL", postgres_url)
    with open_store(None) as store:
        assert isinstance(store, PostgresStore)
        assert store.list_runs() == []
    # The plain scheme is taken as psycopg 3, the driver assay installs.
    plain = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    with open_store(plain) as store:
        assert store.describe() == postgres_url


@pytest.mark.parametrize(
    "url",
    [
        "postgresql+psycopg://assay:s3cret@127.0.0.1:9/assay",
        "postgres://assay:s3cret@127.0.0.1:9/assay",
    ],
)
def test_an_unreachable_postgres_server_is_a_usage_error_without_the_password(url: str) -> None:
    with pytest.raises(UsageError) as info:
        open_store(url)
    message = str(info.value)
    assert message.startswith(
        "cannot open the run store postgresql+psycopg://assay:***@127.0.0.1:9/assay: "
    )
    assert message.endswith(
        "Check that the server is running, the database exists, and the "
        "user may create tables in it."
    )
    assert "s3cret" not in message


def test_another_postgres_driver_or_no_database_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ASSAY_DATABASE_URL", "postgresql+psycopg2://u:pw@h/d")
    with pytest.raises(UsageError, match=r"^\$ASSAY_DATABASE_URL asks for the driver "):
        open_store(None)
    with pytest.raises(UsageError, match="names no database"):
        open_store("postgresql://u:pw@h")


def test_a_missing_driver_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "psycopg" else real(name, *a)
    )
    with pytest.raises(UsageError, match=r"pip install 'assay\[postgres\]'"):
        open_store("postgresql://u@127.0.0.1:9/d")


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


def test_the_environment_beats_the_project_store_and_a_location_beats_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = str(tmp_path / "project.db")
    with open_store(None, fallback=project) as store:
        assert isinstance(store, SQLiteStore) and store.path == tmp_path / "project.db"
    monkeypatch.setenv("ASSAY_DATABASE_URL", f"sqlite:///{tmp_path}/env.db")
    with open_store(None, fallback=project) as store:
        assert isinstance(store, SQLiteStore) and store.path == tmp_path / "env.db"
    with open_store(tmp_path / "flag.db", fallback=project) as store:
        assert isinstance(store, SQLiteStore) and store.path == tmp_path / "flag.db"
