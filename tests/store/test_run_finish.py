"""`RunFinish`: the one value every store's `finish_run` takes."""

from __future__ import annotations

import inspect
import pickle
from collections.abc import Callable

import pytest

from assay.results import RunResult, RunSummary, SchedulingStats, TokenUsage
from assay.store import (
    DeferredStore,
    MemorySink,
    ResultSink,
    RunFinish,
    SQLStore,
    Store,
    StoreWriter,
)


@pytest.mark.parametrize(
    "store", [ResultSink, Store, SQLStore, MemorySink, DeferredStore, StoreWriter]
)
def test_every_store_finishes_a_run_from_one_run_finish_value(store: type) -> None:
    parameters = list(inspect.signature(store.finish_run).parameters.values())[1:]
    assert [p.name for p in parameters[:2]] == ["run_id", "finish"]
    assert parameters[1].annotation in (RunFinish, "RunFinish")
    # Only the SQL store takes more: the writer process's owner check, keyword-only.
    assert all(p.kind is p.KEYWORD_ONLY for p in parameters[2:])


def test_a_run_finish_taken_from_a_run_gives_it_back_to_a_running_copy(
    make_run: Callable[..., RunResult],
) -> None:
    running = make_run("run-0001")
    finished = running.model_copy(
        update={
            "status": "completed",
            "finished_at": "2025-01-02T03:09:00Z",
            "summary": RunSummary(total=3, passed_count=3, passed=True),
            "duration_ms": 12.5,
            "token_usage": TokenUsage(input=10, output=2),
            "cost_usd": 0.25,
            "scheduling": SchedulingStats(
                target_concurrency=4, target_concurrency_final=4, target_concurrency_lowest=2
            ),
        }
    )
    finish = RunFinish.of(finished)
    assert pickle.loads(pickle.dumps(finish)) == finish
    assert finish.applied_to(running) == finished
