"""Several processes opening and writing one fresh store file at once never see "locked"."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from assay.results import CaseResult, RunConfigSnapshot, RunResult, RunSummary
from assay.store import SQLiteStore

PROCESSES = 4
CASES = 30


def _writer(path: str, index: int) -> None:
    with SQLiteStore(path) as store:
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
            result = CaseResult(case_id=f"c{case}", score=1.0, verdict="pass", threshold=0.8)
            store.add_case_results(run.id, [result])
        store.finish_run(
            run.id,
            status="completed",
            finished_at="2026-01-01T00:01:00Z",
            summary=RunSummary(total=CASES),
            duration_ms=1.0,
            token_usage=None,
            cost_usd=None,
        )


def test_processes_racing_on_a_new_file(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(path, i)) for i in range(PROCESSES)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert [w.exitcode for w in workers] == [0] * PROCESSES
    with SQLiteStore(path) as store:
        runs = store.list_runs()
        assert sorted(r.id for r in runs) == [f"run-{i}" for i in range(PROCESSES)]
        for run in runs:
            assert run.status == "completed"
            assert len(list(store.iter_case_results(run.id))) == CASES
