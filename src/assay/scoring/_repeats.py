"""Reduce the samples of a repeated case to one result (SPEC §1.4)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from assay.results import ErrorInfo, SampleResult, Verdict
from assay.scoring._case import CaseBands
from assay.scoring._verdicts import VERDICT_RANK, score_to_verdict

__all__ = ["Reduction", "RepeatStrategy", "reduce_samples", "t_interval95"]

RepeatStrategy = Literal["mean", "pass_at_k", "pass_all", "confidence_interval"]


@dataclass(frozen=True)
class Reduction:
    """The case-level score and verdict chosen from its samples."""

    score: float | None
    verdict: Verdict
    representative: int
    """Index of the sample whose output and grader results represent the case."""
    error: ErrorInfo | None = None
    ci95: tuple[float, float] | None = None


def t_interval95(values: Sequence[float]) -> tuple[float, float]:
    """Two-sided 95% Student-t interval of the mean (a zero-width interval for one value)."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return (mean, mean)
    from scipy.stats import t  # heavy import, only when intervals are asked for

    half = float(t.ppf(0.975, len(values) - 1)) * statistics.stdev(values) / math.sqrt(len(values))
    return (max(0.0, mean - half), min(1.0, mean + half))


def _key(sample: SampleResult) -> tuple[int, float]:
    return (VERDICT_RANK[sample.verdict], sample.score or 0.0)


def reduce_samples(
    samples: Sequence[SampleResult],
    strategy: RepeatStrategy,
    bands: CaseBands,
    *,
    outcome_gated: bool = False,
) -> Reduction:
    """Reduce N samples of one case.

    An errored sample makes the case `error` with no score, whatever the strategy: the case
    was not measured as configured, so neither a mean of the other samples nor their best or
    worst stands for it (an error is never averaged away, nor turned into a pass or a 0).
    Every sample keeps its own score and verdict. For `mean` and `confidence_interval` the
    verdict comes from the mean score, or, when the case is gated by expected outcomes, from
    the fraction of passing samples compared with the threshold.
    """
    if not samples:
        raise ValueError("no samples to reduce")
    errored = [s for s in samples if s.verdict == "error"]
    if errored:
        first = errored[0]
        message = f"{len(errored)} of {len(samples)} samples errored"
        if first.error is not None:
            message += f"; sample {first.index}: {first.error.message}"
        return Reduction(
            None,
            "error",
            first.index,
            ErrorInfo(type=first.error.type if first.error else "SampleError", message=message),
        )
    if strategy == "pass_at_k":
        best = max(samples, key=_key)
        return Reduction(best.score, best.verdict, best.index)
    if strategy == "pass_all":
        worst = min(samples, key=_key)
        return Reduction(worst.score, worst.verdict, worst.index)

    scores = [s.score for s in samples if s.score is not None]
    mean = statistics.fmean(scores)
    if outcome_gated:
        fraction = sum(s.verdict == "pass" for s in samples) / len(samples)
        verdict: Verdict = "pass" if fraction >= bands.threshold else "fail"
    else:
        verdict = score_to_verdict(mean, bands.threshold, bands.borderline)
    representative = min(samples, key=lambda s: abs((s.score or 0.0) - mean)).index
    ci = t_interval95(scores) if strategy == "confidence_interval" else None
    return Reduction(mean, verdict, representative, None, ci)
