"""SPEC §1.2 (min_score / required) and §1.3 (case score and case verdict) through score_case."""

from __future__ import annotations

import pytest

from assay.results import ErrorInfo, ExpectedOutcomeResult, GraderResult
from assay.scoring import (
    CaseBands,
    CaseOutcome,
    WeightedAverage,
    grader_verdict,
    score_case,
)

THRESHOLD = 0.8
BANDS = CaseBands(threshold=THRESHOLD, borderline=0.6)
NO_BAND = CaseBands(threshold=THRESHOLD, borderline=None)
AVG = WeightedAverage()


def graded(
    name: str,
    score: float,
    *,
    weight: float = 1.0,
    required: bool = False,
    min_score: float | None = None,
    threshold: float = THRESHOLD,
) -> GraderResult:
    """A grader result whose verdict follows SPEC §1.2 for the given case threshold."""
    return GraderResult(
        name=name,
        type="fake",
        score=score,
        verdict=grader_verdict(score, min_score, threshold),
        weight=weight,
        required=required,
        min_score=min_score,
    )


def errored(name: str, *, weight: float = 1.0, required: bool = False) -> GraderResult:
    return GraderResult(
        name=name,
        type="fake",
        score=None,
        verdict="error",
        weight=weight,
        required=required,
        error=ErrorInfo(type="JudgeError", message="reply was not JSON"),
    )


def outcome(passed: bool, text: str = "the refund is offered") -> ExpectedOutcomeResult:
    return ExpectedOutcomeResult(outcome=text, passed=passed, justification="")


# ---- §1.2 table: min_score and required are independent ------------------------------------


def test_min_score_only_failing_grader_verdict() -> None:
    g = graded("m", 0.65, min_score=0.7)
    assert g.verdict == "fail"


def test_min_score_only_passes_under_the_case_threshold() -> None:
    assert graded("m", 0.75, min_score=0.7).verdict == "pass"


def test_min_score_only_failing_contributes_normally() -> None:
    results = [graded("m", 0.6, min_score=0.7), graded("other", 1.0)]
    assert results[0].verdict == "fail"
    result = score_case(results, aggregator=AVG, bands=BANDS)
    # (0.6 + 1.0) / 2 — the failing grader is averaged in, nothing is zeroed
    assert result == CaseOutcome(pytest.approx(0.8), "pass", None, False)


def test_required_only_grader_verdict_uses_case_threshold() -> None:
    assert graded("r", 0.79, required=True).verdict == "fail"
    assert graded("r", 0.8, required=True).verdict == "pass"


def test_required_only_failing_zeroes_case_score() -> None:
    results = [graded("r", 0.75, required=True), graded("other", 1.0)]
    assert results[0].verdict == "fail"
    result = score_case(results, aggregator=AVG, bands=BANDS)
    assert result == CaseOutcome(0.0, "fail", None, True)


def test_required_only_passing_contributes_normally() -> None:
    results = [graded("r", 0.85, required=True), graded("other", 0.5)]
    result = score_case(results, aggregator=AVG, bands=BANDS)
    assert result.score == pytest.approx(0.675)
    assert result.verdict == "borderline"
    assert result.required_gate_failed is False


def test_min_score_and_required_grader_verdict_uses_min_score() -> None:
    assert graded("b", 0.69, required=True, min_score=0.7).verdict == "fail"
    assert graded("b", 0.7, required=True, min_score=0.7).verdict == "pass"


def test_min_score_and_required_failing_zeroes_case_score() -> None:
    results = [graded("b", 0.65, required=True, min_score=0.7), graded("other", 1.0)]
    result = score_case(results, aggregator=AVG, bands=BANDS)
    assert result == CaseOutcome(0.0, "fail", None, True)


def test_min_score_and_required_passing_under_case_threshold_contributes_normally() -> None:
    # 0.75 < case threshold 0.8, but ≥ min_score 0.7: the gate holds
    results = [graded("b", 0.75, required=True, min_score=0.7), graded("other", 0.95)]
    result = score_case(results, aggregator=AVG, bands=BANDS)
    assert result == CaseOutcome(pytest.approx(0.85), "pass", None, False)


def test_neither_grader_verdict_uses_case_threshold() -> None:
    assert graded("n", 0.79).verdict == "fail"
    assert graded("n", 0.8).verdict == "pass"


