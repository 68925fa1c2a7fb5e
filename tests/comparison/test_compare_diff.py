"""`assay.comparison.compare`: case statuses, suite numbers, the four thresholds at their bounds."""

from __future__ import annotations

import pytest

from assay.comparison import CompareThresholds, compare
from assay.errors import UsageError
from assay.results import RunResult, SchedulingStats
from tests.comparison._runs import case, run, same

ALL_OK = {"pass_rate": "ok", "avg_score": "ok", "latency": "ok"}


def rows(base_cases: list, head_cases: list, **thresholds: float) -> list[tuple]:
    result = compare(
        run("base", *base_cases),
        run("head", *head_cases),
        thresholds=CompareThresholds(**thresholds),
    )
    return [
        (c.case_id, c.status, c.base_verdict, c.head_verdict, c.base_score, c.head_score,
         c.score_delta)
        for c in result.cases
    ]  # fmt: skip


def test_every_case_status_and_the_rule_behind_it() -> None:
    base = [
        case("flip-down", "pass", 0.9),
        case("flip-up", "fail", 0.5),
        case("to-borderline", "pass", 0.85),
        case("to-error", "pass", 0.9),
        case("from-error", "error", None),
        case("fail-to-error", "fail", 0.5),
        case("error-to-fail", "error", None),
        case("error-both", "error", None),
        case("same", "pass", 0.9),
        case("pass-drop", "pass", 1.0),
        case("fail-rise", "fail", 0.2),
        case("borderline-to-fail", "borderline", 0.65),
        case("gone", "pass", 1.0),
    ]
    head = [
        case("fresh", "fail", 0.1),
        case("flip-down", "fail", 0.5),
        case("flip-up", "pass", 0.9),
        case("to-borderline", "borderline", 0.84),  # the flip counts, not the tiny score change
        case("to-error", "error", None),
        case("from-error", "pass", 0.9),
        case("fail-to-error", "error", None),
        case("error-to-fail", "fail", 0.4),
        case("error-both", "error", None),
        case("same", "pass", 0.9),
        case("pass-drop", "pass", 0.9),
        case("fail-rise", "fail", 0.4),
        case("borderline-to-fail", "fail", 0.62),
    ]
    assert rows(base, head) == [
        ("flip-down", "regressed", "pass", "fail", 0.9, 0.5, -0.4),
        ("flip-up", "improved", "fail", "pass", 0.5, 0.9, 0.4),
        ("to-borderline", "regressed", "pass", "borderline", 0.85, 0.84, -0.01),
        ("to-error", "regressed", "pass", "error", 0.9, None, None),
        ("from-error", "improved", "error", "pass", None, 0.9, None),
        ("fail-to-error", "regressed", "fail", "error", 0.5, None, None),
        ("error-to-fail", "improved", "error", "fail", None, 0.4, None),
        ("error-both", "unchanged", "error", "error", None, None, None),
        ("same", "unchanged", "pass", "pass", 0.9, 0.9, 0.0),
        ("pass-drop", "regressed", "pass", "pass", 1.0, 0.9, -0.1),
        ("fail-rise", "improved", "fail", "fail", 0.2, 0.4, 0.2),
        ("borderline-to-fail", "unchanged", "borderline", "fail", 0.65, 0.62, -0.03),
        ("gone", "removed", "pass", None, 1.0, None, None),
        ("fresh", "new", None, "fail", None, 0.1, None),
    ]
    counts = compare(run("b", *base), run("h", *head)).summary.case_counts
    assert counts == {"regressed": 5, "improved": 4, "unchanged": 3, "new": 1, "removed": 1}


@pytest.mark.parametrize(
    ("head_score", "status"),
    [
        pytest.param(0.76, "unchanged", id="below-bound"),
        pytest.param(0.75, "unchanged", id="at-bound"),  # 0.75 - 0.8 is -0.05000000000000004
        pytest.param(0.74, "regressed", id="above-bound-down"),
        pytest.param(0.85, "unchanged", id="at-bound-up"),
        pytest.param(0.86, "improved", id="above-bound-up"),
    ],
)
def test_case_score_delta_bound(head_score: float, status: str) -> None:
    [row] = rows([case("a", "fail", 0.8)], [case("a", "fail", head_score)])
    assert row[1] == status


def test_case_score_delta_is_overridable() -> None:
    [row] = rows([case("a", "pass", 0.9)], [case("a", "pass", 0.8)], case_score_delta=0.1)
    assert row[1] == "unchanged"
    [row] = rows([case("a", "pass", 0.9)], [case("a", "pass", 0.8)], case_score_delta=0.09)
    assert row[1] == "regressed"


