"""One error envelope for every error the API answers: `{"error": {type, message, details}}`.

Unknown routes, wrong methods, invalid parameters, too large bodies, missing tokens, errors
the store reports and bugs all answer with it, so a client (the studio, a CI script) has one
shape to read. A bug never leaks its traceback; the server log has it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from http import HTTPStatus
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException

from assay.config import STUDIO_CONFIG_FILE
from assay.errors import ConfigError, UsageError
from assay.results import JSON
from assay.store import ConflictError, NotFoundError, StoreUnavailableError

__all__ = [
    "ApiError",
    "ErrorBody",
    "ErrorEnvelope",
    "error_response",
    "error_responses",
    "install_error_handlers",
]

_log = logging.getLogger("assay.server")

_TYPES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_error",
    500: "internal_error",
}


class ErrorBody(BaseModel):
    """What went wrong."""

    type: str = Field(examples=["not_found"])
    """A stable, machine-readable kind: `bad_request`, `unauthorized`, `forbidden`,
    `not_found`, `method_not_allowed`, `conflict`, `payload_too_large`,
    `unsupported_media_type`, `validation_error`, `config_error`, `internal_error`."""
    message: str
    """What happened and how to fix it, for people."""
    details: JSON = None
    """More about it: the list of invalid parameters for `validation_error`, else null or
    an object."""


class ErrorEnvelope(BaseModel):
    """The body of every error response."""

    error: ErrorBody


class ApiError(HTTPException):
    """An error answer with the envelope's `type` and `details`."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str | None = None,
        details: JSON = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(status, message, headers)
        self.type = type or _TYPES.get(status, HTTPStatus(status).phrase.lower().replace(" ", "_"))
        self.details = details


def error_response(
    status: int,
    type: str,
    message: str,
    details: JSON = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """The enveloped error answer."""
    body = {"error": {"type": type, "message": message, "details": details}}
    return JSONResponse(body, status_code=status, headers=headers)


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` entries declaring the envelope for these statuses."""
    return {
        status: {"model": ErrorEnvelope, "description": HTTPStatus(status).phrase}
        for status in statuses
    }


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    status = exc.status_code
    if isinstance(exc, ApiError):
        return error_response(status, exc.type, str(exc.detail), exc.details, exc.headers)
    if status == 404:
        message = f"no such endpoint: {request.method} {request.url.path}"
    elif status == 405:
        allowed = (exc.headers or {}).get("Allow") or (exc.headers or {}).get("allow")
        message = f"{request.method} is not allowed on {request.url.path}"
        message += f"; allowed: {allowed}" if allowed else ""
    else:
        message = str(exc.detail)
    kind = _TYPES.get(status, "error")
    return error_response(status, kind, message, None, exc.headers)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    details = [
        {"loc": [str(part) for part in error.get("loc", ())], "msg": str(error.get("msg", ""))}
        | {"type": str(error.get("type", ""))}
        for error in exc.errors()
    ]
    first = details[0] if details else {"loc": [], "msg": "invalid request"}
    where = ".".join(first["loc"])
    message = f"{where}: {first['msg']}" if where else str(first["msg"])
    if len(details) > 1:
        message += f" (and {len(details) - 1} more)"
    return error_response(422, "validation_error", message, details)


def _without_paths(request: Request, message: str) -> str:
    """`message` without the server's own paths: where it keeps its data and files is none
    of a client's business (and tells an attacker where to aim)."""
    state = request.app.state.assay
    if state.store is not None:
        message = message.replace(state.store.describe(), "the run store")
    config: Path = state.config_path
    project = config.parent.parent  # the file is `.assay/config.yaml` of the project
    message = message.replace(str(config), str(STUDIO_CONFIG_FILE))
    for directory in (project, Path.cwd()):
        if directory != Path(directory.anchor):
            message = message.replace(f"{directory}{os.sep}", "").replace(str(directory), ".")
    return message


async def _usage_error(request: Request, exc: Exception) -> JSONResponse:
    message = _without_paths(request, str(exc))
    if isinstance(exc, StoreUnavailableError):  # the database, not the request: retry later
        return error_response(503, "store_unavailable", message, None, {"Retry-After": "5"})
    if isinstance(exc, NotFoundError):
        return error_response(404, "not_found", message)
    if isinstance(exc, ConflictError):
        return error_response(409, "conflict", message)
    return error_response(400, "bad_request", message)


async def _config_error(request: Request, exc: Exception) -> JSONResponse:
    # The server's own files are wrong, not the request: the operator must fix them (the
    # server's log has the full path).
    _log.error("configuration error on %s %s: %s", request.method, request.url.path, exc)
    return error_response(500, "config_error", _without_paths(request, str(exc)))


async def _internal_error(request: Request, exc: Exception) -> JSONResponse:
    _log.error("internal error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(
        500,
        "internal_error",
        "internal error: this is a bug in assay; the server log has the details",
    )


def install_error_handlers(app: FastAPI) -> None:
    """Answer every error of `app` with the envelope."""
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(ConfigError, _config_error)
    app.add_exception_handler(UsageError, _usage_error)
    app.add_exception_handler(Exception, _internal_error)