def test_neither_failing_contributes_normally() -> None:
    results = [graded("n", 0.7), graded("other", 1.0)]
    assert results[0].verdict == "fail"
    result = score_case(results, aggregator=AVG, bands=BANDS)
    assert result == CaseOutcome(pytest.approx(0.85), "pass", None, False)


def test_required_gate_applies_on_top_of_any_aggregator() -> None:
    from assay.scoring import Maximum

    results = [graded("r", 0.5, required=True), graded("other", 1.0)]
    result = score_case(results, aggregator=Maximum(type="maximum"), bands=BANDS)
    assert (result.score, result.verdict, result.required_gate_failed) == (0.0, "fail", True)


# ---- §1.3 worked examples through the case -------------------------------------------------


def test_equal_weights_case_score_is_mean() -> None:
    results = [graded("a", 0.9), graded("b", 0.8), graded("c", 0.7)]
    result = score_case(results, aggregator=AVG, bands=BANDS)
    assert result.score == pytest.approx(0.8)
    assert result.verdict == "pass"


def test_weights_3_1_1_case_score() -> None:
    results = [graded("a", 0.9, weight=3), graded("b", 0.8), graded("c", 0.7)]
    result = score_case(results, aggregator=AVG, bands=BANDS)
    assert result.score == pytest.approx(0.84)
    assert result.verdict == "pass"


# ---- case verdict rule 1: error ------------------------------------------------------------


def test_target_error_is_case_error_with_no_score() -> None:
    target_error = ErrorInfo(type="TargetError", message="HTTP 500 after 3 retries")
    result = score_case([graded("a", 1.0)], aggregator=AVG, bands=BANDS, target_error=target_error)
    assert result == CaseOutcome(None, "error", target_error, False)


def test_target_error_with_no_grader_results() -> None:
    target_error = ErrorInfo(type="TimeoutError", message="timed out after 30s")
    result = score_case([], aggregator=AVG, bands=BANDS, target_error=target_error)
    assert result == CaseOutcome(None, "error", target_error, False)


def test_weighted_grader_error_is_case_error_never_fail_or_zero() -> None:
    results = [graded("a", 1.0), errored("judge"), graded("b", 1.0)]
    result = score_case(results, aggregator=AVG, bands=BANDS)
    assert result.verdict == "error"
    assert result.score is None
    assert result.error == ErrorInfo(
        type="JudgeError", message="grader 'judge': reply was not JSON"
    )


def test_weighted_grader_error_beats_failing_required_gate() -> None:
    results = [graded("r", 0.1, required=True), errored("judge")]
    result = score_case(results, aggregator=AVG, bands=BANDS)
    assert (result.score, result.verdict) == (None, "error")


def test_weighted_grader_error_beats_passing_expected_outcomes() -> None:
    result = score_case([errored("judge")], aggregator=AVG, bands=BANDS, outcomes=[outcome(True)])
    assert (result.score, result.verdict) == (None, "error")


def test_first_weighted_error_is_reported() -> None:
    first = GraderResult(
        name="first",
        type="fake",
        score=None,
        verdict="error",
        error=ErrorInfo(type="ValueError", message="bad"),
    )
    result = score_case([first, errored("second")], aggregator=AVG, bands=BANDS)
    assert result.error == ErrorInfo(type="ValueError", message="grader 'first': bad")


def test_weight_zero_grader_error_does_not_error_the_case() -> None:
    results = [graded("a", 0.9), errored("informational", weight=0)]
    result = score_case(results, aggregator=AVG, bands=BANDS)
    assert result == CaseOutcome(0.9, "pass", None, False)


def test_i21_10_unjudged_outcomes_fall_back_to_the_score_verdict() -> None:
    # SPEC §1.3 step 2: the judge could not produce the outcomes, so step 3 decides.
    why = ErrorInfo(type="JudgeError", message="outcomes could not be judged")
    passing = score_case(
        [graded("a", 1.0)], aggregator=AVG, bands=BANDS, outcomes=None, outcome_error=why
    )
    failing = score_case(
        [graded("a", 0.5)], aggregator=AVG, bands=BANDS, outcomes=None, outcome_error=why
    )
    assert (passing, failing) == (
        CaseOutcome(1.0, "pass", None, False),
        CaseOutcome(0.5, "fail", None, False),
    )


