"""Statistics that tell noise from a real change: a paired bootstrap and an exact McNemar test.

The threshold gates answer "did the numbers move more than I tolerate?"; these answer "could
a move this size be chance?". An LLM judge re-asked about the same output, or a sampled
target, moves scores on its own, so a drop of two points means little over ten cases and a
lot over ten thousand.

numpy and scipy are imported inside the functions: `import assay` and `assay --help` stay fast,
and a comparison with nothing to test never pays for them.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "BOOTSTRAP_DRAW_BUDGET",
    "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_SEED",
    "MIN_BOOTSTRAP_RESAMPLES",
    "bootstrap_resamples",
    "mcnemar_exact_p",
    "paired_bootstrap_ci95",
]

BOOTSTRAP_RESAMPLES = 10_000
"""Resamples of the paired bootstrap when the run is small enough to afford them."""

MIN_BOOTSTRAP_RESAMPLES = 1_000
"""The fewest resamples ever used: the usual floor for a percentile 95% interval."""

BOOTSTRAP_DRAW_BUDGET = 100_000_000
"""Resamples × paired cases above which the number of resamples is lowered (never below
`MIN_BOOTSTRAP_RESAMPLES`), so 100,000-case runs compare in about 1.5 s. The interval of
a large run is narrow, so the extra Monte Carlo noise of fewer resamples is small in absolute
terms."""

BOOTSTRAP_SEED = 20_251_123
"""Fixed seed: comparing the same two runs twice gives the same interval."""

_CHUNK_DRAWS = 1 << 20
"""Indices drawn per numpy call: large enough to amortise the call, small enough to stay in
cache instead of materialising resamples × cases indices at once."""


def bootstrap_resamples(pairs: int) -> int:
    """How many resamples the bootstrap of `pairs` paired cases uses (0 when there are none)."""
    if pairs <= 0:
        return 0
    return max(MIN_BOOTSTRAP_RESAMPLES, min(BOOTSTRAP_RESAMPLES, BOOTSTRAP_DRAW_BUDGET // pairs))


def paired_bootstrap_ci95(
    deltas: Sequence[float], *, resamples: int | None = None, seed: int = BOOTSTRAP_SEED
) -> tuple[float, float] | None:
    """Percentile 95% interval of the mean of paired score deltas (head − base per case).

    Pairing is what makes this sharper than comparing two run means: each case is its own
    control, so the spread of case difficulty cancels out and only the change is resampled.

    Args:
        deltas: One delta per case scored in both runs.
        resamples: Bootstrap resamples; `bootstrap_resamples(len(deltas))` when None.
        seed: Seed of the numpy generator, fixed so the interval is reproducible.

    Returns:
        `(low, high)`, or None when there are no deltas. One delta, or deltas that are all
        equal, give the degenerate interval `(d, d)`: every resample has the same mean.
    """
    n = len(deltas)
    if n == 0:
        return None
    import numpy as np

    values = np.asarray(deltas, dtype=np.float64)
    low, high = float(values.min()), float(values.max())
    if low == high:
        return (low, low)
    count = resamples if resamples is not None else bootstrap_resamples(n)
    rng = np.random.default_rng(seed)
    means = np.empty(count, dtype=np.float64)
    rows = max(1, _CHUNK_DRAWS // n)
    for start in range(0, count, rows):
        stop = min(count, start + rows)
        picks = rng.integers(0, n, size=(stop - start, n), dtype=np.uint32)
        means[start:stop] = values[picks].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return (float(lo), float(hi))


def mcnemar_exact_p(pass_to_not_pass: int, not_pass_to_pass: int) -> float:
    """Two-sided exact McNemar p-value of pass/not-pass flips between two paired runs.

    Only the discordant cases carry information: under "no change" each flip is equally
    likely to go either way, so the count one way is Binomial(flips, 0.5). This is the value
    `scipy.stats.binomtest(b, b + c, 0.5).pvalue` gives (for p = 0.5 the two-sided value is
    twice the smaller tail, capped at 1), computed with `scipy.special.bdtr` because importing
    `scipy.stats` alone takes about a second.

    Args:
        pass_to_not_pass: Cases that passed in the base and not in the head (b).
        not_pass_to_pass: Cases that did not pass in the base and passed in the head (c).

    Returns:
        The p-value; 1.0 when nothing flipped.
    """
    flips = pass_to_not_pass + not_pass_to_pass
    if flips == 0:
        return 1.0
    from scipy.special import bdtr

    tail = float(bdtr(min(pass_to_not_pass, not_pass_to_pass), flips, 0.5))
    return min(1.0, 2.0 * tail)
