"""The in-memory result sink follows the same rules as the persistent store."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from assay.errors import UsageError
from assay.results import CaseResult, RunResult, RunSummary
from assay.store import MemorySink, ResultSink, RunFinish

MakeRun = Callable[..., RunResult]
MakeCase = Callable[..., CaseResult]


def finish(sink: MemorySink, run_id: str = "run-0001") -> None:
    sink.finish_run(
        run_id,
        RunFinish(
            status="completed",
            finished_at="2025-01-02T03:09:00Z",
            summary=RunSummary(total=2, passed_count=2, passed=True),
            duration_ms=12.5,
            cost_usd=0.5,
        ),
    )


def test_keeps_the_run_and_its_results_in_order(
    make_run: MakeRun, rich_cases: list[CaseResult]
) -> None:
    sink = MemorySink()
    as_protocol: ResultSink = sink  # the runner sees only the protocol
    run = make_run()
    as_protocol.create_run(run, {"suite": "support-bot"})
    for case in rich_cases:
        as_protocol.add_case_result(run.id, case)
    finish(sink)

    assert sink.results == rich_cases
    assert sink.snapshot == {"suite": "support-bot"}
    assert sink.run == run.model_copy(
        update={
            "status": "completed",
            "finished_at": "2025-01-02T03:09:00Z",
            "summary": RunSummary(total=2, passed_count=2, passed=True),
            "duration_ms": 12.5,
            "cost_usd": 0.5,
            "results": rich_cases,
        }
    )


def test_run_is_a_copy(make_run: MakeRun, make_case: MakeCase) -> None:
    sink = MemorySink()
    sink.create_run(make_run(), {})
    sink.run.results.append(make_case("intruder"))
    assert sink.results == []


def test_results_on_the_created_run_are_kept(make_run: MakeRun, make_case: MakeCase) -> None:
    sink = MemorySink()
    sink.create_run(make_run(results=[make_case("a")]), {})
    sink.add_case_result("run-0001", make_case("b"))
    assert [r.case_id for r in sink.run.results] == ["a", "b"]


def test_refusals(make_run: MakeRun, make_case: MakeCase) -> None:
    sink = MemorySink()
    with pytest.raises(UsageError, match="no run recorded yet"):
        _ = sink.run
    sink.create_run(make_run(), {})
    with pytest.raises(UsageError, match="already holds run 'run-0001'; use one sink per run"):
        sink.create_run(make_run("run-0002"), {})
    with pytest.raises(UsageError, match="run 'other': not found in this MemorySink"):
        sink.add_case_result("other", make_case("a"))
    sink.add_case_result("run-0001", make_case("a"))
    with pytest.raises(UsageError, match="already has a result for case 'a'"):
        sink.add_case_result("run-0001", make_case("a"))
    with pytest.raises(UsageError, match="with status 'running'"):
        sink.finish_run(
            "run-0001",
            RunFinish(status="running", finished_at="x", summary=RunSummary(), duration_ms=0.0),
        )
    finish(sink)
    with pytest.raises(UsageError, match=r"already finished \(status 'completed'\)"):
        sink.add_case_result("run-0001", make_case("b"))
    with pytest.raises(UsageError, match=r"^cannot finish run 'run-0001': it is already finished"):
        finish(sink)
    assert [r.case_id for r in sink.results] == ["a"]
    assert sink.run.status == "completed"
