"""The trend's least-squares slope against values worked out by hand, and the trend model."""

from __future__ import annotations

import pytest

from assay.comparison import build_trend, least_squares_slope
from assay.report import describe_slope
from assay.results import RegressionResult, RunSummary
from tests.comparison._runs import run


@pytest.mark.parametrize(
    ("values", "slope"),
    [
        ([50.0, 60.0, 70.0], 10.0),  # a straight line is its own fit
        ([100.0, 75.0, 50.0, 75.0], -10.0),  # Σ(x−x̄)(y−ȳ) = −50, Σ(x−x̄)² = 5
        ([100.0, 90.0, 95.0, 80.0], -5.5),  # −27.5 / 5
        ([80.0, 80.0, 80.0, 80.0, 80.0], 0.0),
        ([0.0, 100.0], 100.0),  # two runs: the difference
        ([10.0, 0.0, 0.0, 0.0, 0.0, 0.0], -1.428571428571),  # one outlier: −25/17.5, not −10
    ],
)
def test_least_squares_slope(values: list[float], slope: float) -> None:
    assert least_squares_slope(values) == slope


def test_the_slope_agrees_with_numpy_polyfit() -> None:
    import numpy as np

    values = list(np.random.default_rng(7).uniform(0.0, 100.0, size=37))
    expected = float(np.polyfit(np.arange(len(values)), values, 1)[0])
    assert least_squares_slope(values) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("values", [[], [42.0]])
def test_a_slope_needs_two_values(values: list[float]) -> None:
    assert least_squares_slope(values) is None


def test_a_flat_series_of_inexact_floats_is_exactly_zero() -> None:
    slope = least_squares_slope([33.3333, 33.3333, 33.3333])
    assert slope == 0.0
    assert str(slope) == "0.0"  # not -0.0, not 1e-15


def test_the_trend_reads_each_runs_summary_and_verdict() -> None:
    first = run("r1").model_copy(
        update={
            "target": "fake",
            "summary": RunSummary(
                total=4, cases_pass_rate_pct=75.0, weighted_metrics_score_pct=80.0, passed=True
            ),
        }
    )
    second = first.model_copy(
        update={
            "id": "r2",
            "started_at": "2026-11-23T11:00:00+00:00",
            "summary": RunSummary(
                total=4, cases_pass_rate_pct=50.0, weighted_metrics_score_pct=70.0, passed=True
            ),
            # A critical regression fails the run even though its summary passed.
            "regression": RegressionResult(
                status="critical",
                strategy="last_passing",
                baseline_run_id="r1",
                tolerance=0.02,
                critical_threshold=0.1,
            ),
        }
    )
    trend = build_trend("demo", [first, second], target="fake")
    assert trend.model_dump() == {
        "suite": "demo",
        "target": "fake",
        "runs": [
            {
                "run_id": "r1", "started_at": "2026-11-23T10:00:00+00:00", "target": "fake",
                "cases": 4, "pass_rate_pct": 75.0, "score_pct": 80.0, "passed": True,
            },
            {
                "run_id": "r2", "started_at": "2026-11-23T11:00:00+00:00", "target": "fake",
                "cases": 4, "pass_rate_pct": 50.0, "score_pct": 70.0, "passed": False,
            },
        ],
        "pass_rate_pct_per_run": -25.0,
        "score_pct_per_run": -10.0,
    }  # fmt: skip


def test_an_empty_trend_has_no_slopes() -> None:
    trend = build_trend("demo", [])
    assert (trend.runs, trend.pass_rate_pct_per_run, trend.score_pct_per_run) == ([], None, None)


@pytest.mark.parametrize(
    ("slope", "reading"),
    [
        (-2.14, "pass rate falling 2.1 points per run"),
        (0.96, "pass rate rising 1.0 points per run"),
        (0.049, "pass rate steady"),  # shows as +0.0: no direction to read
        (-0.049, "pass rate steady"),
        (0.0, "pass rate steady"),
    ],
)
def test_describe_slope(slope: float, reading: str) -> None:
    assert describe_slope("pass rate", slope) == reading
