"""The app factory: the JSON API under `/api`, one error envelope, the security rules.

Everything outside `/api` is left free for the studio's pages and static files, which
`_include_routes` is the single place to add.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import APIRouter, FastAPI

from assay import studio
from assay.server._errors import ErrorEnvelope, install_error_handlers
from assay.server._routes import baselines, compare, config, health, results, reviews, runs
from assay.server._security import AllowedHosts, BodyLimit, TokenGate
from assay.server._state import AppState
from assay.store import Store

__all__ = ["API_PREFIX", "DEFAULT_MAX_UPLOAD_MB", "create_app", "openapi_document"]

API_PREFIX = "/api"
DEFAULT_MAX_UPLOAD_MB = 100
"""Largest request body by default: an export of ~100,000 small case results."""

API_VERSION = "1"
"""The version of the API's contract (not of assay): bumped when a response changes shape."""


def create_app(
    store: Store | str | Path | None = None,
    *,
    token: str | None = None,
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_MB * 1_000_000,
    config_path: Path | None = None,
    allowed_hosts: Sequence[str] | None = None,
) -> FastAPI:
    """The ASGI app of `assay serve`.

    Args:
        store: An open store (the caller closes it), or where one is (a path or database
            URL; None: `$ASSAY_DATABASE_URL`, the project's `store:`, `.assay/assay.db`),
            opened on first use and closed when the app shuts down.
        token: When set, every request that changes data needs `Authorization: Bearer
            <token>`. `assay serve` requires one on a non-loopback address.
        max_upload_bytes: Largest upload accepted (`POST /api/runs`; 413 beyond it);
            every other request body is limited to `SMALL_BODY_BYTES` (64 KiB).
        config_path: The studio config file (default: `.assay/config.yaml` of the project).
        allowed_hosts: When given, only requests whose `Host` is one of these names are
            answered (421 otherwise); `assay serve` on loopback passes the loopback names,
            which stops DNS-rebinding pages from reading the runs.
    """
    from assay.config import studio_config_path

    location: str | Path | None = None
    given: Store | None = None
    if store is None or isinstance(store, str | Path):
        location = store
    else:
        given = store
    state = AppState(
        location=location,
        token=token or None,
        max_upload_bytes=max_upload_bytes,
        config_path=config_path or studio_config_path(),
        store=given,
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            state.close()

    app = FastAPI(
        title="assay",
        version=API_VERSION,
        summary="Stored evaluation runs of assay: runs, case results, comparisons, baselines.",
        openapi_url=f"{API_PREFIX}/openapi.json",
        # No Swagger UI or ReDoc page: FastAPI's load their scripts from a CDN, which a
        # page of this origin must not run; the document itself is served for any viewer.
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
        responses={500: {"model": ErrorEnvelope, "description": "Internal Server Error"}},
    )
    app.state.assay = state
    install_error_handlers(app)
    # The last added runs first: the Host, then the token, then the body's size.
    app.add_middleware(BodyLimit, max_bytes=max_upload_bytes)
    if state.token is not None:
        app.add_middleware(TokenGate, token=state.token)
    if allowed_hosts is not None:
        app.add_middleware(AllowedHosts, hosts=tuple(allowed_hosts))
    _include_routes(app)
    return app


def _include_routes(app: FastAPI) -> None:
    """Every route of the app. The studio mounts its pages and `/static` here too."""
    api = APIRouter(prefix=API_PREFIX)
    # compare before runs: `/runs/compare` must not be read as the run id "compare".
    for module in (health, compare, runs, reviews, results, baselines, config):
        api.include_router(module.router)
    app.include_router(api)
    app.include_router(studio.router)


def openapi_document() -> str:
    """The API's OpenAPI document as committed in `schema/openapi.json` (no store opened)."""
    app = create_app(config_path=Path("unused"))
    return json.dumps(app.openapi(), indent=2, ensure_ascii=False) + "\n"
