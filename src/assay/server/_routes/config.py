"""`/api/config`: the studio's settings in the project's `.assay/config.yaml`."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from starlette.concurrency import run_in_threadpool

from assay.config import StudioConfig, load_studio_config, save_studio_config
from assay.server._errors import error_responses
from assay.server._security import require_token
from assay.server._state import state_of

__all__ = ["router"]

router = APIRouter(prefix="/config", tags=["config"])


@router.get("", response_model=StudioConfig, responses=error_responses(500))
def get_config(request: Request) -> StudioConfig:
    """The studio's settings (defaults for what the file does not set)."""
    return load_studio_config(state_of(request).config_path)


@router.put(
    "",
    response_model=StudioConfig,
    dependencies=[Depends(require_token)],
    responses=error_responses(401, 403, 413, 422, 500),
)
async def put_config(request: Request, body: StudioConfig) -> StudioConfig:
    """Save the studio's settings (`studio.threshold`; a deprecated `pass_threshold` is
    dropped); answers them as stored."""
    path = state_of(request).config_path
    await run_in_threadpool(save_studio_config, path, body)
    return body
