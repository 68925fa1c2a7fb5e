"""Renderers of run results: terminal (rich) and JSON. They do no I/O of their own."""

from assay.report.comparison import LISTED_PER_STATUS, render_comparison
from assay.report.json import render_json, render_json_many
from assay.report.terminal import VERDICT_STYLE, listed_verdicts, render_run
from assay.report.trend import describe_slope, render_trend

__all__ = [
    "LISTED_PER_STATUS",
    "VERDICT_STYLE",
    "describe_slope",
    "listed_verdicts",
    "render_comparison",
    "render_json",
    "render_json_many",
    "render_run",
    "render_trend",
]
