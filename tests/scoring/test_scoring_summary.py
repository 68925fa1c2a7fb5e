"""SPEC §1.5: the run-level result, two independent dimensions, built incrementally."""

from __future__ import annotations

import pytest

from assay.results import (
    CaseResult,
    ErrorInfo,
    GraderResult,
    RunSummary,
    SampleResult,
    TokenUsage,
    TurnResult,
    Verdict,
)
from assay.scoring import (
    DEFAULT_CASES_PASS_THRESHOLD,
    DEFAULT_METRICS_PASS_THRESHOLD,
    JudgeSpend,
    SummaryBuilder,
    case_fallbacks,
)


def case(
    case_id: str,
    score: float | None,
    verdict: Verdict,
    graders: list[GraderResult] | None = None,
) -> CaseResult:
    """A case result whose judge fields are counted from its graders, as the runner does."""
    spend = JudgeSpend().add(graders or [])
    return CaseResult(
        case_id=case_id,
        score=score,
        verdict=verdict,
        threshold=0.8,
        borderline=0.6,
        grader_results=graders or [],
        judge_calls=spend.calls,
        judge_errors=spend.errors,
        judge_token_usage=spend.token_usage,
        judge_cost_usd=spend.cost_usd,
    )


def summarise(*cases: CaseResult, **thresholds: float) -> RunSummary:
    builder = SummaryBuilder(**thresholds)
    for c in cases:
        builder.add(c)
    return builder.build()


def judged(name: str, *, ok: bool = True, judge: str | None = "gpt-judge") -> GraderResult:
    return GraderResult(
        name=name,
        type="llm-grader" if judge else "contains",
        score=0.9 if ok else None,
        verdict="pass" if ok else "error",
        judge_model=judge,
        error=None if ok else ErrorInfo(type="JudgeError", message="unusable reply"),
    )


def test_default_run_thresholds() -> None:
    assert DEFAULT_METRICS_PASS_THRESHOLD == 0.8
    assert DEFAULT_CASES_PASS_THRESHOLD == 1.0
    builder = SummaryBuilder()
    assert builder.metrics_pass_threshold == 0.8
    assert builder.cases_pass_threshold == 1.0


def test_distribution_counts_and_percentages() -> None:
    summary = summarise(
        case("a", 0.9, "pass"),
        case("b", 1.0, "pass"),
        case("c", 0.7, "borderline"),
        case("d", 0.3, "fail"),
        case("e", None, "error"),
    )
    assert summary == RunSummary(
        total=5,
        passed_count=2,
        borderline_count=1,
        failed_count=1,
        error_count=1,
        passed_pct=40.0,
        borderline_pct=20.0,
        failed_pct=20.0,
        error_pct=20.0,
        cases_pass_rate_pct=40.0,
        # mean of 0.9, 1.0, 0.7, 0.3 — the errored case is not a 0
        weighted_metrics_score_pct=72.5,
        metrics_passed=False,
        cases_passed=False,
        passed=False,
        judge_error_rate=0.0,
    )


def test_percentages_of_thirds_are_rounded() -> None:
    summary = summarise(case("a", 1.0, "pass"), case("b", 0.0, "fail"), case("c", 0.0, "fail"))
    assert summary.passed_pct == 33.3333
    assert summary.failed_pct == 66.6667
    assert summary.weighted_metrics_score_pct == 33.3333


def test_metrics_score_excludes_errored_cases() -> None:
    summary = summarise(case("a", 0.8, "pass"), case("b", None, "error"), case("c", 0.9, "pass"))
    assert summary.weighted_metrics_score_pct == 85.0
    assert summary.error_count == 1


def test_i21_3_an_error_case_never_carries_a_score() -> None:
    # Whoever builds the result (an older store's JSON included), `error` means no score.
    assert case("b", 0.1, "error").score is None
    stored = '{"case_id": "b", "score": 1.0, "verdict": "error", "threshold": 0.8}'
    assert CaseResult.model_validate_json(stored).score is None


def test_metrics_score_includes_failed_and_borderline_cases() -> None:
    summary = summarise(
        case("a", 1.0, "pass"), case("b", 0.6, "borderline"), case("c", 0.2, "fail")
    )
    assert summary.weighted_metrics_score_pct == 60.0


def test_cases_pass_rate_counts_errors_and_borderline_as_not_passed() -> None:
    summary = summarise(
        case("a", 1.0, "pass"),
        case("b", 0.79, "borderline"),
        case("c", None, "error"),
        case("d", 0.95, "pass"),
    )
    # passed / total executions, errors included in the denominator
    assert summary.cases_pass_rate_pct == 50.0


