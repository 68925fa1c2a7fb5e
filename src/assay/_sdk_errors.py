"""What the model SDKs' exceptions say, read the same way by targets and the judge client.

A leaf module: the `openai` and `anthropic` SDKs share these exception shapes (`body`,
`message`, `response.headers`, chained causes), so one reading serves both callers.
"""

from __future__ import annotations

import email.utils
from collections.abc import Mapping
from datetime import UTC, datetime

__all__ = ["connection_problem", "retry_after_s", "root_cause", "server_message", "timed_out"]


def server_message(exc: Exception) -> str:
    """The server's own error message: both SDKs keep the parsed error body on `body`."""
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return str(getattr(exc, "message", exc))


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """`retry-after-ms`, or `Retry-After` in seconds or as an HTTP date; None if absent."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def root_cause(exc: BaseException) -> BaseException:
    """The innermost `__cause__` of a chain of wrapped exceptions."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return exc


def timed_out(exc: BaseException, timeout_type: type[BaseException]) -> bool:
    """Whether an SDK connection error is a timeout. The aiohttp transport raises the SDK's
    timeout class (`timeout_type`) also for a refused, reset or dropped connection, so the root
    cause decides: only a root `TimeoutError`, or the timeout class with no cause, is one."""
    root = root_cause(exc)
    return isinstance(root, TimeoutError) or (root is exc and isinstance(exc, timeout_type))


def connection_problem(exc: BaseException) -> str:
    """What broke a connection, in words (for an SDK connection error that is no timeout):
    refused, reset, or closed by the server before it replied, with the underlying error."""
    root = root_cause(exc)
    detail = f"{type(root).__name__}: {root}" if root is not exc else str(exc)
    if isinstance(root, ConnectionRefusedError):
        return f"was refused; is the server running? ({detail})"
    if isinstance(root, ConnectionResetError | ConnectionAbortedError | BrokenPipeError):
        return f"was reset by the server before it replied ({detail})"
    if type(root).__name__ == "ServerDisconnectedError":  # aiohttp's, without importing it
        return f"was closed by the server before it replied ({detail})"
    return f"failed ({detail})"
