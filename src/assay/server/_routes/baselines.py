"""`/api/baselines`: the run pinned as each suite's baseline."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path

from assay.results import now_iso
from assay.server._errors import ApiError, error_responses
from assay.server._models import BaselineList, BaselineOut, PinRequest
from assay.server._security import require_token
from assay.server._state import StoreDep
from assay.store import Baseline

__all__ = ["router"]

router = APIRouter(prefix="/baselines", tags=["baselines"])

_Suite = Annotated[str, Path(min_length=1, max_length=500, description="The suite's name.")]


def _out(baseline: Baseline) -> BaselineOut:
    return BaselineOut(suite=baseline.suite, run_id=baseline.run_id, pinned_at=baseline.pinned_at)


@router.get("", response_model=BaselineList)
def list_baselines(store: StoreDep) -> BaselineList:
    """Every pinned baseline, by suite."""
    return BaselineList(items=[_out(b) for b in store.list_baselines()])


@router.get("/{suite:path}", response_model=BaselineOut, responses=error_responses(404, 422))
def get_baseline(suite: _Suite, store: StoreDep) -> BaselineOut:
    """The run pinned as `suite`'s baseline."""
    pinned = store.get_baseline(suite)
    if pinned is None:
        raise ApiError(
            404,
            f"suite '{suite}' has no pinned baseline; pin one with "
            f"PUT /api/baselines/{{suite}} or `assay baseline pin RUN`",
        )
    return _out(pinned)


@router.put(
    "/{suite:path}",
    response_model=BaselineOut,
    dependencies=[Depends(require_token)],
    responses=error_responses(400, 401, 403, 404, 409, 413, 422),
)
def pin_baseline(suite: _Suite, body: PinRequest, store: StoreDep) -> BaselineOut:
    """Pin a completed run of `suite` as its baseline (replacing any earlier pin)."""
    return _out(store.pin_baseline(body.run_id, pinned_at=now_iso(), suite=suite))


@router.delete(
    "/{suite:path}",
    response_model=BaselineOut,
    dependencies=[Depends(require_token)],
    responses=error_responses(401, 403, 404, 422),
)
def unpin_baseline(suite: _Suite, store: StoreDep) -> BaselineOut:
    """Unpin `suite`'s baseline; answers what was pinned."""
    return _out(store.unpin_baseline(suite))
