"""`/api/runs/compare`: what `assay compare --json` prints, for two stored runs."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from assay.api import compare_stored
from assay.comparison import CompareThresholds, Comparison
from assay.server._errors import error_responses
from assay.server._models import MAX_ID_LENGTH
from assay.server._state import StoreDep

__all__ = ["router"]

router = APIRouter(prefix="/runs", tags=["compare"])

REF_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:~+-]*$"
"""A run reference: an id, a unique id prefix, `latest`, `latest~N` or `baseline`. Never a
file: the API compares stored runs only."""

_Ref = Annotated[
    str,
    Query(
        pattern=REF_PATTERN,
        max_length=MAX_ID_LENGTH,
        description="A run id, a unique id prefix, `latest`, `latest~N` or `baseline` (the "
        "pinned baseline of the other run's suite, or of `suite`).",
    ),
]
_Fraction = Annotated[float | None, Query(ge=0.0, le=1.0)]


@router.get("/compare", response_model=Comparison, responses=error_responses(400, 404, 422))
def compare_runs(
    *,
    store: StoreDep,
    base: _Ref,
    head: _Ref,
    suite: Annotated[
        str | None, Query(description="Resolve `latest`, `latest~N` and `baseline` in it.")
    ] = None,
    max_pass_rate_drop: _Fraction = None,
    max_avg_score_drop: _Fraction = None,
    max_latency_increase_pct: Annotated[float | None, Query(ge=0.0, le=1e9)] = None,
    case_score_delta: _Fraction = None,
    require_significance: bool = False,
) -> Response:
    """Compare run `head` with run `base`: per-case changes, suite-level gates, statistics.

    Thresholds left out take their SPEC §6 defaults; the document says which were in force.
    """
    thresholds = CompareThresholds.overriding(
        max_pass_rate_drop=max_pass_rate_drop,
        max_avg_score_drop=max_avg_score_drop,
        max_latency_increase_pct=max_latency_increase_pct,
        case_score_delta=case_score_delta,
    )
    result, _, _ = compare_stored(
        store,
        base,
        head,
        thresholds=thresholds,
        require_significance=require_significance,
        suite=suite,
        allow_files=False,
    )
    return Response(result.model_dump_json(), media_type="application/json")