def pass_rate_run(failing: int) -> list:
    """Ten cases scored 0.9 (score gate quiet), the first `failing` of them not passing."""
    return [case(f"c{i}", "fail" if i < failing else "pass", 0.9) for i in range(10)]


@pytest.mark.parametrize(
    ("failing", "reasons"),
    [
        pytest.param(0, [], id="no-drop"),
        pytest.param(1, [], id="at-bound"),
        pytest.param(2, ["pass rate dropped 20.0 points (allowed 10.0)"], id="above-bound"),
    ],
)
def test_max_pass_rate_drop_bound(failing: int, reasons: list[str]) -> None:
    limits = CompareThresholds(max_pass_rate_drop=0.1)
    result = compare(
        run("b", *pass_rate_run(0)), run("h", *pass_rate_run(failing)), thresholds=limits
    )
    assert result.summary.reasons == reasons
    assert result.summary.regression_detected is bool(reasons)
    assert result.summary.pass_rate_delta == -failing / 10
    assert result.summary.gates["pass_rate"] == ("regression" if reasons else "ok")


def test_the_default_pass_rate_gate_flags_any_drop() -> None:
    result = compare(run("b", *pass_rate_run(0)), run("h", *pass_rate_run(1)))
    assert result.summary.reasons == ["pass rate dropped 10.0 points (allowed 0.0)"]


@pytest.mark.parametrize(
    ("head_score", "reasons"),
    [
        pytest.param(0.76, [], id="below-bound"),
        pytest.param(0.75, [], id="at-bound"),
        pytest.param(0.74, ["average score dropped 6.0 points (allowed 5.0)"], id="above-bound"),
        pytest.param(0.7499, ["average score dropped 5.01 points (allowed 5.00)"], id="just-above"),
    ],
)
def test_max_avg_score_drop_bound(head_score: float, reasons: list[str]) -> None:
    result = compare(run("b", *same(10, "pass", 0.8)), run("h", *same(10, "pass", head_score)))
    assert result.summary.reasons == reasons
    assert result.summary.base_avg_score == 0.8
    assert result.summary.head_avg_score == head_score


@pytest.mark.parametrize(
    ("head_ms", "reasons"),
    [
        pytest.param(119.9, [], id="below-bound"),
        pytest.param(120.0, [], id="at-bound"),
        pytest.param(120.1, ["mean case latency rose 20.1% (allowed 20.0%)"], id="above-bound"),
    ],
)
def test_max_latency_increase_pct_bound(head_ms: float, reasons: list[str]) -> None:
    base, head = same(4, "pass", 0.9, ms=100.0), same(4, "pass", 0.9, ms=head_ms)
    result = compare(run("b", *base), run("h", *head))
    assert result.summary.reasons == reasons
    assert result.summary.latency_increase_pct == round(head_ms - 100.0, 12)


def test_thresholds_are_overridable_and_reported() -> None:
    limits = CompareThresholds(
        max_pass_rate_drop=0.5, max_avg_score_drop=0.5, max_latency_increase_pct=300
    )
    base = same(4, "pass", 0.9, ms=100.0)
    head = [
        *same(2, "fail", 0.5, ms=350.0),
        case("c2", "pass", 0.5, 350.0),
        case("c3", "pass", 0.5, 350.0),
    ]
    result = compare(run("b", *base), run("h", *head), thresholds=limits)
    assert result.summary.regression_detected is False
    assert result.model_dump()["thresholds"] == {
        "max_pass_rate_drop": 0.5,
        "max_avg_score_drop": 0.5,
        "max_latency_increase_pct": 300.0,
        "case_score_delta": 0.05,
    }
    loose = CompareThresholds(max_pass_rate_drop=0.5, max_avg_score_drop=0.5)
    assert compare(run("b", *base), run("h", *head), thresholds=loose).summary.reasons == [
        "mean case latency rose 250.0% (allowed 20.0%)"
    ]


def test_every_violated_gate_gives_one_reason() -> None:
    base, head = same(4, "pass", 0.9, ms=100.0), same(4, "fail", 0.5, ms=150.0)
    assert compare(run("b", *base), run("h", *head)).summary.reasons == [
        "pass rate dropped 100.0 points (allowed 0.0)",
        "average score dropped 40.0 points (allowed 5.0)",
        "mean case latency rose 50.0% (allowed 20.0%)",
    ]


def test_a_regressed_case_alone_does_not_flag_a_regression() -> None:
    base = same(10, "pass", 1.0)
    head = [case("c0", "pass", 0.9), *base[1:]]
    result = compare(run("b", *base), run("h", *head))
    assert result.summary.case_counts["regressed"] == 1
    assert (result.summary.regression_detected, result.summary.reasons) == (False, [])
    assert result.summary.avg_score_delta == -0.01


