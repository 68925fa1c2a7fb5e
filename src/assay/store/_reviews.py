"""Human reviews of case results (SPEC §6): a person's verdict kept beside the machine's.

A mixin of `SQLStore`: the methods share its engines and its run-id resolution, and live
here so the store's main module stays about runs and results.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import Connection, delete, insert, select

from assay.results import Review
from assay.store._errors import NotFoundError
from assay.store._tables import case_results, reviews
from assay.store._text import without_nul

if TYPE_CHECKING:
    from sqlalchemy import Engine, Row

__all__ = ["ReviewsMixin"]


class ReviewsMixin:
    """`put_review`, `get_review`, `delete_review` and `list_reviews` over `reviews`."""

    _engine: Engine
    _writes: Engine
    _where: str

    if TYPE_CHECKING:  # SQLStore's: a run's full id from an id or a unique prefix

        def _resolve(self, conn: Connection, run_id: str) -> str: ...

    def put_review(self, review: Review) -> Review:
        """Record (or replace) the review of a case; answers it with the run's full id.

        Raises:
            NotFoundError: No such run, or the run has no result for the case.
        """
        with self._writes.begin() as conn:
            run_id = self._resolve(conn, review.run_id)
            self._require_case(conn, run_id, review.case_id)
            stored = review.model_copy(
                update={
                    "run_id": run_id,
                    "note": without_nul(review.note),
                    "reviewer": without_nul(review.reviewer),
                }
            )
            conn.execute(
                delete(reviews).where(
                    reviews.c.run_id == run_id, reviews.c.case_id == review.case_id
                )
            )
            conn.execute(insert(reviews), stored.model_dump())
        return stored

    def get_review(self, run_id: str, case_id: str) -> Review | None:
        """The review of a case, or None when nobody reviewed it.

        Raises:
            NotFoundError: No such run, or the run has no result for the case.
        """
        with self._engine.connect() as conn:
            resolved = self._resolve(conn, run_id)
            self._require_case(conn, resolved, case_id)
            row = conn.execute(
                select(reviews).where(reviews.c.run_id == resolved, reviews.c.case_id == case_id)
            ).first()
        return None if row is None else _review(row)

    def delete_review(self, run_id: str, case_id: str) -> Review:
        """Remove the review of a case; answers what it was.

        Raises:
            NotFoundError: No such run or case, or the case has no review.
        """
        with self._writes.begin() as conn:
            resolved = self._resolve(conn, run_id)
            where = (reviews.c.run_id == resolved, reviews.c.case_id == case_id)
            row = conn.execute(select(reviews).where(*where)).first()
            if row is None:
                self._require_case(conn, resolved, case_id)
                raise NotFoundError(f"case '{case_id}' of run '{resolved}' has no review")
            conn.execute(delete(reviews).where(*where))
        return _review(row)

    def list_reviews(self, run_id: str) -> list[Review]:
        """Every review of a run, in the run's case order.

        Raises:
            NotFoundError: No such run.
        """
        with self._engine.connect() as conn:
            resolved = self._resolve(conn, run_id)
            rows = conn.execute(
                select(reviews)
                .join(
                    case_results,
                    (case_results.c.run_id == reviews.c.run_id)
                    & (case_results.c.case_id == reviews.c.case_id),
                )
                .where(reviews.c.run_id == resolved)
                .order_by(case_results.c.seq)
            ).all()
        return [_review(row) for row in rows]

    def _require_case(self, conn: Connection, run_id: str, case_id: str) -> None:
        found = conn.execute(
            select(case_results.c.id).where(
                case_results.c.run_id == run_id, case_results.c.case_id == case_id
            )
        ).first()
        if found is None:
            raise NotFoundError(f"run '{run_id}' has no case '{case_id}' in {self._where}")


def _review(row: Row[tuple[object, ...]]) -> Review:
    return Review(
        run_id=row.run_id,
        case_id=row.case_id,
        verdict=row.verdict,
        note=row.note,
        reviewer=row.reviewer,
        reviewed_at=row.reviewed_at,
    )
