"""The regression metric of a run (SPEC §6): baselines found in a real SQLite store, statuses,
per-case changes, the run verdict, and resume keeping its baseline."""

from __future__ import annotations

import asyncio
import importlib
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from assay.api import EvalConfig, evaluate, resume_run
from assay.comparison import (
    DEFAULT_CRITICAL_THRESHOLD,
    DEFAULT_REGRESSION_TOLERANCE,
    CompareThresholds,
)
from assay.config import LoadedSuite, load_project, parse_suite
from assay.config import _regression as config_regression
from assay.errors import UsageError
from assay.results import JSON, CaseResult, RegressionCase, RegressionResult, RunResult
from assay.runner import RunOptions, execute, plan_run
from assay.store import MemorySink, SQLiteStore

AGENT_SOURCE = """
import asyncio

BAD = set()        # case ids answered wrongly: score 0
PARTIAL = set()    # case ids answered half right: score 0.5, still a pass
started = []


async def answer(case):
    started.append(case["id"])
    await asyncio.sleep(case["metadata"].get("delay", 0))
    if case["id"] in BAD:
        return "bad"
    return "ok" if case["id"] not in PARTIAL else "o"


answer_too = answer
"""

CASES = [f"c{i:02d}" for i in range(20)]
"""Twenty equally weighted cases: each failing one moves the mean score by 5 points."""


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """A uniquely named agent module (fresh globals); sys.path/modules restored."""
    name = f"assay_regression_agent_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(AGENT_SOURCE), encoding="utf-8")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    importlib.invalidate_caches()
    yield importlib.import_module(name)
    sys.modules.pop(name, None)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    with SQLiteStore(tmp_path / "runs.db") as opened:
        yield opened


def suite(
    agent: ModuleType,
    cases: list[str] = CASES,
    *,
    regression: dict[str, JSON] | None = None,
    name: str = "reg",
    delay: float = 0.0,
    function: str = "answer",
) -> LoadedSuite:
    """A suite whose cases score 1.0 for "ok", 0.5 for "o" (a pass at threshold 0.4) and 0.0
    otherwise."""
    document: dict[str, JSON] = {
        "name": name,
        "target": {"type": "python", "function": f"{agent.__name__}:{function}"},
        "execution": {"metrics_pass_threshold": 0.5, "cases_pass_threshold": 0.5},
        "tests": [
            {
                "id": case_id,
                "input": case_id,
                "metadata": {"delay": delay},
                "assertions": [
                    {"type": "contains", "value": "o"},
                    {"type": "contains", "value": "k"},
                ],
                "execution": {"threshold": 0.4},
            }
            for case_id in cases
        ],
    }
    if regression is not None:
        document["regression"] = regression
    return parse_suite(document)


def run(
    loaded: LoadedSuite, sink: object, run_id: str | None = None, baseline: str | None = None
) -> RunResult:
    plan = plan_run(loaded, load_project(), RunOptions(baseline=baseline))
    return asyncio.run(execute(plan, sink, run_id=run_id))  # type: ignore[arg-type]


def changed(case_id: str, status: str, base: float | None, head: float | None) -> RegressionCase:
    """A changed case as the metric reports it (verdicts follow from the 0.4 threshold)."""

    def verdict(score: float | None) -> str | None:
        return None if score is None else ("pass" if score >= 0.4 else "fail")

    delta = None if base is None or head is None else round(head - base, 12)
    return RegressionCase.model_validate(
        {
            "case_id": case_id,
            "status": status,
            "base_verdict": verdict(base),
            "head_verdict": verdict(head),
            "base_score": base,
            "head_score": head,
            "score_delta": delta,
        }
    )


def counts(**given: int) -> dict[str, int]:
    return {"regressed": 0, "improved": 0, "unchanged": 0, "new": 0, "removed": 0, **given}


def test_the_config_defaults_are_the_compare_defaults() -> None:
    # The config layer cannot import compare; this keeps the two copies equal.
    assert config_regression.DEFAULT_TOLERANCE == DEFAULT_REGRESSION_TOLERANCE
    assert config_regression.DEFAULT_CRITICAL_THRESHOLD == DEFAULT_CRITICAL_THRESHOLD
    assert CompareThresholds().case_score_delta == config_regression.DEFAULT_CASE_SCORE_DELTA


