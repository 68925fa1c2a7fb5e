"""A stored run's human reviews beside its machine verdicts: one reader for the API, the CLI
and the reports (SPEC §6)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from assay.comparison import ReviewSummary, review_summary

if TYPE_CHECKING:
    from assay.results import JSON, Review
    from assay.store import Store

__all__ = ["RunReviews", "run_reviews"]


@dataclass(frozen=True)
class RunReviews:
    """A run's reviews, in case order, and their summary."""

    reviews: list[Review]
    summary: ReviewSummary

    def document(self) -> dict[str, JSON]:
        """`GET /api/runs/{id}/reviews`'s answer (the HTML report embeds the same)."""
        summary = self.summary
        return {
            "items": [r.model_dump() for r in self.reviews],
            "cases": summary.cases,
            "reviewed": summary.reviewed,
            "human_passed": summary.human_passed,
            "agreed": summary.agreed,
            "reviewed_pass_rate": summary.reviewed_pass_rate,
        }


def run_reviews(store: Store, run_id: str, *, unreviewed: bool = True) -> RunReviews | None:
    """The reviews of a stored run and how they compare with its machine verdicts.

    With `unreviewed=False`, a run nobody reviewed is None, without reading its verdicts (a
    report of a large run pays nothing for the feature it does not use).

    Raises:
        assay.store.NotFoundError: No such run.
    """
    reviews = store.list_reviews(run_id)
    if not reviews and not unreviewed:
        return None
    verdicts = {c.case_id: c.verdict for c in store.iter_case_scores(run_id)}
    return RunReviews(reviews, review_summary(verdicts, reviews))
