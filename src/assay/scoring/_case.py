"""The case score and case verdict (SPEC §1.3)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from assay.results import ErrorInfo, ExpectedOutcomeResult, GraderResult, Verdict
from assay.scoring._aggregators import AggregatorSpec, fold
from assay.scoring._verdicts import score_to_verdict

__all__ = ["CaseBands", "CaseOutcome", "score_case"]


@dataclass(frozen=True, slots=True)
class CaseBands:
    """The resolved verdict bands of one case."""

    threshold: float
    borderline: float | None


@dataclass(frozen=True)
class CaseOutcome:
    """Score and verdict of a case; `score` is None only when nothing could be graded."""

    score: float | None
    verdict: Verdict
    error: ErrorInfo | None = None
    required_gate_failed: bool = False


def _first_error(results: Sequence[GraderResult]) -> ErrorInfo | None:
    for r in results:
        if r.weight > 0 and r.error is not None:
            return ErrorInfo(type=r.error.type, message=f"grader '{r.name}': {r.error.message}")
    return None


def score_case(
    grader_results: Sequence[GraderResult],
    *,
    aggregator: AggregatorSpec,
    bands: CaseBands,
    outcomes: Sequence[ExpectedOutcomeResult] | None = None,
    target_error: ErrorInfo | None = None,
    outcome_error: ErrorInfo | None = None,
) -> CaseOutcome:
    """Fold a case's grader results into its score and verdict.

    Args:
        grader_results: every grader's result; weight-0 results are reported, not scored.
        aggregator: how scored results fold into one number.
        bands: the case's resolved threshold and borderline bound.
        outcomes: judged `expected_outcomes`, or None when the case has none. When given, they
            are the pass/fail gate and the score is kept for observability only.
        target_error: why the system under test produced nothing, if it failed.
        outcome_error: why the expected outcomes could not be judged, if they could not
            (`outcomes` is then None). The verdict falls back to the score (SPEC §1.3 step 2;
            the outcomes' grader result carries the `fallback` that is counted); a case with
            nothing else to score is an `error`.
    """
    if target_error is not None:
        return CaseOutcome(None, "error", target_error)
    scored = [r for r in grader_results if r.weight > 0]
    grader_error = _first_error(grader_results)
    if grader_error is None and outcome_error is not None and not scored:
        grader_error = ErrorInfo(
            type=outcome_error.type,
            message=f"expected outcomes: {outcome_error.message} (no other grader to score "
            "the case)",
        )
    if grader_error is not None:
        return CaseOutcome(None, "error", grader_error)

    gate_failed = any(r.required and r.verdict == "fail" for r in grader_results)
    if scored:
        folded = fold(aggregator, grader_results)
        score, decided = folded.score, folded.verdict
    elif outcomes:
        score, decided = sum(o.passed for o in outcomes) / len(outcomes), None
    else:
        raise ValueError("a case needs a grader with weight > 0 or expected outcomes")
    if gate_failed:
        score = 0.0

    if outcomes is not None:
        passed = all(o.passed for o in outcomes) and not gate_failed
        return CaseOutcome(score, "pass" if passed else "fail", None, gate_failed)
    if decided is not None and not gate_failed:
        return CaseOutcome(score, decided, None, gate_failed)
    return CaseOutcome(
        score, score_to_verdict(score, bands.threshold, bands.borderline), None, gate_failed
    )