def test_a_first_run_is_new_and_records_its_baseline_settings(
    agent: ModuleType, store: SQLiteStore
) -> None:
    first = run(suite(agent, regression={"tolerance": 0.03}), store, run_id="run-1")
    assert first.regression == RegressionResult(
        status="new",
        strategy="last_passing",
        baseline_run_id=None,
        tolerance=0.03,
        critical_threshold=0.10,
        base_score=None,
        head_score=1.0,
        score_delta=None,
    )
    assert store.get_run("run-1").regression == first.regression
    assert store.get_snapshot("run-1")["regression"] == {
        "baseline": "last_passing",
        "baseline_run_id": None,
        "tolerance": 0.03,
        "critical_threshold": 0.10,
        "case_score_delta": 0.05,
    }
    assert first.passed


def test_without_a_block_or_option_there_is_no_metric(
    agent: ModuleType, store: SQLiteStore
) -> None:
    run(suite(agent), store, run_id="run-1")
    second = run(suite(agent), store, run_id="run-2")
    assert second.regression is None
    assert "regression" not in store.get_snapshot("run-2")


def test_an_equal_second_run_is_clean_against_the_first(
    agent: ModuleType, store: SQLiteStore
) -> None:
    loaded = suite(agent, regression={})
    run(loaded, store, run_id="run-1")
    second = run(loaded, store, run_id="run-2")
    assert second.regression is not None
    assert (second.regression.status, second.regression.baseline_run_id) == ("clean", "run-1")
    assert (second.regression.base_score, second.regression.score_delta) == (1.0, 0.0)
    assert second.regression.case_counts == counts(unchanged=20)
    assert second.regression.cases == []
    assert second.passed
    assert store.get_snapshot("run-2")["regression"]["baseline_run_id"] == "run-1"  # type: ignore[index]


def test_a_drop_between_tolerance_and_critical_is_a_warning(
    agent: ModuleType, store: SQLiteStore
) -> None:
    loaded = suite(agent, regression={})
    run(loaded, store, run_id="run-1")
    agent.BAD = {"c03"}
    second = run(loaded, store, run_id="run-2")
    regression = second.regression
    assert regression is not None
    assert (regression.status, regression.base_score, regression.head_score) == (
        "warning",
        1.0,
        0.95,
    )
    assert regression.score_delta == pytest.approx(-0.05)
    assert regression.case_counts == counts(regressed=1, unchanged=19)
    assert regression.cases == [changed("c03", "regressed", 1.0, 0.0)]
    assert second.passed  # a warning does not fail the run
    assert store.get_run("run-2").passed


def test_a_critical_drop_fails_the_run_and_is_never_the_next_baseline(
    agent: ModuleType, store: SQLiteStore
) -> None:
    loaded = suite(agent, regression={})
    run(loaded, store, run_id="run-1")
    agent.BAD = {"c03", "c04"}  # 10 points: critical at exactly the threshold
    second = run(loaded, store, run_id="run-2")
    assert second.regression is not None
    assert second.regression.status == "critical"
    assert second.summary.passed  # both §1.5 dimensions pass on their own ...
    assert not second.passed  # ... but the run fails
    assert not store.get_run("run-2").passed
    assert [c.case_id for c in second.regression.cases] == ["c03", "c04"]

    agent.BAD = set()
    third = run(loaded, store, run_id="run-3")
    assert third.regression is not None
    assert third.regression.baseline_run_id == "run-1"  # run-2 regressed, so it is skipped
    assert third.regression.status == "clean"


def test_last_passing_takes_the_same_target_only(agent: ModuleType, store: SQLiteStore) -> None:
    loaded = suite(agent, regression={})
    run(loaded, store, run_id="run-1")
    other = suite(agent, regression={}, function="answer_too")
    second = run(other, store, run_id="run-2")
    assert second.regression is not None
    assert (second.regression.status, second.target) == (
        "new",
        f"python {agent.__name__}:answer_too",
    )


def test_an_improvement_is_clean_and_lists_improved_cases(
    agent: ModuleType, store: SQLiteStore
) -> None:
    loaded = suite(agent, regression={})
    agent.BAD = {"c00"}
    run(loaded, store, run_id="run-1")
    agent.BAD = set()
    second = run(loaded, store, run_id="run-2")
    assert second.regression is not None
    assert second.regression.status == "clean"
    assert second.regression.cases == [changed("c00", "improved", 0.0, 1.0)]