def test_all_borderline_is_zero_pass_rate() -> None:
    summary = summarise(case("a", 0.79, "borderline"), case("b", 0.79, "borderline"))
    assert summary.cases_pass_rate_pct == 0.0
    assert summary.weighted_metrics_score_pct == 79.0
    assert (summary.metrics_passed, summary.cases_passed, summary.passed) == (False, False, False)


def test_both_dimensions_exactly_at_their_thresholds_pass() -> None:
    summary = summarise(case("a", 0.7, "pass"), case("b", 0.9, "pass"))
    assert summary.weighted_metrics_score_pct == 80.0
    assert summary.cases_pass_rate_pct == 100.0
    assert (summary.metrics_passed, summary.cases_passed, summary.passed) == (True, True, True)


def test_metrics_just_under_threshold_fails_that_dimension() -> None:
    summary = summarise(case("a", 0.7, "pass"), case("b", 0.8998, "pass"))
    assert summary.weighted_metrics_score_pct == 79.99
    assert summary.cases_passed is True
    assert summary.metrics_passed is False
    assert summary.passed is False


def test_metrics_pass_but_cases_fail() -> None:
    # one case fails: 50% < the default 100%, while the mean score is 0.9
    summary = summarise(case("a", 1.0, "pass"), case("b", 0.8, "fail"))
    assert summary.weighted_metrics_score_pct == 90.0
    assert summary.cases_pass_rate_pct == 50.0
    assert (summary.metrics_passed, summary.cases_passed, summary.passed) == (True, False, False)


def test_cases_pass_but_metrics_fail() -> None:
    summary = summarise(case("a", 1.0, "pass"), case("b", 0.2, "fail"), cases_pass_threshold=0.5)
    assert summary.weighted_metrics_score_pct == 60.0
    assert summary.cases_pass_rate_pct == 50.0
    assert (summary.metrics_passed, summary.cases_passed, summary.passed) == (False, True, False)


def test_custom_thresholds_decide_both_dimensions() -> None:
    cases = (case("a", 0.9, "pass"), case("b", 0.5, "fail"), case("c", 0.7, "pass"))
    strict = summarise(*cases, metrics_pass_threshold=0.71, cases_pass_threshold=0.67)
    lenient = summarise(*cases, metrics_pass_threshold=0.7, cases_pass_threshold=0.66)
    assert strict.weighted_metrics_score_pct == 70.0
    assert strict.cases_pass_rate_pct == 66.6667
    assert (strict.metrics_passed, strict.cases_passed, strict.passed) == (False, False, False)
    assert (lenient.metrics_passed, lenient.cases_passed, lenient.passed) == (True, True, True)


def test_only_errored_cases_produce_no_metrics_and_do_not_pass() -> None:
    summary = summarise(
        case("a", None, "error"),
        case("b", None, "error"),
        metrics_pass_threshold=0.0,
        cases_pass_threshold=0.0,
    )
    assert summary.error_count == 2
    assert summary.error_pct == 100.0
    assert summary.weighted_metrics_score_pct == 0.0
    assert summary.metrics_passed is False  # no case produced a verdict to measure
    assert summary.cases_passed is True  # 0% ≥ 0%
    assert summary.passed is False


def test_empty_run() -> None:
    assert SummaryBuilder().build() == RunSummary(
        total=0,
        passed_count=0,
        borderline_count=0,
        failed_count=0,
        error_count=0,
        passed_pct=0.0,
        borderline_pct=0.0,
        failed_pct=0.0,
        error_pct=0.0,
        cases_pass_rate_pct=0.0,
        weighted_metrics_score_pct=0.0,
        metrics_passed=False,
        cases_passed=False,
        passed=False,
        judge_error_rate=0.0,
    )


def test_build_reflects_cases_added_since_the_last_build() -> None:
    builder = SummaryBuilder()
    builder.add(case("a", 1.0, "pass"))
    first = builder.build()
    builder.add(case("b", 0.0, "fail"))
    second = builder.build()
    assert (first.total, first.passed) == (1, True)
    assert (second.total, second.failed_count, second.passed) == (2, 1, False)


# ---- judge_error_rate ----------------------------------------------------------------------


def test_judge_error_rate_counts_only_judged_graders() -> None:
    summary = summarise(
        case(
            "a",
            0.9,
            "pass",
            [judged("j1"), judged("j2", ok=False), judged("det", ok=False, judge=None)],
        )
    )
    # the deterministic grader's error is not a judge error: 1 of 2 judge calls failed
    assert summary.judge_error_rate == 0.5


