"""SPEC §1.4: reducing the samples of a repeated case."""

from __future__ import annotations

import math
import statistics

import pytest

from assay.results import ErrorInfo, SampleResult, Verdict
from assay.scoring import CaseBands, Reduction, reduce_samples, score_to_verdict, t_interval95

BANDS = CaseBands(threshold=0.8, borderline=0.6)


def t975_df2() -> float:
    """Student-t 0.975 quantile for 2 degrees of freedom, in closed form (no scipy)."""
    p = 0.975
    return (2 * p - 1) / math.sqrt(2 * p * (1 - p))


def sample(index: int, score: float, verdict: Verdict | None = None) -> SampleResult:
    return SampleResult(
        index=index, score=score, verdict=verdict or score_to_verdict(score, 0.8, 0.6)
    )


def failed_sample(index: int, message: str = "timed out after 30s") -> SampleResult:
    return SampleResult(
        index=index,
        score=None,
        verdict="error",
        error=ErrorInfo(type="TimeoutError", message=message),
    )


def test_closed_form_quantile_matches_the_published_table_value() -> None:
    assert t975_df2() == pytest.approx(4.302652729911275)


# ---- mean ----------------------------------------------------------------------------------


def test_mean_strategy_score_and_verdict_from_the_mean() -> None:
    samples = [sample(0, 0.6), sample(1, 0.8), sample(2, 1.0)]
    reduced = reduce_samples(samples, "mean", BANDS)
    assert reduced.score == pytest.approx(0.8)
    assert reduced.verdict == "pass"
    assert reduced.representative == 1  # the sample closest to the mean
    assert reduced.error is None
    assert reduced.ci95 is None


def test_mean_strategy_borderline() -> None:
    samples = [sample(0, 0.7), sample(1, 0.9), sample(2, 0.5)]
    reduced = reduce_samples(samples, "mean", BANDS)
    assert reduced.score == pytest.approx(0.7)
    assert reduced.verdict == "borderline"
    assert reduced.representative == 0


def test_mean_strategy_fail_even_if_one_sample_passes() -> None:
    reduced = reduce_samples([sample(0, 1.0), sample(1, 0.1), sample(2, 0.1)], "mean", BANDS)
    assert reduced.score == pytest.approx(0.4)
    assert reduced.verdict == "fail"


def test_mean_strategy_uses_the_case_bands() -> None:
    samples = [sample(0, 0.7), sample(1, 0.7)]
    assert reduce_samples(samples, "mean", CaseBands(0.7, None)).verdict == "pass"
    assert reduce_samples(samples, "mean", CaseBands(0.75, None)).verdict == "fail"


def test_single_sample_reduces_to_itself() -> None:
    reduced = reduce_samples([sample(0, 0.85)], "mean", BANDS)
    assert reduced == Reduction(0.85, "pass", 0, None, None)


# ---- pass_at_k / pass_all ------------------------------------------------------------------


def test_pass_at_k_keeps_the_best_sample() -> None:
    samples = [sample(0, 0.5), sample(1, 0.9), sample(2, 0.7)]
    reduced = reduce_samples(samples, "pass_at_k", BANDS)
    assert reduced == Reduction(0.9, "pass", 1)


def test_pass_all_keeps_the_worst_sample() -> None:
    samples = [sample(0, 0.9), sample(1, 0.5), sample(2, 0.7)]
    reduced = reduce_samples(samples, "pass_all", BANDS)
    assert reduced == Reduction(0.5, "fail", 1)


def test_pass_all_all_passing_is_pass() -> None:
    samples = [sample(0, 0.95), sample(1, 0.85), sample(2, 1.0)]
    assert reduce_samples(samples, "pass_all", BANDS) == Reduction(0.85, "pass", 1)


def test_best_and_worst_rank_by_verdict_before_score() -> None:
    # outcome-gated samples: a high score can fail and a low score can pass
    samples = [sample(0, 0.95, "fail"), sample(1, 0.4, "pass")]
    assert reduce_samples(samples, "pass_at_k", BANDS) == Reduction(0.4, "pass", 1)
    assert reduce_samples(samples, "pass_all", BANDS) == Reduction(0.95, "fail", 0)


# ---- confidence_interval -------------------------------------------------------------------


def test_confidence_interval_narrow_interval_matches_independent_computation() -> None:
    scores = [0.75, 0.8, 0.85]
    reduced = reduce_samples(
        [sample(i, s) for i, s in enumerate(scores)], "confidence_interval", BANDS
    )
    half = t975_df2() * statistics.stdev(scores) / math.sqrt(3)
    assert half == pytest.approx(4.302652729911275 * 0.05 / math.sqrt(3))
    assert reduced.score == pytest.approx(0.8)
    assert reduced.verdict == "pass"  # the verdict uses the mean
    assert reduced.ci95 is not None
    low, high = reduced.ci95
    assert low == pytest.approx(0.8 - half)
    assert high == pytest.approx(0.8 + half)
    assert low == pytest.approx(0.675793, abs=1e-6)
    assert high == pytest.approx(0.924207, abs=1e-6)


def test_confidence_interval_wide_interval_is_clipped_to_the_score_scale() -> None:
    scores = [0.6, 0.8, 1.0]
    reduced = reduce_samples(
        [sample(i, s) for i, s in enumerate(scores)], "confidence_interval", BANDS
    )
    half = t975_df2() * statistics.stdev(scores) / math.sqrt(3)  # 0.4968…
    assert reduced.score == pytest.approx(0.8)
    assert reduced.verdict == "pass"
    assert reduced.ci95 is not None
    low, high = reduced.ci95
    assert low == pytest.approx(0.8 - half)
    assert low == pytest.approx(0.303172, abs=1e-6)
    # 0.8 + half = 1.2968… lies outside the one 0 to 1 scale (SPEC §1 item 1)
    assert high == 1.0


