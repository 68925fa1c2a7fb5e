"""Run-store migrations: applied on open, stamped for pre-migration databases, cheap when
current, and producing exactly the schema the store's queries are written against."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, text
from tests.store.test_store_runs import MakeRun

from assay.results import CaseResult
from assay.store import SQLiteStore
from assay.store._migrate import HEAD_REVISION, current_revision
from assay.store._tables import metadata

MIGRATIONS = Path(__file__).resolve().parents[2] / "src" / "assay" / "store" / "migrations"


def test_head_revision_is_the_newest_migration() -> None:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    assert ScriptDirectory.from_config(config).get_current_head() == HEAD_REVISION


def test_a_new_store_is_migrated_to_exactly_the_tables_the_code_uses(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    SQLiteStore(path).close()
    engine = create_engine(f"sqlite:///{path}")
    assert current_revision(engine) == HEAD_REVISION
    with engine.connect() as conn:
        differences = compare_metadata(MigrationContext.configure(conn), metadata)
    engine.dispose()
    assert differences == []


def test_a_store_made_before_migrations_is_stamped_and_keeps_its_runs(
    tmp_path: Path, make_run: MakeRun
) -> None:
    path = tmp_path / "old.db"
    engine = create_engine(f"sqlite:///{path}")
    metadata.create_all(engine)  # what versions before migrations did
    engine.dispose()
    with SQLiteStore(path) as first:
        first.create_run(make_run("old-run"), {})
    with SQLiteStore(path) as store:  # reopened: the version row now exists
        assert [r.id for r in store.list_runs()] == ["old-run"]
        store.add_case_result(
            "old-run", CaseResult(case_id="a", score=1.0, verdict="pass", threshold=0.8)
        )
    engine = create_engine(f"sqlite:///{path}")
    assert current_revision(engine) == HEAD_REVISION
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM alembic_version")).scalar() == 1
    engine.dispose()


def test_opening_a_current_store_does_not_import_alembic(tmp_path: Path) -> None:
    path = tmp_path / "current.db"
    SQLiteStore(path).close()
    probe = (
        "import sys; from assay.store import SQLiteStore; "
        f"SQLiteStore({str(path)!r}).close(); print('alembic' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