def test_i21_10_unjudged_outcomes_with_nothing_else_to_score_are_an_error() -> None:
    why = ErrorInfo(type="JudgeError", message="HTTP 503")
    shown = GraderResult(
        name="expected_outcomes",
        type="expected-outcomes",
        score=None,
        verdict="error",
        weight=0.0,
        error=why,
    )
    result = score_case([shown], aggregator=AVG, bands=BANDS, outcomes=None, outcome_error=why)
    assert result == CaseOutcome(
        None,
        "error",
        ErrorInfo(
            type="JudgeError",
            message="expected outcomes: HTTP 503 (no other grader to score the case)",
        ),
        False,
    )


# ---- case verdict rule 2: expected outcomes gate -------------------------------------------


def test_all_outcomes_pass_is_pass_even_with_low_score() -> None:
    result = score_case(
        [graded("a", 0.2)],
        aggregator=AVG,
        bands=BANDS,
        outcomes=[outcome(True), outcome(True, "apologises")],
    )
    assert result == CaseOutcome(0.2, "pass", None, False)


def test_one_outcome_failing_is_fail_with_score_still_recorded() -> None:
    result = score_case(
        [graded("a", 1.0), graded("b", 0.9)],
        aggregator=AVG,
        bands=BANDS,
        outcomes=[outcome(True), outcome(False, "apologises")],
    )
    assert result.verdict == "fail"
    assert result.score == pytest.approx(0.95)
    assert result.error is None


def test_outcomes_pass_but_required_grader_fails_is_fail() -> None:
    result = score_case(
        [graded("r", 0.5, required=True), graded("b", 1.0)],
        aggregator=AVG,
        bands=BANDS,
        outcomes=[outcome(True)],
    )
    assert result == CaseOutcome(0.0, "fail", None, True)


def test_outcomes_gate_never_gives_borderline() -> None:
    # a score in the borderline band does not matter when outcomes decide
    result = score_case([graded("a", 0.7)], aggregator=AVG, bands=BANDS, outcomes=[outcome(False)])
    assert (result.score, result.verdict) == (0.7, "fail")


def test_outcomes_only_case_score_is_fraction_of_passed_outcomes() -> None:
    result = score_case(
        [],
        aggregator=AVG,
        bands=BANDS,
        outcomes=[outcome(True), outcome(False), outcome(True), outcome(True)],
    )
    assert result == CaseOutcome(0.75, "fail", None, False)


def test_outcomes_with_only_weight_zero_graders() -> None:
    result = score_case(
        [graded("info", 0.0, weight=0)],
        aggregator=AVG,
        bands=BANDS,
        outcomes=[outcome(True), outcome(True)],
    )
    assert result == CaseOutcome(1.0, "pass", None, False)


def test_nothing_to_grade_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="weight > 0 or expected outcomes"):
        score_case([graded("info", 1.0, weight=0)], aggregator=AVG, bands=BANDS)


# ---- case verdict rule 3: bands ------------------------------------------------------------


@pytest.mark.parametrize(
    ("score", "bands", "expected"),
    [
        (0.8, BANDS, "pass"),  # at the threshold
        (0.79, BANDS, "borderline"),
        (0.6, BANDS, "borderline"),  # at the borderline bound
        (0.59, BANDS, "fail"),
        (0.7, NO_BAND, "fail"),  # band off
        (0.95, CaseBands(threshold=0.9, borderline=0.7), "pass"),
        (0.85, CaseBands(threshold=0.9, borderline=0.7), "borderline"),
        (0.69, CaseBands(threshold=0.9, borderline=0.7), "fail"),
        (0.5, CaseBands(threshold=0.5, borderline=None), "pass"),
    ],
)
def test_case_verdict_through_bands(score: float, bands: CaseBands, expected: str) -> None:
    result = score_case([graded("a", score)], aggregator=AVG, bands=bands)
    assert result == CaseOutcome(score, expected, None, False)  # type: ignore[arg-type]


def test_required_gate_zero_score_fails_even_with_band() -> None:
    results = [graded("r", 0.7, required=True), graded("b", 1.0)]
    result = score_case(results, aggregator=AVG, bands=BANDS)
    # (0.7 + 1.0) / 2 = 0.85 would pass; the gate makes it 0 → fail, not borderline
    assert (result.score, result.verdict) == (0.0, "fail")


def test_equal_weights_mean_exactly_at_threshold_passes() -> None:
    # Σ = 2.4 → 0.7999999999999999 in floats; a mean of 0.8 must pass a 0.8 threshold
    results = [graded("a", 0.7), graded("b", 0.8), graded("c", 0.9)]
    result = score_case(results, aggregator=AVG, bands=BANDS)
    assert result.score == pytest.approx(0.8)
    assert result.verdict == "pass"
