"""Aggregators fold several grader results into one score (SPEC §1.3)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field

from assay._strict_model import StrictModel
from assay.results import GraderResult, Verdict
from assay.scoring._verdicts import reaches

__all__ = [
    "AggregatorSpec",
    "AllOrNothing",
    "Fold",
    "Maximum",
    "Minimum",
    "SafetyGate",
    "ThresholdCount",
    "WeightedAverage",
    "fold",
]

_Unit = Annotated[float, Field(ge=0.0, le=1.0)]


class WeightedAverage(StrictModel):
    """Σ(score·weight) / Σ(weight) over graders with weight > 0 (the default)."""

    type: Literal["weighted_average"] = "weighted_average"


class Minimum(StrictModel):
    """The lowest grader score."""

    type: Literal["minimum"]


class Maximum(StrictModel):
    """The highest grader score."""

    type: Literal["maximum"]


class SafetyGate(StrictModel):
    """0 if any grader named in `required` fails; else the weighted average of the others."""

    type: Literal["safety_gate"]
    required: list[str] = Field(min_length=1)
    """Names of the graders that gate the score."""


class AllOrNothing(StrictModel):
    """The weighted average if every grader scores at least `threshold`, else 0."""

    type: Literal["all_or_nothing"]
    threshold: _Unit
    """Minimum score every grader must reach."""


class ThresholdCount(StrictModel):
    """The fraction of graders whose verdict is pass; passes iff that fraction ≥ `threshold`."""

    type: Literal["threshold"]
    threshold: _Unit
    """Fraction of passing graders needed."""


def _from_name(value: object) -> object:
    """Accept the short form `aggregator: minimum` for `aggregator: {type: minimum}`."""
    return {"type": value} if isinstance(value, str) else value


AggregatorSpec = Annotated[
    WeightedAverage | Minimum | Maximum | SafetyGate | AllOrNothing | ThresholdCount,
    Field(discriminator="type"),
    BeforeValidator(_from_name),
]


@dataclass(frozen=True)
class Fold:
    """An aggregator's result: the score, and a verdict when the aggregator decides it."""

    score: float
    verdict: Verdict | None = None


def _weighted(results: Sequence[GraderResult]) -> float:
    total = sum(r.weight for r in results)
    if total == 0:
        return 0.0
    return sum((r.score or 0.0) * r.weight for r in results) / total


def fold(spec: AggregatorSpec, results: Sequence[GraderResult]) -> Fold:
    """Fold grader results into one score.

    Only results with weight > 0 are scored; every result, weight 0 included, can gate a
    `safety_gate` by name (a gate is a gate whether or not it also counts in the average).

    Raises:
        ValueError: if no result has weight > 0, or a weighted one errored; callers handle
            errors first because an error must never become a number.
    """
    gates_from = results
    results = [r for r in results if r.weight > 0]
    if not results:
        raise ValueError("nothing to aggregate: no grader with weight > 0")
    if any(r.score is None for r in results):
        raise ValueError("cannot aggregate errored grader results")
    scores = [r.score or 0.0 for r in results]
    match spec:
        case WeightedAverage():
            return Fold(_weighted(results))
        case Minimum():
            return Fold(min(scores))
        case Maximum():
            return Fold(max(scores))
        case SafetyGate(required=names):
            gates = [r for r in gates_from if r.name in names]
            if any(r.verdict != "pass" for r in gates):
                return Fold(0.0)
            others = [r for r in results if r.name not in names]
            return Fold(_weighted(others or results))
        case AllOrNothing(threshold=bar):
            return Fold(_weighted(results) if reaches(min(scores), bar) else 0.0)
        case ThresholdCount(threshold=bar):
            fraction = sum(r.verdict == "pass" for r in results) / len(results)
            return Fold(fraction, "pass" if reaches(fraction, bar) else "fail")
    raise AssertionError(f"unhandled aggregator {spec!r}")  # pragma: no cover
