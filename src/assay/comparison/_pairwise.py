"""Pairwise judging, the pure part: fold a judge's two answers per case, and summarise.

A judge that sees two outputs side by side prefers the first (or the second) more often than
their quality explains. So each paired case is asked twice with the positions swapped, and only
a preference that survives the swap counts: the head wins (or loses) a case when both answers
name the head's (or the base's) output; anything else is a tie. The head's win rate counts a
tie as half a win, so 0.5 means "no difference" whatever the share of ties (see
docs/compare.md), and its Wilson score interval stays inside 0–1 and is usable on the few dozen
cases a suite often has, where the normal approximation is not.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict

from assay.comparison._model import Comparison
from assay.results import TokenUsage

__all__ = [
    "WILSON_Z95",
    "PairwiseCase",
    "PairwiseComparison",
    "PairwiseOutcome",
    "PairwiseResult",
    "Preference",
    "fold_preferences",
    "summarise_pairwise",
    "wilson_interval",
]

Preference = Literal["A", "B", "tie"]
"""One judge answer: the output in position A, the one in position B, or neither."""
PairwiseOutcome = Literal["win", "loss", "tie"]
"""A paired case for the head: its output preferred in both orders, the base's, or neither."""

WILSON_Z95 = 1.959963984540054
"""The standard normal quantile of 0.975: a two-sided 95% interval."""


def wilson_interval(successes: float, n: int, z: float = WILSON_Z95) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion `successes / n`; None when `n` is 0.

    `successes` may be fractional (ties counted as half a win): the interval is that of the
    observed proportion over `n` trials.

    Raises:
        ValueError: `successes` is outside 0..n.
    """
    if n <= 0:
        return None
    if not 0.0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n={n}, got {successes}")
    p = successes / n
    z2 = z * z
    denominator = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    margin = z * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - margin)
    high = 1.0 if successes == n else min(1.0, centre + margin)  # exact, not 0.9999999999999999
    return low, high


_BASE_FIRST = {"A": "base", "B": "head", "tie": "tie"}
"""Whose output an answer prefers when the base's output is in position A."""
_HEAD_FIRST = {"A": "head", "B": "base", "tie": "tie"}
"""Whose output an answer prefers when the head's output is in position A."""


def fold_preferences(
    base_first: Preference, head_first: Preference
) -> tuple[PairwiseOutcome, bool]:
    """The case's outcome for the head and whether the two answers agree.

    Args:
        base_first: The answer with the base's output in position A, the head's in B.
        head_first: The answer with the positions swapped.

    Returns:
        (`win` | `loss` | `tie`, consistent). Consistent: both answers prefer the same
        output, or both say tie. An inconsistent pair (each position preferred once, or one
        preference and one tie) is a tie: the preference did not survive the swap.
    """
    first, second = _BASE_FIRST[base_first], _HEAD_FIRST[head_first]
    if first != second:
        return "tie", False
    return ("win" if first == "head" else "loss" if first == "base" else "tie"), True


@dataclass(slots=True)
class PairwiseCase:
    """One paired case as judged (a dataclass, like `CaseComparison`: one per case)."""

    case_id: str
    outcome: PairwiseOutcome | None
    """None when a judge call failed (`error`)."""
    consistent: bool | None
    """Whether both answers preferred the same output (or both said tie); None on error."""
    base_first: Preference | None
    """The answer with the base's output in position A."""
    head_first: Preference | None
    """The answer with the head's output in position A."""
    reasoning: list[str] = field(default_factory=list)
    """The judge's reasoning of each answer given, base-first then head-first."""
    error: str | None = None


class PairwiseResult(BaseModel):
    """The head's outputs judged against the base's, case by case (SPEC §6 pairwise)."""

    model_config = ConfigDict(extra="forbid")

    judge: str
    """The judge asked: provider and model (and its endpoint when set)."""
    prompt: str
    """The prompt template as `name@version`."""
    paired_cases: int
    """Cases in both runs with an output in each: each costs two judge calls."""
    judged: int
    """Paired cases whose two answers were both obtained: the win rate's denominator."""
    errors: int
    """Paired cases left unjudged because a judge call failed."""
    wins: int
    losses: int
    ties: int
    """Ties include the position-inconsistent cases."""
    inconsistent: int
    """Cases whose two answers did not prefer the same output (nor both say tie)."""
    win_rate: float | None
    """(wins + ties / 2) / judged; None when no case was judged."""
    win_rate_ci95: tuple[float, float] | None
    """Wilson score 95% interval of the win rate."""
    inconsistency_rate: float | None
    """inconsistent / judged: how often the judge's preference followed the position."""
    judge_calls: int
    """Judge answers obtained (cached ones included)."""
    cached_calls: int
    """Of those, answered from the response cache."""
    judge_token_usage: TokenUsage | None
    judge_cost_usd: float | None
    cases: list[PairwiseCase]
    """Every paired case, in the head run's order."""


class PairwiseComparison(Comparison):
    """A comparison with pairwise judging (`assay compare --pairwise`): the document
    `--json` prints, the comparison's fields then `pairwise`."""

    pairwise: PairwiseResult


def summarise_pairwise(
    cases: Iterable[PairwiseCase],
    *,
    judge: str,
    prompt: str,
    judge_calls: int = 0,
    cached_calls: int = 0,
    judge_token_usage: TokenUsage | None = None,
    judge_cost_usd: float | None = None,
) -> PairwiseResult:
    """Count the outcomes of `cases` into a `PairwiseResult`."""
    listed = list(cases)
    counts = {"win": 0, "loss": 0, "tie": 0}
    inconsistent = 0
    for case in listed:
        if case.outcome is not None:
            counts[case.outcome] += 1
            inconsistent += case.consistent is False
    judged = sum(counts.values())
    score = counts["win"] + counts["tie"] / 2
    return PairwiseResult(
        judge=judge,
        prompt=prompt,
        paired_cases=len(listed),
        judged=judged,
        errors=len(listed) - judged,
        wins=counts["win"],
        losses=counts["loss"],
        ties=counts["tie"],
        inconsistent=inconsistent,
        win_rate=score / judged if judged else None,
        win_rate_ci95=wilson_interval(score, judged),
        inconsistency_rate=inconsistent / judged if judged else None,
        judge_calls=judge_calls,
        cached_calls=cached_calls,
        judge_token_usage=judge_token_usage,
        judge_cost_usd=judge_cost_usd,
        cases=listed,
    )
