"""`/api/health`: for load balancers and scripts waiting for the server to come up."""

from __future__ import annotations

from fastapi import APIRouter

from assay._version import __version__
from assay.server._models import Health

__all__ = ["router"]

router = APIRouter(tags=["health"])


@router.get("/health", response_model=Health)
def health() -> Health:
    """The server answers (it does not open the store)."""
    return Health(status="ok", assay_version=__version__)
