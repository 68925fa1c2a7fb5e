"""`/api/runs/{id}/results`: a run's case results, paged, sorted and filtered in the store."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Response

from assay.results import CaseResult, Verdict
from assay.server._errors import error_responses
from assay.server._models import CaseResultPage, PageNumber, PageSize, RunId, page_json
from assay.server._state import StoreDep
from assay.store import ResultFilter, ResultSort

__all__ = ["router"]

router = APIRouter(prefix="/runs/{run_id}/results", tags=["results"])


@router.get("", response_model=CaseResultPage, responses=error_responses(400, 404, 422))
def list_results(
    *,
    run_id: RunId,
    store: StoreDep,
    verdict: Annotated[
        list[Verdict] | None,
        Query(description="Only cases with one of these verdicts (repeat the parameter)."),
    ] = None,
    tag: Annotated[str | None, Query(description="Only cases carrying this tag.")] = None,
    grader: Annotated[
        str | None, Query(description="Only cases graded by the grader of this name.")
    ] = None,
    grader_verdict: Annotated[
        list[Verdict] | None,
        Query(
            description="Only cases where that grader (or, without `grader`, any grader) "
            "gave one of these verdicts (repeat the parameter: `borderline`, `fail` and "
            "`error` together select the cases it did not pass)."
        ),
    ] = None,
    q: Annotated[
        str | None,
        Query(max_length=200, description="Only cases whose id contains this (ignoring case)."),
    ] = None,
    sort: Annotated[
        ResultSort,
        Query(
            description="Order by stored order (`seq`), `case_id`, `score` or `duration_ms`; "
            "ties keep stored order, a case without a score sorts lowest."
        ),
    ] = "seq",
    order: Annotated[
        Literal["asc", "desc"], Query(description="`desc` is exactly the reverse of `asc`.")
    ] = "asc",
    page: PageNumber = 1,
    page_size: PageSize = 50,
) -> Response:
    """One page of a run's case results; the run may still be running (results appear as
    they are stored)."""
    where = ResultFilter(
        verdicts=tuple(verdict) if verdict else None,
        tag=tag,
        grader=grader,
        grader_verdicts=tuple(grader_verdict) if grader_verdict else None,
        q=q or None,
    )
    found = store.page_case_results(
        run_id,
        where=where,
        sort=sort,
        descending=order == "desc",
        offset=(page - 1) * page_size,
        limit=page_size,
    )
    body = page_json(found.items, total=found.total, page=page, page_size=page_size)
    return Response(body, media_type="application/json")


@router.get("/{case_id:path}", response_model=CaseResult, responses=error_responses(400, 404, 422))
def get_result(
    run_id: RunId,
    case_id: Annotated[str, Path(min_length=1, description="The case id (may contain /).")],
    store: StoreDep,
) -> Response:
    """One case result: output, transcript, tool calls, grader results with Details, expected
    outcomes."""
    found = store.get_case_result(run_id, case_id)
    return Response(found.model_dump_json(), media_type="application/json")
