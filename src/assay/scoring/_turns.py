"""Fold the turns of a conversation test into one case result (SPEC §2, multi-turn)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Literal

from assay.scoring._case import CaseBands, CaseOutcome
from assay.scoring._verdicts import score_to_verdict

__all__ = ["TurnAggregation", "fold_turns"]

TurnAggregation = Literal["mean", "min", "last"]


def fold_turns(
    turns: Sequence[CaseOutcome], aggregation: TurnAggregation, bands: CaseBands
) -> CaseOutcome:
    """The case outcome of the turns that ran.

    An errored turn makes the case `error`. A required grader failing in any turn gates the
    whole conversation to 0, as it would a single-turn case. Otherwise the turn scores fold by
    `mean`, `min` or `last`, and the verdict follows the case bands.
    """
    if not turns:
        raise ValueError("a conversation needs at least one turn")
    for index, turn in enumerate(turns):
        if turn.verdict == "error":
            error = turn.error
            if error is not None:
                error = error.model_copy(update={"message": f"turn {index}: {error.message}"})
            return CaseOutcome(None, "error", error)
    if any(t.required_gate_failed for t in turns):
        return CaseOutcome(
            0.0, score_to_verdict(0.0, bands.threshold, bands.borderline), None, True
        )
    scores = [t.score or 0.0 for t in turns]
    if aggregation == "mean":
        score = statistics.fmean(scores)
    elif aggregation == "min":
        score = min(scores)
    else:
        score = scores[-1]
    return CaseOutcome(score, score_to_verdict(score, bands.threshold, bands.borderline))