def test_confidence_interval_lower_bound_clipped_at_zero() -> None:
    low, high = t_interval95([0.0, 0.2, 0.4])
    half = t975_df2() * 0.2 / math.sqrt(3)
    assert low == 0.0
    assert high == pytest.approx(0.2 + half)


def test_confidence_interval_verdict_uses_the_mean_not_the_interval() -> None:
    scores = [0.7, 0.75, 0.8]
    reduced = reduce_samples(
        [sample(i, s) for i, s in enumerate(scores)], "confidence_interval", BANDS
    )
    assert reduced.score == pytest.approx(0.75)
    assert reduced.verdict == "borderline"  # even though the interval reaches above 0.8
    assert reduced.ci95 is not None
    assert reduced.ci95[1] > 0.8


def test_t_interval_of_one_value_is_zero_width() -> None:
    assert t_interval95([0.7]) == (0.7, 0.7)


def test_t_interval_of_identical_values_is_zero_width() -> None:
    low, high = t_interval95([0.5, 0.5, 0.5, 0.5])
    assert (low, high) == (pytest.approx(0.5), pytest.approx(0.5))


def test_t_interval_four_values_uses_df_3() -> None:
    values = [0.5, 0.6, 0.7, 0.8]
    t975_df3 = 3.182446305284263  # published table value
    half = t975_df3 * statistics.stdev(values) / math.sqrt(4)
    low, high = t_interval95(values)
    assert low == pytest.approx(0.65 - half)
    assert high == pytest.approx(0.65 + half)


# ---- errored samples -----------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["mean", "pass_at_k", "pass_all", "confidence_interval"])
def test_i21_3_an_errored_sample_makes_the_case_error_without_a_score(strategy: str) -> None:
    # Two samples pass with 1.0: neither their mean nor the best of them stands for the case.
    samples = [sample(0, 1.0), failed_sample(1), sample(2, 1.0)]
    reduced = reduce_samples(samples, strategy, BANDS)  # type: ignore[arg-type]
    assert reduced == Reduction(
        None,
        "error",
        1,
        ErrorInfo(
            type="TimeoutError", message="1 of 3 samples errored; sample 1: timed out after 30s"
        ),
        None,
    )


def test_error_message_counts_every_errored_sample() -> None:
    samples = [failed_sample(0, "first"), sample(1, 1.0), failed_sample(2, "second")]
    reduced = reduce_samples(samples, "mean", BANDS)
    assert reduced.error is not None
    assert reduced.error.message == "2 of 3 samples errored; sample 0: first"


def test_all_samples_errored_has_no_score() -> None:
    reduced = reduce_samples([failed_sample(0), failed_sample(1)], "mean", BANDS)
    assert reduced.score is None
    assert reduced.verdict == "error"
    assert reduced.error is not None
    assert reduced.error.message.startswith("2 of 2 samples errored")


def test_errored_sample_without_error_info() -> None:
    samples = [sample(0, 1.0), SampleResult(index=1, score=None, verdict="error")]
    reduced = reduce_samples(samples, "mean", BANDS)
    assert reduced.error == ErrorInfo(type="SampleError", message="1 of 2 samples errored")


def test_no_samples_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="no samples"):
        reduce_samples([], "mean", BANDS)


# ---- outcome-gated mean --------------------------------------------------------------------


def test_outcome_gated_mean_verdict_from_fraction_of_passing_samples() -> None:
    # the outcomes gate decides each sample; the mean score is only observed
    samples = [sample(0, 0.3, "pass"), sample(1, 0.4, "pass"), sample(2, 0.9, "fail")]
    reduced = reduce_samples(samples, "mean", CaseBands(0.6, 0.5), outcome_gated=True)
    assert reduced.score == pytest.approx(1.6 / 3)
    assert reduced.verdict == "pass"  # 2/3 ≥ 0.6


def test_outcome_gated_mean_high_scores_but_failing_outcomes_fail() -> None:
    samples = [sample(0, 0.9, "pass"), sample(1, 0.9, "fail"), sample(2, 0.9, "fail")]
    reduced = reduce_samples(samples, "mean", BANDS, outcome_gated=True)
    assert reduced.score == pytest.approx(0.9)
    assert reduced.verdict == "fail"  # 1/3 < 0.8, and no borderline in a pass/fail gate


def test_outcome_gated_fraction_exactly_at_threshold_passes() -> None:
    samples = [sample(i, 0.5, "pass" if i < 4 else "fail") for i in range(5)]
    reduced = reduce_samples(samples, "mean", BANDS, outcome_gated=True)
    assert reduced.verdict == "pass"  # 4/5 = 0.8


def test_outcome_gated_confidence_interval_reports_interval() -> None:
    samples = [sample(0, 0.75, "pass"), sample(1, 0.8, "pass"), sample(2, 0.85, "pass")]
    reduced = reduce_samples(samples, "confidence_interval", BANDS, outcome_gated=True)
    assert reduced.verdict == "pass"
    assert reduced.ci95 is not None
    assert reduced.ci95[0] == pytest.approx(0.8 - t975_df2() * 0.05 / math.sqrt(3))
