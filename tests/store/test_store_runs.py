"""Listing filters, deletion and a created run's scheduling record (`assay runs`)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from assay.errors import UsageError
from assay.results import CaseResult, RunResult, SchedulingStats
from assay.store import SQLStore

MakeRun = Callable[..., RunResult]
MakeCase = Callable[..., CaseResult]


def test_list_runs_filters_by_target_status_and_start_date(
    store: SQLStore, make_run: MakeRun
) -> None:
    runs = {
        "r1": ("2025-01-01T10:00:00Z", "bot-a", "running"),
        "r2": ("2025-02-01T10:00:00Z", "bot-b", "completed"),
        "r3": ("2025-03-01T10:00:00Z", "bot-a", "completed"),
    }
    for run_id, (at, target, status) in runs.items():
        run = make_run(run_id, started_at=at).model_copy(update={"target": target})
        store.create_run(run.model_copy(update={"status": status}), {})
    assert [r.id for r in store.list_runs(target="bot-a")] == ["r3", "r1"]
    assert [r.id for r in store.list_runs(status="completed")] == ["r3", "r2"]
    assert [r.id for r in store.list_runs(since="2025-02-01")] == ["r3", "r2"]
    assert [r.id for r in store.list_runs(until="2025-02-01T10:00:00Z")] == ["r1"]
    assert [r.id for r in store.list_runs(since="2025-01-15", until="2025-02-15")] == ["r2"]


def test_delete_run_removes_it_and_its_results_only(
    store: SQLStore, make_run: MakeRun, make_case: MakeCase
) -> None:
    store.create_run(make_run("keep-1"), {})
    store.create_run(make_run("gone-1", results=[make_case("a"), make_case("b")]), {})
    store.add_case_result("keep-1", make_case("a"))
    assert store.delete_run("gone", force=True) == "gone-1"  # a unique prefix is enough
    assert [r.id for r in store.list_runs()] == ["keep-1"]
    assert [c.case_id for c in store.iter_case_results("keep-1")] == ["a"]
    with pytest.raises(UsageError, match="gone-1"):
        store.get_run("gone-1")


def test_a_created_run_keeps_its_scheduling_record(store: SQLStore, make_run: MakeRun) -> None:
    scheduling = SchedulingStats(
        target_concurrency=8, target_concurrency_final=4, target_concurrency_lowest=2, retries=3
    )
    store.create_run(make_run().model_copy(update={"scheduling": scheduling}), {})
    assert store.get_run("run-0001").scheduling == scheduling
