"""Concurrent writers: several processes open one fresh store and write runs at once.

On SQLite they must never see "database is locked"; on PostgreSQL they race on creating the
schema. Either way every result of every run is there afterwards, rows of the queryable
tables included.
"""

from __future__ import annotations

import multiprocessing

from sqlalchemy import func, select

from assay.results import CaseResult, GraderResult, RunConfigSnapshot, RunResult, RunSummary
from assay.store import RunFinish, SQLStore, open_store
from assay.store._tables import grader_results

PROCESSES = 4
CASES = 30


def _writer(location: str, index: int) -> None:
    with open_store(location) as store:
        run = RunResult(
            id=f"run-{index}",
            suite="s",
            target="t",
            status="running",
            started_at="2026-01-01T00:00:00Z",
            config=RunConfigSnapshot(
                threshold=0.8, borderline=0.6, metrics_pass_threshold=0.8, cases_pass_threshold=1.0
            ),
            summary=RunSummary(),
        )
        store.create_run(run, {})
        for case in range(CASES):
            grader = GraderResult(name="exact", type="equals", score=1.0, verdict="pass")
            result = CaseResult(
                case_id=f"c{case}",
                score=1.0,
                verdict="pass",
                threshold=0.8,
                grader_results=[grader, grader.model_copy(update={"name": "length"})],
            )
            store.add_case_results(run.id, [result])
        store.finish_run(
            run.id,
            RunFinish(
                status="completed",
                finished_at="2026-01-01T00:01:00Z",
                summary=RunSummary(total=CASES),
                duration_ms=1.0,
            ),
        )


def test_processes_racing_on_a_new_store_lose_nothing(location: str) -> None:
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(location, i)) for i in range(PROCESSES)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert [w.exitcode for w in workers] == [0] * PROCESSES
    with open_store(location) as store:
        assert isinstance(store, SQLStore)
        with store.engine.connect() as conn:
            graded = conn.execute(select(func.count()).select_from(grader_results)).scalar_one()
        assert graded == PROCESSES * CASES * 2
        runs = store.list_runs()
        assert sorted(r.id for r in runs) == [f"run-{i}" for i in range(PROCESSES)]
        for run in runs:
            assert run.status == "completed"
            assert len(list(store.iter_case_results(run.id))) == CASES
