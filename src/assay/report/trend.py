"""Terminal rendering of a suite's trend (`assay runs trend`): one row per run, then slopes."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from assay.comparison import Trend

__all__ = ["describe_slope", "render_trend"]


def describe_slope(name: str, slope: float) -> str:
    """A reading of one slope: "pass rate falling 2.1 points per run", "mean score steady".

    A slope that rounds to 0.0 points is "steady": the table shows one decimal, and a
    direction the reader cannot see in it would be noise presented as news.
    """
    shown = f"{abs(slope):.1f}"
    if shown == "0.0":
        return f"{name} steady"
    direction = "rising" if slope > 0 else "falling"
    return f"{name} {direction} {shown} points per run"


def render_trend(console: Console, trend: Trend) -> None:
    """Print the runs of the trend, oldest first, then the slopes and a one-line reading."""
    from rich.table import Table
    from rich.text import Text

    against = f" against target '{trend.target}'" if trend.target is not None else ""
    if not trend.runs:
        console.print(f"no completed runs of suite '{trend.suite}'{against}")
        return
    count = len(trend.runs)
    console.print(
        Text(f"{trend.suite}", style="bold").append(
            f"{against}: {count} completed run{'s' * (count != 1)}, oldest first",
            style="default",
        )
    )
    table = Table(box=None, pad_edge=False)
    for column in ("run", "started", "cases", "pass rate", "score", "verdict"):
        table.add_column(
            column, justify="right" if column in ("cases", "pass rate", "score") else "left"
        )
    for point in trend.runs:
        table.add_row(
            point.run_id,
            point.started_at[:19].replace("T", " "),
            str(point.cases),
            f"{point.pass_rate_pct:.1f}%",
            f"{point.score_pct:.1f}%",
            Text("passed", style="green") if point.passed else Text("failed", style="red"),
        )
    console.print(table)
    targets = sorted({p.target for p in trend.runs})
    if len(targets) > 1:
        console.print(
            f"note        the runs are against {len(targets)} targets ({', '.join(targets)}): "
            "pass --target to follow one"
        )
    pass_slope, score_slope = trend.pass_rate_pct_per_run, trend.score_pct_per_run
    if pass_slope is None or score_slope is None:
        console.print("slope       a slope needs at least two runs")
        return
    console.print(
        f"slope       pass rate {pass_slope:+.2f} pt/run   mean score {score_slope:+.2f} pt/run"
        "   (least squares)"
    )
    console.print(
        f"reading     {describe_slope('pass rate', pass_slope)} over {count} runs; "
        f"{describe_slope('mean score', score_slope)}"
    )