def test_score_changes_without_a_flip_count_past_case_score_delta(
    agent: ModuleType, store: SQLiteStore
) -> None:
    run(suite(agent, regression={}), store, run_id="run-1")
    agent.PARTIAL = {"c01"}
    second = run(suite(agent, regression={}), store, run_id="run-2")
    assert second.regression is not None
    (case,) = second.regression.cases
    assert (case.case_id, case.status, case.base_verdict, case.head_verdict) == (
        "c01",
        "regressed",
        "pass",
        "pass",
    )
    assert case.score_delta == -0.5

    lenient = run(suite(agent, regression={"case_score_delta": 0.6}), store, run_id="run-3")
    assert lenient.regression is not None
    assert lenient.regression.baseline_run_id == "run-2"
    assert lenient.regression.cases == []
    assert lenient.regression.case_counts == counts(unchanged=20)


def test_removed_and_new_cases_are_counted(agent: ModuleType, store: SQLiteStore) -> None:
    run(suite(agent, ["a", "b", "c", "d"], regression={}), store, run_id="run-1")
    agent.BAD = {"b"}
    second = run(suite(agent, ["e", "b", "c", "f"], regression={}), store, run_id="run-2")
    regression = second.regression
    assert regression is not None
    assert regression.case_counts == counts(regressed=1, unchanged=1, new=2, removed=2)
    assert regression.cases == [  # the run's cases in suite order, then the removed ones
        changed("e", "new", None, 1.0),
        changed("b", "regressed", 1.0, 0.0),
        changed("f", "new", None, 1.0),
        changed("a", "removed", 1.0, None),
        changed("d", "removed", 1.0, None),
    ]
    # The status compares the two runs' mean scores: 1.0 then 0.75.
    assert (regression.status, regression.score_delta) == ("critical", -0.25)


def test_a_pinned_baseline_is_used_until_another_is_pinned(
    agent: ModuleType, store: SQLiteStore
) -> None:
    loaded = suite(agent, regression={"strategy": "pinned"})
    first = run(loaded, store, run_id="run-1")
    assert first.regression is not None
    assert (first.regression.status, first.regression.strategy) == ("new", "pinned")
    store.pin_baseline("run-1", pinned_at="2026-01-01T00:00:00Z")
    agent.BAD = {"c00"}
    second = run(loaded, store, run_id="run-2")
    agent.BAD = {"c00", "c01"}
    third = run(loaded, store, run_id="run-3")
    assert second.regression is not None and third.regression is not None
    assert (second.regression.baseline_run_id, second.regression.status) == ("run-1", "warning")
    # Against the pin, not the last passing run (run-2): 100 → 90 is critical.
    assert (third.regression.baseline_run_id, third.regression.status) == ("run-1", "critical")


def test_the_baseline_option_wins_over_the_block(agent: ModuleType, store: SQLiteStore) -> None:
    loaded = suite(agent, regression={"strategy": "pinned", "tolerance": 0.05})
    run(loaded, store, run_id="run-1")
    agent.BAD = {"c00"}
    second = run(loaded, store, run_id="run-2", baseline="last_passing")
    assert second.regression is not None
    assert (second.regression.strategy, second.regression.baseline_run_id) == (
        "last_passing",
        "run-1",
    )
    assert (second.regression.status, second.regression.tolerance) == ("clean", 0.05)


def test_the_option_enables_the_metric_with_the_default_bounds(
    agent: ModuleType, store: SQLiteStore
) -> None:
    run(suite(agent), store, run_id="run-1")
    agent.BAD = {"c00"}
    second = run(suite(agent), store, run_id="run-2", baseline="last_passing")
    assert second.regression is not None
    assert (second.regression.status, second.regression.tolerance) == ("warning", 0.02)
    assert second.regression.critical_threshold == 0.10


def test_an_explicit_run_id_or_prefix_is_the_baseline(
    agent: ModuleType, store: SQLiteStore
) -> None:
    loaded = suite(agent)
    run(loaded, store, run_id="base-run-1")
    run(loaded, store, run_id="base-run-2")
    agent.BAD = {"c00", "c01", "c02"}
    third = run(loaded, store, run_id="run-3", baseline="base-run-1")
    assert third.regression is not None
    assert (third.regression.strategy, third.regression.baseline_run_id) == ("run", "base-run-1")
    assert third.regression.status == "critical"
    fourth = run(loaded, store, run_id="run-4", baseline="run-3")
    assert fourth.regression is not None
    assert (fourth.regression.baseline_run_id, fourth.regression.status) == ("run-3", "clean")


