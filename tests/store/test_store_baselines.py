"""Baselines, run verdicts and the queryable result rows, on every backend."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import select
from tests.store.test_store_contract import SUMMARY, finish

from assay.errors import UsageError
from assay.results import CaseResult, CaseScore, RegressionResult, RunResult
from assay.store import Baseline, RunFinish, SQLStore
from assay.store._tables import CASE_LEVEL, expected_outcome_results, grader_results, runs, samples

MakeRun = Callable[..., RunResult]
MakeCase = Callable[..., CaseResult]

PINNED_AT = "2026-11-23T10:00:00.000000Z"


def _completed(store: SQLStore, make_run: MakeRun, run_id: str, **fields: object) -> None:
    store.create_run(make_run(run_id, **fields), {})
    finish(store, run_id)


def test_pin_show_replace_and_unpin(store: SQLStore, make_run: MakeRun) -> None:
    _completed(store, make_run, "run-a")
    _completed(store, make_run, "run-b")
    _completed(store, make_run, "other", suite="other-suite")
    assert store.get_baseline("support-bot") is None

    assert store.pin_baseline("run-a", pinned_at=PINNED_AT) == Baseline(
        "support-bot", "run-a", PINNED_AT
    )
    store.pin_baseline("run-b", pinned_at=PINNED_AT, suite="support-bot")  # replaces run-a
    store.pin_baseline("other", pinned_at=PINNED_AT)
    assert store.get_baseline("support-bot") == Baseline("support-bot", "run-b", PINNED_AT)
    assert [b.suite for b in store.list_baselines()] == ["other-suite", "support-bot"]

    assert store.unpin_baseline("support-bot").run_id == "run-b"
    assert store.get_baseline("support-bot") is None
    with pytest.raises(UsageError, match="suite 'support-bot' has no pinned baseline"):
        store.unpin_baseline("support-bot")


def test_only_a_completed_run_of_the_same_suite_can_be_pinned(
    store: SQLStore, make_run: MakeRun
) -> None:
    store.create_run(make_run("live-run"), {})
    with pytest.raises(UsageError, match="run 'live-run' is running, and only a completed run"):
        store.pin_baseline("live-run", pinned_at=PINNED_AT)
    finish(store, "live-run", status="interrupted")
    with pytest.raises(UsageError, match="is interrupted"):
        store.pin_baseline("live-run", pinned_at=PINNED_AT)
    _completed(store, make_run, "done-run")
    with pytest.raises(UsageError, match="belongs to suite 'support-bot', not 'billing'"):
        store.pin_baseline("done", pinned_at=PINNED_AT, suite="billing")
    with pytest.raises(UsageError, match="not found"):
        store.pin_baseline("nope-nope", pinned_at=PINNED_AT)
    assert store.list_baselines() == []


def test_deleting_the_pinned_run_unpins_it(store: SQLStore, make_run: MakeRun) -> None:
    _completed(store, make_run, "run-a")
    store.pin_baseline("run-a", pinned_at=PINNED_AT)
    store.delete_run("run-a")
    assert store.get_baseline("support-bot") is None


def _passing_run(
    store: SQLStore,
    make_run: MakeRun,
    run_id: str,
    at: str,
    *,
    passed: bool = True,
    regression: RegressionResult | None = None,
    target: str | None = None,
) -> None:
    run = make_run(run_id, started_at=at)
    if target is not None:
        run = run.model_copy(update={"target": target})
    store.create_run(run, {})
    store.finish_run(
        run_id,
        RunFinish(
            status="completed",
            finished_at=at,
            summary=SUMMARY.model_copy(update={"passed": passed}),
            duration_ms=1.0,
            regression=regression,
        ),
    )


def _critical() -> RegressionResult:
    return RegressionResult(
        status="critical",
        strategy="last_passing",
        baseline_run_id="r1",
        tolerance=0.02,
        critical_threshold=0.1,
        base_score=0.9,
        head_score=0.5,
        score_delta=-0.4,
    )


def test_last_passing_run_skips_failed_critical_unfinished_and_later_runs(
    store: SQLStore, make_run: MakeRun
) -> None:
    _passing_run(store, make_run, "r1", "2026-01-01T00:00:00Z")
    _passing_run(store, make_run, "r2", "2026-01-02T00:00:00Z", passed=False)
    _passing_run(store, make_run, "r3", "2026-01-03T00:00:00Z", regression=_critical())
    _passing_run(store, make_run, "r4", "2026-01-04T00:00:00Z", target="another-model")
    store.create_run(make_run("r5", started_at="2026-01-05T00:00:00Z"), {})  # still running
    _passing_run(store, make_run, "r6", "2026-01-06T00:00:00Z")

    def last(before: str, exclude: str | None = None) -> str | None:
        found = store.last_passing_run(
            "support-bot", "openai:gpt-4o-mini", before=before, exclude=exclude
        )
        return None if found is None else found.id

    assert last("2026-01-05T12:00:00Z") == "r1"
    assert last("2026-01-07T00:00:00Z") == "r6"
    assert last("2026-01-07T00:00:00Z", exclude="r6") == "r1"
    assert last("2026-01-01T00:00:00Z") is None
    assert store.get_run("r3").regression == _critical()
    assert store.get_run("r3").passed is False


def test_a_reopened_run_has_no_verdict_until_it_finishes_again(
    store: SQLStore, make_run: MakeRun
) -> None:
    _passing_run(store, make_run, "r1", "2026-01-01T00:00:00Z")
    with store.engine.begin() as conn:  # as a run killed before its finish leaves it
        conn.execute(runs.update().values(status="interrupted"))
    store.reopen_run("r1")
    with store.engine.connect() as conn:
        assert conn.execute(select(runs.c.passed)).scalar_one() is None
    assert store.last_passing_run("support-bot", "openai:gpt-4o-mini", before="9") is None


def test_results_are_queryable_by_grader_sample_and_outcome(
    store: SQLStore, make_run: MakeRun, rich_cases: list[CaseResult]
) -> None:
    store.create_run(make_run(results=rich_cases[:1]), {})
    store.add_case_results("run-0001", rich_cases[1:])
    with store.engine.connect() as conn:
        graders = conn.execute(
            select(
                grader_results.c.case_id,
                grader_results.c.sample_index,
                grader_results.c.position,
                grader_results.c.name,
                grader_results.c.verdict,
                grader_results.c.score,
                grader_results.c.weight,
                grader_results.c.required,
                grader_results.c.judge_model,
            ).order_by(grader_results.c.case_id, grader_results.c.sample_index)
        ).all()
        sample_rows = conn.execute(
            select(
                samples.c.case_id, samples.c.sample_index, samples.c.verdict, samples.c.score
            ).order_by(samples.c.sample_index)
        ).all()
        outcomes = conn.execute(
            select(
                expected_outcome_results.c.case_id,
                expected_outcome_results.c.sample_index,
                expected_outcome_results.c.outcome,
                expected_outcome_results.c.passed,
            )
        ).all()
    assert [tuple(row) for row in graders] == [
        ("crashes", CASE_LEVEL, 0, "facts", "error", None, 1.0, False, None),
        ("flaky", 2, 0, "facts", "error", None, 1.0, False, None),
        (
            "refund-policy",
            CASE_LEVEL,
            0,
            "helpfulness",
            "borderline",
            0.1 + 0.2,
            2.5,
            True,
            "gpt-4o-mini",
        ),
    ]
    assert [tuple(row) for row in sample_rows] == [
        ("flaky", 0, "pass", 1.0),
        ("flaky", 1, "error", None),
        ("flaky", 2, "fail", 0.0),
    ]
    assert [tuple(row) for row in outcomes] == [
        ("refund-policy", CASE_LEVEL, "states the window", True)
    ]
    store.delete_run("run-0001", force=True)
    with store.engine.connect() as conn:
        for table in (grader_results, samples, expected_outcome_results):
            assert conn.execute(select(table)).all() == []


def test_case_scores_stream_from_columns_in_stored_order(
    store: SQLStore, make_run: MakeRun, rich_cases: list[CaseResult]
) -> None:
    store.create_run(make_run(results=rich_cases[:2]), {})
    store.add_case_results("run-0001", rich_cases[2:])
    assert list(store.iter_case_scores("run-0")) == [
        CaseScore(c.case_id, c.verdict, c.score, c.duration_ms) for c in rich_cases
    ]
    assert [s.duration_ms for s in store.iter_case_scores("run-0001")] == [812.5, 0.0, 0.0]
    with pytest.raises(UsageError, match="not found"):
        store.iter_case_scores("nope-nope")
