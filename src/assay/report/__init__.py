"""Renderers of run results: terminal (rich), Markdown, JSON, JUnit XML, HTML and the report
formats of plugins. They do no I/O of their own: they write to the stream or console they are
given.

Names are imported on first use (PEP 562): `assay run` prints its summary with the terminal
renderer alone, and the HTML and JUnit modules (their escaping regexes among them) took ~14 ms
of every run's end to import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay._lazy import lazy_getattr

if TYPE_CHECKING:
    from assay.report._registry import (
        BUILTIN_FORMATS,
        REPORTER_PLUGINS,
        Reporter,
        plugin_reporters,
        report_formats,
        write_plugin_report,
    )
    from assay.report.comparison import LISTED_PER_STATUS, render_comparison
    from assay.report.comparison_markdown import comparison_markdown
    from assay.report.html import write_html
    from assay.report.json import (
        json_chunks,
        json_chunks_many,
        render_json,
        render_json_many,
    )
    from assay.report.junit import CaseSource, render_junit, write_junit
    from assay.report.markdown import (
        CASES_LISTED,
        CHARACTERS_LISTED,
        MARKDOWN_VERDICTS,
        markdown_chunks,
        render_markdown,
    )
    from assay.report.terminal import VERDICT_STYLE, listed_verdicts, render_run
    from assay.report.trend import describe_slope, render_trend

_MODULES = {
    "assay.report._registry": [
        "BUILTIN_FORMATS",
        "REPORTER_PLUGINS",
        "Reporter",
        "plugin_reporters",
        "report_formats",
        "write_plugin_report",
    ],
    "assay.report.comparison": ["LISTED_PER_STATUS", "render_comparison"],
    "assay.report.comparison_markdown": ["comparison_markdown"],
    "assay.report.html": ["write_html"],
    "assay.report.json": [
        "json_chunks",
        "json_chunks_many",
        "render_json",
        "render_json_many",
    ],
    "assay.report.junit": ["CaseSource", "render_junit", "write_junit"],
    "assay.report.markdown": [
        "CASES_LISTED",
        "CHARACTERS_LISTED",
        "MARKDOWN_VERDICTS",
        "markdown_chunks",
        "render_markdown",
    ],
    "assay.report.terminal": ["VERDICT_STYLE", "listed_verdicts", "render_run"],
    "assay.report.trend": ["describe_slope", "render_trend"],
}

__all__ = [
    "BUILTIN_FORMATS",
    "CASES_LISTED",
    "CHARACTERS_LISTED",
    "LISTED_PER_STATUS",
    "MARKDOWN_VERDICTS",
    "REPORTER_PLUGINS",
    "VERDICT_STYLE",
    "CaseSource",
    "Reporter",
    "comparison_markdown",
    "describe_slope",
    "json_chunks",
    "json_chunks_many",
    "listed_verdicts",
    "markdown_chunks",
    "plugin_reporters",
    "render_comparison",
    "render_json",
    "render_json_many",
    "render_junit",
    "render_markdown",
    "render_run",
    "render_trend",
    "report_formats",
    "write_html",
    "write_junit",
    "write_plugin_report",
]

__getattr__ = lazy_getattr(__name__, _MODULES, globals())
