"""How a comparison shows its pairwise judging, in the terminal and in Markdown."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from assay.report import _numbers as fmt
from assay.report._escape import md_code, md_text

if TYPE_CHECKING:
    from assay.comparison import PairwiseResult

__all__ = ["LISTED_LOSSES", "pairwise_lines", "pairwise_markdown"]

LISTED_LOSSES = 20
"""Cases the head lost, named; the rest are counted."""


def _interval(result: PairwiseResult) -> str:
    if result.win_rate_ci95 is None:
        return "—"
    low, high = result.win_rate_ci95
    return f"[{low * 100:.1f}, {high * 100:.1f}]%"


def _inconsistent(result: PairwiseResult) -> str:
    rate = fmt.percent(result.inconsistency_rate)
    return f"{result.inconsistent:,} of {result.judged:,} ({rate})"


def _calls(result: PairwiseResult) -> str:
    cost = "" if result.judge_cost_usd is None else f", ${result.judge_cost_usd:.4f}"
    return f"{result.judge_calls:,} calls ({result.cached_calls:,} cached{cost})"


def _lost(result: PairwiseResult) -> tuple[list[str], int]:
    lost = [c.case_id for c in result.cases if c.outcome == "loss"]
    return lost[:LISTED_LOSSES], max(0, len(lost) - LISTED_LOSSES)


def pairwise_lines(result: PairwiseResult) -> list[str]:
    """The terminal's lines after `pairwise    ` (continuation lines indented to match)."""
    if not result.judged:
        first = (
            f"no case judged: the judge failed on every paired case ({result.paired_cases:,})"
            if result.paired_cases
            else "no case judged: no case has an output in both runs"
        )
    else:
        first = (
            f"head win rate {fmt.percent(result.win_rate)}, 95% CI {_interval(result)} over "
            f"{result.judged:,} judged cases ({result.wins:,} won, {result.losses:,} lost, "
            f"{result.ties:,} tied; a tie counts half)"
        )
    lines = [first]
    if result.judged:
        lines.append(f"position-inconsistent answers: {_inconsistent(result)}")
    errors = f", {result.errors:,} cases not judged" if result.errors and result.judged else ""
    lines.append(f"judge {result.judge}: {_calls(result)}{errors}")
    named, more = _lost(result)
    if named:
        lines.append("head lost: " + ", ".join(named) + (f" (+ {more:,} more)" if more else ""))
    return lines


def pairwise_markdown(result: PairwiseResult) -> Iterator[str]:
    """The Markdown section."""
    yield "### Pairwise judging\n\n"
    yield (
        f"Judge {md_code(result.judge)}, each paired case asked twice with the outputs "
        f"swapped: {md_text(_calls(result))}.\n\n"
    )
    yield (
        "| head win rate | 95% CI | won | lost | tied | position-inconsistent | judged |\n"
        "|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    yield (
        f"| {fmt.percent(result.win_rate)} | {_interval(result)} | {result.wins:,} | "
        f"{result.losses:,} | {result.ties:,} | "
        f"{_inconsistent(result) if result.judged else '—'} | "
        f"{result.judged:,} of {result.paired_cases:,} |\n\n"
    )
    yield "A tie (the two answers disagree, or both say tie) counts as half a win.\n\n"
    named, more = _lost(result)
    if named:
        cases = ", ".join(md_code(case) for case in named)
        yield f"Head lost: {cases}" + (f" (+ {more:,} more)" if more else "") + ".\n\n"