def test_pass_rate_counts_every_case_of_each_run_and_errors_are_not_passes() -> None:
    base = [case("a", "pass", 1.0), case("b", "error", None), case("c", "borderline", 0.7)]
    head = [case("a", "pass", 1.0), case("b", "pass", 0.9), case("d", "pass", 0.8),
            case("e", "fail", 0.2)]  # fmt: skip
    s = compare(run("b", *base), run("h", *head)).summary
    assert (s.base_pass_rate, s.head_pass_rate, s.pass_rate_delta) == (
        0.333333333333,
        0.75,
        0.416666666667,
    )
    # the average score leaves out the error (no score), never counting it as 0
    assert (s.base_avg_score, s.head_avg_score, s.avg_score_delta) == (0.85, 0.725, -0.125)
    assert (s.base_cases, s.head_cases) == (3, 4)


def test_the_whole_result_shape() -> None:
    base = [case("a", "pass", 0.9, ms=200.0), case("b", "pass", 0.8, ms=100.0)]
    head = [case("a", "pass", 0.9, ms=210.0), case("b", "fail", 0.4, ms=120.0)]
    assert compare(run("b1", *base), run("h1", *head)).model_dump(mode="json") == {
        "base": "b1",
        "head": "h1",
        "thresholds": {
            "max_pass_rate_drop": 0.0,
            "max_avg_score_drop": 0.05,
            "max_latency_increase_pct": 20.0,
            "case_score_delta": 0.05,
        },
        "require_significance": False,
        "summary": {
            "base_pass_rate": 1.0,
            "head_pass_rate": 0.5,
            "pass_rate_delta": -0.5,
            "base_avg_score": 0.85,
            "head_avg_score": 0.65,
            "avg_score_delta": -0.2,
            "latency_increase_pct": 10.0,
            "regression_detected": True,
            "reasons": [
                "pass rate dropped 50.0 points (allowed 0.0)",
                "average score dropped 20.0 points (allowed 5.0)",
            ],
            "notes": [],
            "base_cases": 2,
            "head_cases": 2,
            "base_mean_latency_ms": 150.0,
            "head_mean_latency_ms": 165.0,
            "case_counts": {"regressed": 1, "improved": 0, "unchanged": 1, "new": 0, "removed": 0},
            "gates": {"pass_rate": "regression", "avg_score": "regression", "latency": "ok"},
        },
        "cases": [
            {
                "case_id": "a",
                "status": "unchanged",
                "base_verdict": "pass",
                "head_verdict": "pass",
                "base_score": 0.9,
                "head_score": 0.9,
                "score_delta": 0.0,
            },
            {
                "case_id": "b",
                "status": "regressed",
                "base_verdict": "pass",
                "head_verdict": "fail",
                "base_score": 0.8,
                "head_score": 0.4,
                "score_delta": -0.4,
            },
        ],
        "statistics": {
            "mean_delta_ci95": [-0.4, 0.0],
            "mcnemar_p": 1.0,
            "mean_delta": -0.2,
            "paired_cases": 2,
            "resamples": 10_000,
            "seed": 20_251_123,
            "pass_to_not_pass": 1,
            "not_pass_to_pass": 0,
        },
        "warnings": [],
    }


def test_streamed_cases_win_over_run_results() -> None:
    base, head = run("b", case("x", "pass", 1.0)), run("h", case("x", "pass", 1.0))
    result = compare(
        base,
        head,
        base_cases=iter([case("a", "pass", 1.0)]),
        head_cases=(c for c in [case("a", "fail", 0.0)]),
    )
    assert [(c.case_id, c.status) for c in result.cases] == [("a", "regressed")]


def test_i21_8_runs_with_no_case_in_common_are_refused() -> None:
    with pytest.raises(UsageError) as err:
        compare(run("b", case("a", "pass", 1.0)), run("h", case("x", "pass", 1.0)))
    assert str(err.value) == (
        "base run b (suite 'demo', 1 case) and head run h (suite 'demo', 1 case) have no case "
        "id in common, so there is nothing to compare. Compare two runs of the same suite "
        "(e.g. `assay compare latest~1 latest --suite NAME`)."
    )
    with pytest.raises(UsageError, match=r"\(suite 'demo', 0 cases\) .* no case id in common"):
        compare(run("b"), run("h"))  # two empty runs: nothing to measure either


