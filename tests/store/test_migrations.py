"""Run-store migrations: applied on open, stamped for pre-migration databases, cheap when
current, and producing exactly the schema the store's queries are written against."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, inspect, make_url, select, text
from tests.store.test_store_runs import MakeRun

from assay.errors import UsageError
from assay.results import CaseResult, CaseScore
from assay.store import SQLiteStore, SQLStore, open_store
from assay.store._migrate import HEAD_REVISION, current_revision
from assay.store._tables import (
    CASE_LEVEL,
    expected_outcome_results,
    grader_results,
    metadata,
    runs,
    samples,
)

MIGRATIONS = Path(__file__).resolve().parents[2] / "src" / "assay" / "store" / "migrations"


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def _schema_at(engine: Engine, revision: str) -> None:
    """Bring an empty database to an older revision, as an older assay left it."""
    config = _config()
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, revision)


def test_head_revision_is_the_newest_migration() -> None:
    assert ScriptDirectory.from_config(_config()).get_current_head() == HEAD_REVISION


def test_a_new_store_is_migrated_to_exactly_the_tables_the_code_uses(store: SQLStore) -> None:
    assert current_revision(store.engine) == HEAD_REVISION
    with store.engine.connect() as conn:
        differences = compare_metadata(MigrationContext.configure(conn), metadata)
    assert differences == []


def test_the_migrations_build_exactly_the_tables_a_new_store_is_created_with(
    location: str, db_path: Path
) -> None:
    # A new store is created from the metadata directly; replaying every migration on an empty
    # database must give the same schema, or existing stores would differ from new ones.
    db_path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(location if "://" in location else f"sqlite:///{db_path}")
    _schema_at(engine, "head")
    assert current_revision(engine) == HEAD_REVISION
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []
    engine.dispose()


def test_a_store_of_the_first_revision_is_upgraded_and_its_results_made_queryable(
    location: str, db_path: Path, make_run: MakeRun
) -> None:
    db_path.parent.mkdir(parents=True, exist_ok=True)
    url = location if "://" in location else f"sqlite:///{db_path}"
    engine = create_engine(url)
    _schema_at(engine, "0001")
    case = CaseResult.model_validate(
        {
            "case_id": "a",
            "score": 0.5,
            "verdict": "fail",
            "threshold": 0.8,
            "duration_ms": 12.5,
            "grader_results": [{"name": "g", "type": "contains", "score": 0.5, "verdict": "fail"}],
            "samples": [
                {
                    "index": 0,
                    "score": 0.5,
                    "verdict": "fail",
                    "expected_outcome_results": [{"outcome": "o", "passed": False}],
                }
            ],
        }
    )
    run = make_run("old-run")
    row = {
        "id": run.id,
        "suite": run.suite,
        "target": run.target,
        "status": "completed",
        "started_at": run.started_at,
        "config": json.dumps(run.config.model_dump()),
        "snapshot": "{}",
        "summary": json.dumps(run.summary.model_copy(update={"passed": True}).model_dump()),
        "duration_ms": 1.0,
        "assay_version": "0.0.1",
    }
    with engine.begin() as conn:
        columns = ", ".join(row)
        values = ", ".join(f":{key}" for key in row)
        conn.execute(text(f"INSERT INTO runs ({columns}) VALUES ({values})"), row)
        conn.execute(
            text(
                "INSERT INTO case_results (run_id, seq, case_id, verdict, score, data) "
                "VALUES ('old-run', 1, 'a', 'fail', 0.5, :data)"
            ),
            {"data": case.model_dump_json()},
        )
    engine.dispose()

    with open_store(location) as store:
        assert isinstance(store, SQLStore)
        assert store.get_run("old-run", include_results=True).results == [case]
        with store.engine.connect() as conn:
            graders = conn.execute(
                select(
                    grader_results.c.case_id,
                    grader_results.c.sample_index,
                    grader_results.c.name,
                    grader_results.c.verdict,
                )
            ).all()
            outcomes = conn.execute(
                select(expected_outcome_results.c.sample_index, expected_outcome_results.c.passed)
            ).all()
            sample_rows = conn.execute(select(samples.c.sample_index, samples.c.verdict)).all()
            passed = conn.execute(select(runs.c.passed)).scalar_one()
        baseline = store.last_passing_run(run.suite, run.target, before="9999")
        scores = list(store.iter_case_scores("old-run"))
    assert [tuple(r) for r in graders] == [("a", CASE_LEVEL, "g", "fail")]
    assert [tuple(r) for r in outcomes] == [(0, False)]
    assert [tuple(r) for r in sample_rows] == [(0, "fail")]
    assert passed is True
    assert scores == [CaseScore("a", "fail", 0.5, 12.5)]
    assert baseline is not None and baseline.id == "old-run"


def test_a_store_made_before_migrations_is_stamped_and_keeps_its_runs(
    tmp_path: Path, make_run: MakeRun
) -> None:
    path = tmp_path / "old.db"
    engine = create_engine(f"sqlite:///{path}")
    _schema_at(engine, "0001")  # the tables versions before migrations made, unversioned
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE alembic_version"))
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


@pytest.mark.parametrize("exists", [True, False], ids=["current", "new"])
def test_opening_a_current_or_new_store_does_not_import_alembic(
    tmp_path: Path, exists: bool
) -> None:
    path = tmp_path / "runs.db"
    if exists:
        SQLiteStore(path).close()
    probe = (
        "import sys; from assay.store import SQLiteStore; from assay.store._migrate import "
        f"current_revision; s = SQLiteStore({str(path)!r}); "
        "print('alembic' in sys.modules, current_revision(s.engine)); s.close()"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", HEAD_REVISION]


def test_a_store_from_a_newer_assay_is_refused_with_what_to_do(store: SQLStore) -> None:
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '0099'"))
    with pytest.raises(UsageError) as info:
        open_store(store.describe() if "://" in store.describe() else Path(store.describe()))
    assert str(info.value) == (
        f"the run store {store.describe()} has schema version 0099, written by a newer assay "
        f"than this one (which knows up to {HEAD_REVISION}); upgrade assay (pip install -U "
        "assay) to use it"
    )


def _engine_of(location: str) -> Engine:
    if "://" in location:
        return create_engine(location)
    Path(location).parent.mkdir(parents=True, exist_ok=True)
    return create_engine(f"sqlite:///{location}")


@pytest.mark.parametrize(
    "schema",
    [
        "CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT)",
        "CREATE TABLE runs (id INTEGER PRIMARY KEY, pipeline TEXT)",  # a `runs` not assay's
    ],
    ids=["users", "runs"],
)
def test_i22_12_a_database_of_another_application_is_refused_and_left_alone(
    location: str, schema: str
) -> None:
    engine = _engine_of(location)
    with engine.begin() as conn:
        conn.execute(text(schema))
        before = sorted(inspect(conn).get_table_names())
    engine.dispose()
    with pytest.raises(UsageError) as info:
        open_store(location)
    where = location if "://" not in location else make_url(location).render_as_string()
    table = "users" if "users" in schema else "runs"
    place = where if "://" not in location else f"{where} (schema public)"
    assert str(info.value) == (
        f"{place} is not an assay run store: it holds other tables ({table}), and assay does "
        "not add its tables to another application's database. Point --db (or "
        "$ASSAY_DATABASE_URL, or the project's `store:`) at a new file or an empty database"
    )
    engine = _engine_of(location)
    with engine.connect() as conn:
        assert sorted(inspect(conn).get_table_names()) == before  # nothing added
    engine.dispose()


def test_i22_12_an_empty_database_and_an_assay_store_still_open(location: str) -> None:
    open_store(location).close()  # empty: created
    with open_store(location) as store:  # stamped: opened
        assert store.list_runs() == []
