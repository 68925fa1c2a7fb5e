"""The shapes of a comparison: the thresholds in force and the result of SPEC §6.

`Comparison.model_dump_json()` is what `assay compare --json` prints and what the HTTP API
will return, so field names follow SPEC §6 exactly; fields beyond it are extras the contract
allows. Rates and scores are 0–1; only messages and the terminal show points and percentages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from assay._strict_model import StrictModel
from assay.results import CaseChange, Verdict

__all__ = [
    "CASE_STATUSES",
    "CaseComparison",
    "CaseStatus",
    "CompareStatistics",
    "CompareSummary",
    "CompareThresholds",
    "Comparison",
    "GateName",
    "GateState",
]

CaseStatus = CaseChange
CASE_STATUSES: tuple[CaseStatus, ...] = ("regressed", "improved", "unchanged", "new", "removed")

GateName = Literal["pass_rate", "avg_score", "latency"]
GateState = Literal["ok", "regression", "not_significant", "skipped"]
"""`regression`: the threshold is exceeded and flagged; `not_significant`: exceeded, but
`require_significance` found it could be noise; `skipped`: a run has nothing to measure
(no cases, no scores, or no recorded latency)."""

_Fraction = Annotated[float, Field(ge=0.0, le=1.0)]


class CompareThresholds(StrictModel):
    """What a comparison tolerates before it reports a regression (SPEC §6)."""

    # The HTTP API's OpenAPI document describes the fields from these docstrings.
    model_config = ConfigDict(use_attribute_docstrings=True)

    max_pass_rate_drop: _Fraction = 0.0
    """Largest tolerated drop of the pass rate (0–1; 0.1 is ten points). The default 0 flags
    any drop."""
    max_avg_score_drop: _Fraction = 0.05
    """Largest tolerated drop of the average case score (0–1): the default tolerates five
    points of judge noise on the 0–100 display scale."""
    max_latency_increase_pct: Annotated[float, Field(ge=0.0)] = 20.0
    """Largest tolerated growth of the mean case latency, in percent of the base's."""
    case_score_delta: _Fraction = 0.05
    """Per case, when pass/not-pass did not flip: a score change larger than this makes the
    case regressed or improved; a smaller one leaves it unchanged."""

    @classmethod
    def overriding(cls, **given: float | None) -> CompareThresholds:
        """The defaults with the thresholds a caller gave (CLI flags, query parameters);
        a None leaves its default."""
        return cls(**{name: value for name, value in given.items() if value is not None})


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


@dataclass(slots=True)
class CaseComparison:
    """One case of either run and what happened to it.

    A slotted dataclass rather than a pydantic model, and not frozen: a large comparison
    builds 100,000s of them, and a model (or a frozen dataclass) costs several times more per
    row than everything else the comparison does per case. Pydantic still serialises it as
    an object inside `Comparison`.
    """

    case_id: str
    status: CaseStatus
    base_verdict: Verdict | None
    """None for a `new` case."""
    head_verdict: Verdict | None
    """None for a `removed` case."""
    base_score: float | None
    head_score: float | None
    score_delta: float | None
    """`head_score − base_score`; None unless both runs scored the case."""


class CompareSummary(_Out):
    """Suite-level numbers of both runs, their changes, and the verdict of the gates."""

    base_pass_rate: float | None
    """Passed cases / all cases of the base run (errors and borderline are not passes);
    None for a run without cases."""
    head_pass_rate: float | None
    pass_rate_delta: float | None
    """`head_pass_rate − base_pass_rate`: negative is a drop."""
    base_avg_score: float | None
    """Mean score over the base run's cases that have one (errors have none)."""
    head_avg_score: float | None
    avg_score_delta: float | None
    latency_increase_pct: float | None
    """Growth of the mean case latency in percent of the base's (negative: faster); None
    when the base recorded no latency."""
    regression_detected: bool
    reasons: list[str]
    """One message per violated gate, e.g. "pass rate dropped 10.0 points (allowed 0.0)"."""
    notes: list[str] = Field(default_factory=list)
    """Gates exceeded but not flagged because `require_significance` found the change
    could be noise."""
    base_cases: int
    head_cases: int
    base_mean_latency_ms: float | None
    head_mean_latency_ms: float | None
    case_counts: dict[CaseStatus, int]
    """How many cases have each status (every status is present)."""
    gates: dict[GateName, GateState]
    """The state of each suite-level gate; `regression_detected` is whether any is
    `regression`."""


class CompareStatistics(_Out):
    """Evidence for telling noise from a real change (see `docs/compare.md`)."""

    mean_delta_ci95: tuple[float, float] | None
    """Paired bootstrap percentile 95% interval of the mean per-case score delta over the
    cases scored in both runs; None when there is no such case."""
    mcnemar_p: float
    """Two-sided exact McNemar p-value of pass/not-pass flips among cases in both runs;
    1.0 when nothing flipped."""
    mean_delta: float | None
    """The mean per-case score delta the interval is about."""
    paired_cases: int
    """Cases scored in both runs: the sample of the bootstrap."""
    resamples: int
    """Bootstrap resamples used (fewer than 10,000 only for very large runs)."""
    seed: int
    """Seed of the bootstrap, so the interval can be reproduced."""
    pass_to_not_pass: int
    """Cases in both runs that passed in the base and not in the head."""
    not_pass_to_pass: int
    """Cases in both runs that did not pass in the base and passed in the head."""


class Comparison(_Out):
    """The comparison of a head run with a base run (SPEC §6)."""

    base: str
    """Id of the base run (the reference)."""
    head: str
    """Id of the head run (the candidate)."""
    thresholds: CompareThresholds
    require_significance: bool
    """Whether the score and pass-rate gates also required a significant change."""
    summary: CompareSummary
    cases: list[CaseComparison]
    """Base cases in the base's order (`removed` ones included), then `new` ones in the
    head's order."""
    statistics: CompareStatistics
    warnings: list[str] = Field(default_factory=list)
    """Why the comparison may not mean what it seems: the same run twice, runs of different
    suites, a run that did not complete, different shares of cases answered from the response
    cache. They never change `regression_detected`."""
