"""The trend of a suite over its runs: each run's pass rate and mean score, and their slopes.

A slope is per run (x is the run's position, 0, 1, 2 …), not per day: runs come in bursts,
and "the last ten runs lost two points each" is what a user acts on. Values are points on
the 0–100 scale, as the stored run summaries hold them.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from assay.results import RunResult

__all__ = ["Trend", "TrendPoint", "build_trend", "least_squares_slope"]

_DECIMALS = 12
"""Slopes are rounded like comparison numbers, so a flat series gives 0.0, not 1e-15."""


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TrendPoint(_Out):
    """One run of the trend."""

    run_id: str
    started_at: str
    target: str
    cases: int
    pass_rate_pct: float
    """Passed cases / all cases, 0–100 (`summary.cases_pass_rate_pct`)."""
    score_pct: float
    """Mean case score, 0–100 (`summary.weighted_metrics_score_pct`)."""
    passed: bool
    """The run verdict: both SPEC §1.5 dimensions and no critical regression."""


class Trend(_Out):
    """A suite's completed runs, oldest first, and the least-squares slope of each series."""

    suite: str
    target: str | None
    """The target the runs were limited to; None when runs of every target count."""
    runs: list[TrendPoint]
    pass_rate_pct_per_run: float | None
    """Least-squares slope of the pass rate, in points per run; None with fewer than 2 runs."""
    score_pct_per_run: float | None
    """Least-squares slope of the mean score, in points per run; None with fewer than 2 runs."""


def least_squares_slope(values: Sequence[float]) -> float | None:
    """The slope of the least-squares line through `(i, values[i])`; None for fewer than 2.

    `Σ (x − x̄)(y − ȳ) / Σ (x − x̄)²` with x = 0 … n−1: the ordinary regression slope, so one
    outlier run moves it less than the first-to-last difference would.
    """
    n = len(values)
    if n < 2:
        return None
    x_mean = (n - 1) / 2
    y_mean = sum(values) / n
    covariance = sum((i - x_mean) * (y - y_mean) for i, y in enumerate(values))
    variance = sum((i - x_mean) ** 2 for i in range(n))
    return round(covariance / variance, _DECIMALS) + 0.0  # + 0.0 turns -0.0 into 0.0


def build_trend(suite: str, runs: Sequence[RunResult], *, target: str | None = None) -> Trend:
    """The trend of `runs` (oldest first, as they happened) of `suite`."""
    points = [
        TrendPoint(
            run_id=run.id,
            started_at=run.started_at,
            target=run.target,
            cases=run.summary.total,
            pass_rate_pct=run.summary.cases_pass_rate_pct,
            score_pct=run.summary.weighted_metrics_score_pct,
            passed=run.passed,
        )
        for run in runs
    ]
    return Trend(
        suite=suite,
        target=target,
        runs=points,
        pass_rate_pct_per_run=least_squares_slope([p.pass_rate_pct for p in points]),
        score_pct_per_run=least_squares_slope([p.score_pct for p in points]),
    )
