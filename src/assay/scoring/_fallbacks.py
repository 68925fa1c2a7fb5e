"""Judge fallbacks (SPEC §1.3): judged checks the judge could not do, decided another way.

A grader flags its own result (`GraderResult.fallback`); this module finds and counts the
flags of a case, so the run summary, the reports and the studio agree on one number.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from assay.results import CaseResult, GraderResult, SampleResult, TurnResult

__all__ = ["Fallback", "case_fallbacks", "count_fallbacks"]


@dataclass(frozen=True, slots=True)
class Fallback:
    """One judged check that fell back: where, which grader, and what happened instead."""

    where: str
    """`""` for the case itself, else `sample N`, `turn N` or `sample N › turn N`."""
    grader: str
    """The grader's name, `composite › member` for a composite's member."""
    message: str


def _flagged(results: Sequence[GraderResult], prefix: str = "") -> Iterator[tuple[str, str]]:
    for result in results:
        label = prefix + result.name
        if result.fallback is not None:
            yield label, result.fallback
        yield from _flagged(result.children, f"{label} › ")


def _in_unit(
    results: Sequence[GraderResult], turns: Sequence[TurnResult], verdict: str, where: str
) -> Iterator[Fallback]:
    """The fallbacks of one graded unit: a sample, or a case run once.

    A unit that ended in `error` counts none: no verdict rests on a fallback there. A
    conversation's graders are its turns' (its own `grader_results` repeat the last turn's).
    """
    if verdict == "error":
        return
    if not turns:
        yield from (Fallback(where, g, m) for g, m in _flagged(results))
        return
    for turn in turns:
        place = f"{where} › turn {turn.index}" if where else f"turn {turn.index}"
        yield from (Fallback(place, g, m) for g, m in _flagged(turn.grader_results))


def case_fallbacks(case: CaseResult) -> list[Fallback]:
    """Every judge fallback behind a case result: of each sample when it was repeated."""
    if not case.samples:
        return list(_in_unit(case.grader_results, case.turns, case.verdict, ""))
    found: list[Fallback] = []
    for sample in case.samples:
        found.extend(_sample_fallbacks(sample))
    return found


def _sample_fallbacks(sample: SampleResult) -> Iterator[Fallback]:
    return _in_unit(sample.grader_results, sample.turns, sample.verdict, f"sample {sample.index}")


def count_fallbacks(case: CaseResult) -> int:
    """How many judge fallbacks a case result holds (what `judge_fallback_count` adds up)."""
    if (
        case.samples
        or case.turns
        or any(r.fallback is not None or r.children for r in case.grader_results)
    ):
        return len(case_fallbacks(case))
    return 0  # the common case, checked without building anything: once per stored case
