"""The statistics of a comparison: exact McNemar, the paired bootstrap, `require_significance`."""

from __future__ import annotations

import math
import random

import pytest
from scipy.stats import binomtest

from assay.comparison import (
    BOOTSTRAP_SEED,
    CompareThresholds,
    bootstrap_resamples,
    compare,
    mcnemar_exact_p,
    paired_bootstrap_ci95,
)
from tests.comparison._runs import case, run, same


def test_mcnemar_for_ten_flips_one_way_and_one_the_other() -> None:
    # Exact two-sided binomial on 11 discordant pairs: 2 * (C(11,0) + C(11,1)) / 2**11
    assert mcnemar_exact_p(10, 1) == 2 * (1 + 11) / 2**11 == 0.01171875
    assert mcnemar_exact_p(1, 10) == 0.01171875
    assert binomtest(10, 11, 0.5).pvalue == 0.01171875


@pytest.mark.parametrize(
    ("b", "c"), [(1, 0), (0, 6), (5, 5), (6, 5), (20, 7), (300, 250), (3, 40), (1000, 1100)]
)
def test_mcnemar_equals_scipy_binomtest(b: int, c: int) -> None:
    assert mcnemar_exact_p(b, c) == pytest.approx(binomtest(b, b + c, 0.5).pvalue, rel=1e-9)


def test_mcnemar_without_flips_is_one() -> None:
    assert mcnemar_exact_p(0, 0) == 1.0


def test_bootstrap_interval_contains_the_true_delta() -> None:
    rng = random.Random(3)
    true_delta = 0.03
    deltas = [rng.gauss(true_delta, 0.1) for _ in range(400)]
    lo, hi = paired_bootstrap_ci95(deltas)  # type: ignore[misc]
    assert lo < true_delta < hi
    # A reproducible interval (fixed seed), close to the normal-theory one for this sample.
    assert (round(lo, 6), round(hi, 6)) == (0.012689, 0.032455)
    mean = sum(deltas) / len(deltas)
    sd = math.sqrt(sum((d - mean) ** 2 for d in deltas) / len(deltas))
    half = 1.96 * sd / math.sqrt(len(deltas))
    assert lo == pytest.approx(mean - half, abs=0.001)
    assert hi == pytest.approx(mean + half, abs=0.001)


def test_bootstrap_is_reproducible_and_seeded() -> None:
    deltas = [0.1, -0.2, 0.05, 0.3, 0.0, -0.1, 0.2]
    first = paired_bootstrap_ci95(deltas)
    assert paired_bootstrap_ci95(deltas) == first
    assert paired_bootstrap_ci95(deltas, seed=BOOTSTRAP_SEED + 1) != first


def test_bootstrap_of_nothing_and_of_constant_deltas() -> None:
    assert paired_bootstrap_ci95([]) is None
    assert paired_bootstrap_ci95([0.2]) == (0.2, 0.2)
    assert paired_bootstrap_ci95([-0.1, -0.1, -0.1]) == (-0.1, -0.1)


@pytest.mark.parametrize(
    ("pairs", "resamples"),
    [(0, 0), (1, 10_000), (10_000, 10_000), (20_000, 5_000), (100_000, 1_000), (10**6, 1_000)],
)
def test_resamples_shrink_only_for_large_runs(pairs: int, resamples: int) -> None:
    assert bootstrap_resamples(pairs) == resamples


def flips(lost: int, gained: int, steady: int = 20) -> tuple[list, list]:
    """Runs where `lost` cases flip pass→fail and `gained` fail→pass; every score stays 0.9
    so only the pass-rate gate can fire."""
    base = [case(f"l{i}", "pass", 0.9) for i in range(lost)]
    base += [case(f"g{i}", "fail", 0.9) for i in range(gained)]
    base += [case(f"s{i}", "pass", 0.9) for i in range(steady)]
    head = [case(f"l{i}", "fail", 0.9) for i in range(lost)]
    head += [case(f"g{i}", "pass", 0.9) for i in range(gained)]
    head += [case(f"s{i}", "pass", 0.9) for i in range(steady)]
    return base, head


