"""The Markdown report of a run comparison (`assay compare --markdown`): for a pull-request
comment or `$GITHUB_STEP_SUMMARY`.

Warnings come first, as a quote block, so a comparison that may not mean what it seems says so
before its numbers; then the gates, the verdict with its reasons, and the changed cases.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from assay.report import _numbers as fmt
from assay.report._escape import md_cell, md_code, md_text
from assay.report._pairwise import pairwise_markdown

if TYPE_CHECKING:
    from assay.comparison import Comparison, GateState
    from assay.results import RunResult

__all__ = ["comparison_markdown"]

_LISTED_PER_STATUS = 20
"""Changed cases listed per status, as in the terminal; the rest are counted."""

_GATE: dict[GateState, str] = {
    "ok": "✅ ok",
    "regression": "❌ regression",
    "not_significant": "🟡 not significant",
    "skipped": "—",
}


def comparison_markdown(result: Comparison, base: RunResult, head: RunResult) -> str:
    """The comparison as one Markdown document."""
    return "".join(_chunks(result, base, head))


def _chunks(result: Comparison, base: RunResult, head: RunResult) -> Iterator[str]:
    from assay.comparison import PairwiseComparison

    s, t = result.summary, result.thresholds
    yield f"## Comparison: {md_text(base.suite)}\n\n"
    for role, run in (("base", base), ("head", head)):
        yield f"- **{role}** {md_code(run.id)} {md_text(run.target)} ({md_text(run.status)})\n"
    yield "\n"
    if result.warnings:
        quoted = (f"> ⚠️ **Warning:** {md_text(warning)}\n" for warning in result.warnings)
        yield ">\n".join(quoted) + "\n"
    yield "| | base | head | change | allowed | gate |\n|---|---:|---:|---:|---|---|\n"
    latency = "—" if s.latency_increase_pct is None else f"{s.latency_increase_pct:+.1f}%"
    rows = (
        ("pass rate", fmt.percent(s.base_pass_rate), fmt.percent(s.head_pass_rate),
         fmt.points(s.pass_rate_delta), f"drop ≤ {t.max_pass_rate_drop * 100:.1f} pt",
         _GATE[s.gates["pass_rate"]]),
        ("average score", fmt.percent(s.base_avg_score), fmt.percent(s.head_avg_score),
         fmt.points(s.avg_score_delta), f"drop ≤ {t.max_avg_score_drop * 100:.1f} pt",
         _GATE[s.gates["avg_score"]]),
        ("mean latency", fmt.latency(s.base_mean_latency_ms),
         fmt.latency(s.head_mean_latency_ms), latency,
         f"rise ≤ {t.max_latency_increase_pct:.1f}%", _GATE[s.gates["latency"]]),
        ("cases", f"{s.base_cases:,}", f"{s.head_cases:,}", "", "", ""),
    )  # fmt: skip
    for row in rows:
        yield "| " + " | ".join(cell or "" for cell in row) + " |\n"
    yield "\n"
    if s.regression_detected:
        yield "**❌ Regression detected**\n\n"
        yield "".join(f"- {md_text(reason)}\n" for reason in s.reasons) + "\n"
    else:
        yield "**✅ No regression**\n\n"
    if s.notes:  # exceeded gates not flagged (not significant, a latency rise under 1 ms)
        yield "".join(f"- note: {md_text(note)}\n" for note in s.notes) + "\n"
    yield from _changed(result)
    if isinstance(result, PairwiseComparison):  # last: its heading would cover what follows
        yield from pairwise_markdown(result.pairwise)


def _changed(result: Comparison) -> Iterator[str]:
    changed = [c for c in result.cases if c.status != "unchanged"]
    if not changed:
        return
    yield "| status | case | base | head | Δ score |\n|---|---|---|---|---:|\n"
    for status in ("regressed", "improved", "new", "removed"):
        matching = [c for c in changed if c.status == status]
        for case in matching[:_LISTED_PER_STATUS]:
            base = md_cell(_side(case.base_verdict, case.base_score))
            head = md_cell(_side(case.head_verdict, case.head_score))
            delta = "—" if case.score_delta is None else f"{case.score_delta:+.2f}"
            yield f"| {status} | {md_cell(case.case_id)} | {base} | {head} | {delta} |\n"
        if len(matching) > _LISTED_PER_STATUS:
            yield f"| + {len(matching) - _LISTED_PER_STATUS:,} more {status} | | | | |\n"
    yield "\n"


def _side(verdict: str | None, score: float | None) -> str:
    if verdict is None:
        return ""
    return verdict if score is None else f"{verdict} {score:.2f}"