def test_judge_error_rate_includes_nested_children() -> None:
    inner = GraderResult(
        name="inner",
        type="composite",
        score=0.9,
        verdict="pass",
        children=[judged("deep-ok"), judged("deep-bad", ok=False)],
    )
    outer = GraderResult(
        name="outer",
        type="composite",
        score=0.9,
        verdict="pass",
        children=[judged("child-ok"), inner],
    )
    summary = summarise(
        case("a", 0.9, "pass", [outer]),
        case("b", None, "error", [judged("top-bad", ok=False)]),
    )
    # judge calls: child-ok, deep-ok, deep-bad, top-bad → 2 errors of 4
    assert summary.judge_error_rate == 0.5


def test_judged_composite_counts_itself_and_its_children() -> None:
    parent = judged("parent")
    parent = parent.model_copy(update={"children": [judged("kid", ok=False)]})
    summary = summarise(case("a", 0.9, "pass", [parent]))
    assert summary.judge_error_rate == 0.5


def test_judge_error_rate_across_cases() -> None:
    summary = summarise(
        case("a", 0.9, "pass", [judged("j"), judged("k")]),
        case("b", 0.9, "pass", [judged("j", ok=False)]),
    )
    assert summary.judge_error_rate == pytest.approx(1 / 3)


def test_judge_tokens_and_cost_are_summed_apart_from_the_targets() -> None:
    spent = judged("j").model_copy(
        update={"token_usage": TokenUsage(input=100, output=20), "cost_usd": 0.002}
    )
    target_spend = {"token_usage": TokenUsage(input=5, output=5), "cost_usd": 1.0}
    a = case("a", 0.9, "pass", [spent, judged("det", judge=None)]).model_copy(update=target_spend)
    b = case("b", 0.9, "pass", [spent])
    summary = summarise(a, b)
    assert summary.judge_calls == 2
    assert summary.judge_token_usage == TokenUsage(input=200, output=40)
    assert summary.judge_cost_usd == pytest.approx(0.004)


def test_no_judge_calls_is_zero_judge_error_rate() -> None:
    summary = summarise(case("a", None, "error", [judged("det", ok=False, judge=None)]))
    assert summary.judge_error_rate == 0.0


def fell_back(name: str, kind: str, **fields: object) -> GraderResult:
    return GraderResult(
        name=name,
        type=kind,
        fallback=f"{kind} fell back",
        **fields,  # type: ignore[arg-type]
    )


def test_i21_10_judge_fallbacks_are_counted_per_sample_turn_and_member() -> None:
    factuality = fell_back("facts", "factuality", score=0.9, verdict="pass")
    outcomes = fell_back(
        "expected_outcomes",
        "expected-outcomes",
        score=None,
        verdict="error",
        weight=0.0,
        error=ErrorInfo(type="JudgeError", message="HTTP 503"),
    )
    tone = fell_back("tone", "tone", score=1.0, verdict="pass")
    composite = GraderResult(
        name="all", type="composite", score=1.0, verdict="pass", children=[tone]
    )
    once = case("once", 0.9, "pass", [factuality, outcomes, composite])
    repeated = CaseResult(
        case_id="repeated",
        score=0.9,
        verdict="pass",
        threshold=0.8,
        grader_results=[factuality],
        samples=[
            SampleResult(index=0, score=0.9, verdict="pass", grader_results=[factuality]),
            SampleResult(index=1, score=0.9, verdict="pass", grader_results=[factuality, tone]),
        ],
    )
    talk = CaseResult(
        case_id="talk",
        score=0.9,
        verdict="pass",
        threshold=0.8,
        grader_results=[tone],
        turns=[
            TurnResult(index=0, input="hi", score=0.9, verdict="pass", grader_results=[tone]),
            TurnResult(index=1, input="and?", score=0.9, verdict="pass", grader_results=[tone]),
        ],
    )
    assert [(f.where, f.grader) for f in case_fallbacks(once)] == [
        ("", "facts"),
        ("", "expected_outcomes"),
        ("", "all › tone"),
    ]
    assert [(f.where, f.grader) for f in case_fallbacks(repeated)] == [
        ("sample 0", "facts"),
        ("sample 1", "facts"),
        ("sample 1", "tone"),
    ]
    assert [f.where for f in case_fallbacks(talk)] == ["turn 0", "turn 1"]
    # An error case rests on no fallback: it is counted as an error, not as a fallback.
    broken = case("broken", None, "error", [factuality])
    summary = summarise(once, repeated, talk, broken)
    assert summary.judge_fallback_count == 3 + 3 + 2
    assert summarise(case("plain", 0.9, "pass", [judged("j")])).judge_fallback_count == 0