def test_an_unknown_baseline_id_stops_the_run_before_any_case(
    agent: ModuleType, store: SQLiteStore
) -> None:
    run(suite(agent), store, run_id="run-1")
    agent.started.clear()
    with pytest.raises(UsageError) as raised:
        run(suite(agent), store, run_id="run-2", baseline="pinnd")
    assert str(raised.value) == (
        f"baseline: run 'pinnd' not found in {store.describe()}. Did you mean 'pinned'? "
        "Give `last_passing`, `pinned` or a stored run's id"
    )
    assert agent.started == []
    assert [r.id for r in store.list_runs()] == ["run-1"]


def test_a_baseline_of_another_suite_is_refused(agent: ModuleType, store: SQLiteStore) -> None:
    run(suite(agent, name="other"), store, run_id="other-1")
    with pytest.raises(UsageError, match="run 'other-1' belongs to suite 'other', not 'reg'"):
        run(suite(agent), store, run_id="run-2", baseline="other-1")
    assert [r.id for r in store.list_runs()] == ["other-1"]


def test_an_unfinished_run_is_refused_as_a_baseline(agent: ModuleType, store: SQLiteStore) -> None:
    cancel_midway(suite(agent, delay=0.02), store, "broken")
    with pytest.raises(UsageError, match="run 'broken' is interrupted, and only a completed"):
        run(suite(agent), store, run_id="run-2", baseline="broken")


def cancel_midway(loaded: LoadedSuite, store: SQLiteStore, run_id: str) -> None:
    """Start a run and cancel it after three cases, as Ctrl-C would."""
    plan = plan_run(loaded, load_project(), RunOptions(concurrency=1))

    async def main() -> None:
        enough = asyncio.Event()
        seen: list[str] = []

        def on_case(result: CaseResult) -> None:
            seen.append(result.case_id)
            if len(seen) >= 3:
                enough.set()

        task = asyncio.create_task(execute(plan, store, on_case=on_case, run_id=run_id))
        await enough.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


def test_an_interrupted_run_is_not_measured(agent: ModuleType, store: SQLiteStore) -> None:
    run(suite(agent, regression={}), store, run_id="run-1")
    cancel_midway(suite(agent, regression={}, delay=0.02), store, "run-2")
    stored = store.get_run("run-2")
    assert (stored.status, stored.regression) == ("interrupted", None)


def test_resume_keeps_the_baseline_the_run_started_with(
    agent: ModuleType, store: SQLiteStore
) -> None:
    loaded = suite(agent, regression={"strategy": "pinned"}, delay=0.02)
    run(loaded, store, run_id="run-1")
    store.pin_baseline("run-1", pinned_at="2026-01-01T00:00:00Z")
    agent.BAD = {"c00", "c01", "c02", "c10"}
    cancel_midway(loaded, store, "run-2")
    run(loaded, store, run_id="run-3")  # the same failures: pinned from now on
    store.pin_baseline("run-3", pinned_at="2026-01-02T00:00:00Z")

    resumed = asyncio.run(resume_run(store, "run-2", suite=loaded))
    assert resumed.regression is not None
    assert (resumed.regression.baseline_run_id, resumed.regression.status) == ("run-1", "critical")
    assert resumed.regression.case_counts == counts(regressed=4, unchanged=16)
    assert store.get_run("run-2").regression == resumed.regression


def test_an_in_memory_run_refuses_an_explicit_baseline(agent: ModuleType) -> None:
    with pytest.raises(UsageError, match="baseline 'last_passing' was requested, but this run"):
        run(suite(agent), MemorySink(), baseline="last_passing")
    assert agent.started == []
    with pytest.raises(UsageError, match=r"kept in memory \(EvalConfig\(store=False\)\)"):
        evaluate(suite(agent), config=EvalConfig(store=False, baseline="pinned"))


def test_an_in_memory_run_of_a_suite_with_a_block_skips_the_metric(agent: ModuleType) -> None:
    sink = MemorySink()
    result = run(suite(agent, regression={}), sink)
    assert result.regression is None
    assert "regression" not in sink.snapshot


def test_evaluate_takes_a_baseline(agent: ModuleType, tmp_path: Path) -> None:
    db = str(tmp_path / "api.db")
    evaluate(suite(agent), config=EvalConfig(store=db))
    agent.BAD = {"c00", "c01"}
    second = evaluate(suite(agent), config=EvalConfig(store=db, baseline="last_passing"))
    assert second.regression is not None
    assert second.regression.status == "critical"
    assert not second.passed
