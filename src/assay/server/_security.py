"""Who may change data, how large a request may be, and which addresses are private.

On a loopback address only local processes reach the server. Anywhere else, and whenever a
token is configured (a reverse proxy on the same host forwards the world to loopback), every
request that changes data must carry `Authorization: Bearer $ASSAY_API_TOKEN`. Reads stay
open: the studio's pages are read-only views of the same API.
"""

from __future__ import annotations

import hmac
import ipaddress

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assay.server._errors import ApiError, error_response

__all__ = [
    "LOOPBACK_NAMES",
    "SMALL_BODY_BYTES",
    "TOKEN_ENV",
    "AllowedHosts",
    "BodyLimit",
    "TokenGate",
    "is_loopback",
    "require_token",
]

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
"""The `Host` names a server on loopback answers by default."""

SMALL_BODY_BYTES = 64 * 1024
"""Largest body of every request but an upload (`POST /api/runs`): the settings and pins
they carry are a few dozen bytes, so nobody needs more."""

_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_UPLOAD_ROUTE = ("POST", "/api/runs")

TOKEN_ENV = "ASSAY_API_TOKEN"  # noqa: S105 (the variable's name, not a secret)
"""The environment variable holding the bearer token for requests that change data."""

_bearer = HTTPBearer(
    auto_error=False,
    description=f"The server's `{TOKEN_ENV}`; required on POST, PUT and DELETE when it is set "
    "(always on a non-loopback address).",
)


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or `localhost`) is reachable only from this machine.

    `0.0.0.0` and `::` listen on every interface, so they are not; a host name other than
    `localhost` may resolve anywhere, so it is not either.
    """
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def require_token(
    request: Request,
    credentials: HTTPAuthorizationCredentials | None = Depends(_bearer),  # noqa: B008
) -> None:
    """Refuse a data-changing request without the configured bearer token (`TokenGate` has
    already refused it from the headers; this declares the scheme in the OpenAPI document).

    Raises:
        ApiError: 401 when the token is missing, 403 when it does not match.
    """
    token: str | None = request.app.state.assay.token
    if token is None:
        return
    refusal = _token_refusal(None if credentials is None else credentials.credentials, token)
    if refusal is not None:
        raise refusal


def _token_refusal(given: str | None, token: str) -> ApiError | None:
    """Why a request carrying bearer token `given` (None: none) may not change data, if so."""
    if given is None:
        return ApiError(
            401,
            f"this server requires `Authorization: Bearer <token>` (its {TOKEN_ENV}) on "
            "requests that change data",
            headers={"WWW-Authenticate": "Bearer"},
        )
    # compare_digest: how long the comparison takes says nothing about the token.
    if not hmac.compare_digest(given.encode(), token.encode()):
        return ApiError(403, f"the bearer token does not match the server's {TOKEN_ENV}")
    return None


def _bearer_token(scope: Scope) -> str | None:
    """The credentials of a well-formed `Authorization: Bearer <token>` header, else None."""
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, credentials = bytes(value).decode("latin-1").partition(" ")
            credentials = credentials.strip()
            if scheme.lower() == "bearer" and credentials:
                return credentials
            return None
    return None


class TokenGate:
    """ASGI middleware: refuse a data-changing request without the token from its headers.

    FastAPI reads (and parses) a route's body before it runs the route's dependencies, so
    `require_token` alone let anyone without the token make the server hold and parse
    large bodies. Here the answer comes before a byte of the body is read; the connection
    is then closed, so the rest of the body is never received.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in _SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        refusal = _token_refusal(_bearer_token(scope), self.token)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        await _refuse(refusal, scope, receive, send)


async def _refuse(error: ApiError, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer `error` without holding more than a small body.

    A body declared at most `SMALL_BODY_BYTES` long is read and dropped first, and the
    connection stays usable: closing a socket with unread bytes makes the kernel reset it,
    and the client may then lose the answer itself. Any other body is never read, and the
    connection is closed after the answer, so the rest of it is never received.
    """
    headers = dict(error.headers or {})
    declared = _content_length(scope)
    if declared is not None and declared <= SMALL_BODY_BYTES:
        while (await receive()).get("more_body", False):
            pass
    else:
        headers["Connection"] = "close"
    response = error_response(
        error.status_code, error.type, str(error.detail), error.details, headers
    )
    await response(scope, receive, send)


class PayloadTooLarge(ApiError):
    """A request body went past the limit while it was being received."""

    def __init__(self, limit: int, *, upload: bool) -> None:
        if upload:
            message = (
                f"the request body is larger than this server accepts ({_megabytes(limit)}); "
                "start the server with a larger --max-upload-mb"
            )
        else:
            message = (
                f"the request body is larger than this endpoint accepts ({limit:,} bytes); "
                "it takes a small JSON object"
            )
        super().__init__(413, message, details={"max_bytes": limit})


class BodyLimit:
    """ASGI middleware: refuse request bodies over their route's limit as they arrive.

    An upload (`POST /api/runs`) may be as large as `max_bytes`; every other body (settings,
    a pin) at most `small_bytes`, so a route that parses its whole body at once never
    parses much. A declared `Content-Length` over the limit is refused before any byte is
    read; a body without one (chunked) is counted while the endpoint reads it, which raises
    `PayloadTooLarge` at the first chunk past the limit, so the server never holds more.
    """

    def __init__(self, app: ASGIApp, max_bytes: int, small_bytes: int = SMALL_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.small_bytes = min(small_bytes, max_bytes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        upload = (scope["method"], scope["path"].rstrip("/")) == _UPLOAD_ROUTE
        limit = self.max_bytes if upload else self.small_bytes
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await _refuse(PayloadTooLarge(limit, upload=upload), scope, receive, send)
            return
        received = 0

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise PayloadTooLarge(limit, upload=upload)
            return message

        await self.app(scope, limited, send)


class AllowedHosts:
    """ASGI middleware: answer only requests whose `Host` names this server.

    On loopback the reads are open to every local process, and a web page in the user's
    browser could reach them by DNS rebinding (its own name re-pointed at 127.0.0.1); such a
    request still carries the page's host name, so it is refused here with a 421.
    """

    def __init__(self, app: ASGIApp, hosts: tuple[str, ...]) -> None:
        self.app = app
        self.hosts = frozenset(host.lower().strip("[]") for host in hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _host_name(scope) in self.hosts:
            await self.app(scope, receive, send)
            return
        names = ", ".join(sorted(self.hosts))
        response = error_response(
            421,
            "misdirected_request",
            f"this server answers requests addressed to {names} only; to serve another name, "
            "start it with --allowed-host NAME",
            None,
        )
        await response(scope, receive, send)


def _host_name(scope: Scope) -> str:
    """The host name of the request's `Host` header, without the port, lower-cased."""
    for name, value in scope["headers"]:
        if name == b"host":
            host = bytes(value).decode("latin-1").lower()
            if host.startswith("["):
                return host[1 : host.find("]")] if "]" in host else host
            return host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return ""


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:g} MB"
