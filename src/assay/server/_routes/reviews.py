"""`/api/runs/{id}/results/{case_id}/review` and `/api/runs/{id}/reviews`: human verdicts.

A person's `pass`/`fail` on a case (SPEC §6) is stored beside the machine verdict, never in
its place. Writes follow the token rules of every other write. These routes are registered
before `/results/{case_id}`, whose path parameter would otherwise swallow `/review`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path

from assay.api import run_reviews
from assay.results import Review, now_iso
from assay.server._errors import ApiError, error_responses
from assay.server._models import ReviewList, ReviewRequest, RunId
from assay.server._security import require_token
from assay.server._state import StoreDep

__all__ = ["router"]

router = APIRouter(prefix="/runs/{run_id}", tags=["reviews"])

_CaseId = Annotated[str, Path(min_length=1, description="The case id (may contain /).")]


@router.get("/reviews", response_model=ReviewList, responses=error_responses(400, 404, 422))
def list_reviews(run_id: RunId, store: StoreDep) -> ReviewList:
    """Every review of the run, in case order, with the reviewed counts and pass rate."""
    found = run_reviews(store, run_id)
    assert found is not None  # `unreviewed` is on: a run nobody reviewed has a summary too
    return ReviewList.model_validate(found.document())


@router.get(
    "/results/{case_id:path}/review",
    response_model=Review,
    responses=error_responses(400, 404, 422),
)
def get_review(run_id: RunId, case_id: _CaseId, store: StoreDep) -> Review:
    """The case's review; 404 when nobody reviewed it."""
    found = store.get_review(run_id, case_id)
    if found is None:
        raise ApiError(
            404,
            f"case '{case_id}' of run '{run_id}' has no review; record one with "
            "PUT on this path or `assay review RUN CASE --verdict pass|fail`",
        )
    return found


@router.put(
    "/results/{case_id:path}/review",
    response_model=Review,
    dependencies=[Depends(require_token)],
    responses=error_responses(400, 401, 403, 404, 413, 422),
)
def put_review(run_id: RunId, case_id: _CaseId, body: ReviewRequest, store: StoreDep) -> Review:
    """Record (or replace) the case's review; the machine verdict is kept."""
    review = Review(
        run_id=run_id,
        case_id=case_id,
        verdict=body.verdict,
        note=body.note,
        reviewer=body.reviewer,
        reviewed_at=now_iso(),
    )
    return store.put_review(review)


@router.delete(
    "/results/{case_id:path}/review",
    response_model=Review,
    dependencies=[Depends(require_token)],
    responses=error_responses(401, 403, 404, 422),
)
def delete_review(run_id: RunId, case_id: _CaseId, store: StoreDep) -> Review:
    """Remove the case's review; answers what it was."""
    return store.delete_review(run_id, case_id)
