"""What the Markdown and JUnit reports say about a case that did not pass, read once for both:
its graders (composite members and conversation turns included), its failed Details with the
overflow cap, its unmet expected outcomes and the error that stopped it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from assay.results import (
    CaseResult,
    Detail,
    ErrorInfo,
    ExpectedOutcomeResult,
    GraderResult,
    SampleResult,
)

__all__ = [
    "DETAILS_SHOWN",
    "FailedDetails",
    "Graded",
    "case_error",
    "case_graders",
    "failed_details",
    "failed_outcomes",
    "score_text",
]

DETAILS_SHOWN = 10
"""Failed Details listed per grader; the rest are counted in one "+ N more" line."""

Graded = CaseResult | SampleResult
"""A case, or one sample of a repeated case: both carry an output, graders and a verdict."""

_MORE = re.compile(r"\+ (\d+) more")
"""The summary entry a grader adds past its own cap of failed Details (SPEC §1.1)."""


def score_text(score: float | None) -> str:
    """A 0–1 score with two decimals; an em dash when there is none (an error)."""
    return "—" if score is None else f"{score:.2f}"


def _walk(results: Iterable[GraderResult], prefix: str) -> Iterator[tuple[str, GraderResult]]:
    for result in results:
        label = f"{prefix}{result.name}"
        yield label, result
        yield from _walk(result.children, f"{label} › ")


def case_graders(item: Graded) -> Iterator[tuple[str, GraderResult]]:
    """Every grader result of a case as (label, result): composite members labelled
    `composite › member`, a conversation's per-turn graders `turn N › name`."""
    yield from _walk(item.grader_results, "")
    for turn in item.turns:
        yield from _walk(turn.grader_results, f"turn {turn.index} › ")


def failed_outcomes(item: Graded) -> Iterator[tuple[str, ExpectedOutcomeResult]]:
    """The expected outcomes the judge found unmet, as (label, result)."""
    for outcome in item.expected_outcome_results:
        if not outcome.passed:
            yield "", outcome
    for turn in item.turns:
        for outcome in turn.expected_outcome_results:
            if not outcome.passed:
                yield f"turn {turn.index}", outcome


@dataclass(frozen=True)
class FailedDetails:
    """A grader's failed Details as a report lists them."""

    shown: list[Detail]
    more: int
    """Failed Details past the ones shown, those a grader already summarised included."""

    @property
    def total(self) -> int:
        return len(self.shown) + self.more


def failed_details(result: GraderResult, limit: int = DETAILS_SHOWN) -> FailedDetails:
    """The first `limit` failed Details of a grader and how many more failed.

    A grader's own `+ N more` entry is folded into the count, so a report never shows two
    overflow lines."""
    shown: list[Detail] = []
    more = 0
    for detail in result.details:
        if detail.passed:
            continue
        summary = _MORE.fullmatch(detail.check)
        if summary is not None and detail.expected is None and detail.actual is None:
            more += int(summary.group(1))
        elif len(shown) < limit:
            shown.append(detail)
        else:
            more += 1
    return FailedDetails(shown, more)


def case_error(item: Graded) -> ErrorInfo | None:
    """Why an `error` case could not be graded: its own error, else the first grader's."""
    if item.error is not None:
        return item.error
    for label, result in case_graders(item):
        if result.error is not None:
            return ErrorInfo(
                type=result.error.type, message=f"grader {label}: {result.error.message}"
            )
    return None