def test_require_significance_flags_a_significant_pass_rate_drop() -> None:
    base, head = flips(10, 1)
    plain = compare(run("b", *base), run("h", *head)).summary
    assert plain.reasons == ["pass rate dropped 29.0 points (allowed 0.0)"]
    strict = compare(run("b", *base), run("h", *head), require_significance=True)
    assert strict.statistics.mcnemar_p == 0.01171875
    assert strict.summary.reasons == [
        "pass rate dropped 29.0 points (allowed 0.0); significant: McNemar p = 0.01172, "
        "10 pass→not-pass, 1 not-pass→pass"
    ]
    assert strict.summary.gates["pass_rate"] == "regression"


def test_require_significance_spares_a_pass_rate_drop_that_could_be_noise() -> None:
    base, head = flips(2, 0)
    assert compare(run("b", *base), run("h", *head)).summary.regression_detected is True
    strict = compare(run("b", *base), run("h", *head), require_significance=True).summary
    assert (strict.regression_detected, strict.reasons) == (False, [])
    assert strict.notes == [
        "pass rate dropped 9.1 points (allowed 0.0), not flagged: not significant "
        "(McNemar p = 0.5, 2 pass→not-pass, 0 not-pass→pass)"
    ]
    assert strict.gates["pass_rate"] == "not_significant"


def test_significant_flips_toward_passing_do_not_confirm_a_pass_rate_drop() -> None:
    # The rate drops because of new failing cases, while the paired flips improved.
    base, head = flips(0, 12)
    head += [case(f"n{i}", "fail", 0.9) for i in range(40)]
    strict = compare(run("b", *base), run("h", *head), require_significance=True)
    assert strict.statistics.mcnemar_p < 0.05
    assert strict.summary.pass_rate_delta is not None and strict.summary.pass_rate_delta < 0
    assert strict.summary.gates["pass_rate"] == "not_significant"


def score_runs(deltas: list[float]) -> tuple[list, list]:
    """Failing cases at 0.5 moved by `deltas` (no pass flips, latency unchanged)."""
    base = [case(f"c{i}", "fail", 0.5) for i in range(len(deltas))]
    head = [case(f"c{i}", "fail", round(0.5 + d, 6)) for i, d in enumerate(deltas)]
    return base, head


def test_require_significance_flags_a_consistent_score_drop() -> None:
    base, head = score_runs([-0.1, -0.08, -0.12, -0.09, -0.11, -0.1])
    strict = compare(run("b", *base), run("h", *head), require_significance=True)
    lo, hi = strict.statistics.mean_delta_ci95  # type: ignore[misc]
    assert hi < 0
    assert strict.summary.reasons == [
        "average score dropped 10.0 points (allowed 5.0); significant: 95% CI of the paired "
        f"mean score delta [{lo * 100:+.1f}, {hi * 100:+.1f}] points"
    ]
    assert (round(lo, 6), round(hi, 6)) == (-0.11, -0.09)


def test_require_significance_spares_a_noisy_score_drop() -> None:
    base, head = score_runs([0.3, -0.4, 0.2, -0.45, 0.1, -0.35])
    plain = compare(run("b", *base), run("h", *head))
    assert plain.summary.reasons == ["average score dropped 10.0 points (allowed 5.0)"]
    strict = compare(run("b", *base), run("h", *head), require_significance=True).summary
    assert strict.regression_detected is False
    assert strict.gates["avg_score"] == "not_significant"
    assert strict.notes == [
        "average score dropped 10.0 points (allowed 5.0), not flagged: not significant "
        "(95% CI of the paired mean score delta [-32.5, +13.3] points)"
    ]


def test_require_significance_without_paired_scores_flags_no_score_drop() -> None:
    # The one case in common errored in both runs: no case is scored in both.
    base = [*same(3, "fail", 0.5), case("x", "error", None)]
    head = [*(case(f"n{i}", "fail", 0.1) for i in range(3)), case("x", "error", None)]
    strict = compare(run("b", *base), run("h", *head), require_significance=True).summary
    assert strict.notes == [
        "average score dropped 40.0 points (allowed 5.0), not flagged: not significant "
        "(no case scored in both runs)"
    ]


def test_require_significance_leaves_the_latency_gate_alone() -> None:
    base, head = same(3, "pass", 0.9, ms=100.0), same(3, "pass", 0.9, ms=200.0)
    limits = CompareThresholds()
    strict = compare(run("b", *base), run("h", *head), thresholds=limits, require_significance=True)
    assert strict.summary.reasons == ["mean case latency rose 100.0% (allowed 20.0%)"]
    assert strict.require_significance is True