def test_i21_8_runs_of_different_suites_compare_with_a_warning() -> None:
    other = run("h", case("a", "pass", 1.0)).model_copy(update={"suite": "other"})
    result = compare(run("b", case("a", "pass", 1.0)), other)
    assert result.warnings == [
        "comparing runs of different suites ('demo' and 'other'): only cases with the same id "
        "are paired"
    ]
    assert result.summary.regression_detected is False


def _with_cached(result: RunResult, cached: int | None, cache_hits: int = 0) -> RunResult:
    stats = SchedulingStats(
        target_concurrency=4,
        target_concurrency_final=4,
        target_concurrency_lowest=4,
        cache_hits=cache_hits,
        cached_cases=cached,
    )
    return result.model_copy(update={"scheduling": stats})


def test_i21_1_compare_warns_when_the_cached_shares_differ() -> None:
    base = _with_cached(run("b", *same(4, "pass", 1.0)), 0)
    head = _with_cached(run("h", *same(4, "pass", 1.0)), 3)
    warning = (
        "the runs answered different shares of their cases from the response cache: "
        "BASE 0% (0 of 4), HEAD 75% (3 of 4). A cached case repeats a recorded reply and its "
        "recorded latency; run both with --no-cache (or both with the same cache) to compare "
        "fresh replies"
    )
    assert compare(base, head).warnings == [warning]
    assert compare(base, _with_cached(head, 0)).warnings == []
    everything = _with_cached(run("h", *same(4, "pass", 1.0)), 4)
    assert compare(_with_cached(base, 4), everything).warnings == []
    # A run made before cases were marked, which used the cache: its latency cannot be trusted.
    old = _with_cached(run("b", *same(4, "pass", 1.0)), None, cache_hits=4)
    assert compare(old, head).warnings == [
        "BASE run b answered 4 calls from the response cache and was made before assay "
        "recorded which cases were cached (their latency is the cache lookup's, not the "
        "target's): its latency and cached replies do not compare"
    ]
    assert compare(run("b", *same(4, "pass", 1.0)), head).warnings == []  # nothing known


def test_no_recorded_latency_skips_the_latency_gate() -> None:
    result = compare(run("b", *same(2, "pass", 1.0, ms=0.0)), run("h", *same(2, "pass", 1.0)))
    assert result.summary.latency_increase_pct is None
    assert result.summary.gates == {**ALL_OK, "latency": "skipped"}


def test_a_duplicate_case_id_is_a_usage_error() -> None:
    with pytest.raises(UsageError) as err:
        compare(run("b", case("a", "pass", 1.0), case("a", "fail", 0.0)), run("h"))
    assert str(err.value) == (
        "run 'b' has two results for case 'a': a run can be compared only when its case ids "
        "are unique"
    )


def test_unknown_threshold_names_say_did_you_mean() -> None:
    with pytest.raises(ValueError, match="Did you mean 'max_pass_rate_drop'"):
        CompareThresholds.model_validate({"max_pass_rate_dorp": 0.1})


def test_i21_3_an_old_error_row_with_a_score_does_not_enter_the_means() -> None:
    from assay.results import CaseScore

    base, head = run("b", case("x", "pass", 1.0)), run("h", case("x", "pass", 1.0))
    result = compare(
        base,
        head,
        base_cases=[CaseScore("x", "pass", 1.0, 10.0), CaseScore("y", "pass", 1.0, 10.0)],
        # A row stored before errors lost their score: verdict error, score 1.0.
        head_cases=[CaseScore("x", "fail", 0.5, 10.0), CaseScore("y", "error", 1.0, 10.0)],
    )
    assert result.summary.head_avg_score == 0.5
    assert [(c.case_id, c.head_score) for c in result.cases] == [("x", 0.5), ("y", None)]


def test_i21_1_a_sub_millisecond_latency_rise_is_noted_not_gated() -> None:
    """A fast function's 0.025 → 0.036 ms (+44%) is timer noise; 10 → 13 ms still fails."""
    fast = compare(
        run("b", *same(4, "pass", 0.9, ms=0.025)), run("h", *same(4, "pass", 0.9, ms=0.036))
    )
    assert (fast.summary.regression_detected, fast.summary.reasons) == (False, [])
    assert fast.summary.gates["latency"] == "ok"
    assert fast.summary.notes == [
        "mean case latency rose 44.0% (allowed 20.0%), not flagged: by 0.011 ms, under 1 ms"
    ]
    slow = compare(
        run("b", *same(4, "pass", 0.9, ms=10.0)), run("h", *same(4, "pass", 0.9, ms=13.0))
    )
    assert slow.summary.reasons == ["mean case latency rose 30.0% (allowed 20.0%)"]
