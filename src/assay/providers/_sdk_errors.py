"""What the model SDKs' exceptions say, mapped once to the `ProviderError` tree.

The `openai` and `anthropic` SDKs share these exception shapes (`body`, `message`,
`response.headers`, chained causes), so one reading serves both SDKs and every caller. The
aiohttp OpenAI wire (`_openai_http`) reads `Retry-After` and names broken connections with the
same functions, so its failures read as the SDK path's did.
"""

from __future__ import annotations

import email.utils
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from types import ModuleType

from assay.providers._errors import (
    ProviderConnectionError,
    ProviderError,
    ProviderStatusError,
    ProviderTimeoutError,
    RateLimitError,
)
from assay.providers._json_reply import broken_json

__all__ = [
    "connection_error",
    "connection_problem",
    "map_sdk_error",
    "retry_after_s",
    "root_cause",
    "server_message",
    "timed_out",
    "timeout_error",
]


def map_sdk_error(
    exc: Exception,
    sdk: ModuleType,
    *,
    base_url: str,
    timeout_s: float | None,
    api_key_env: str | None,
) -> ProviderError | None:
    """The `ProviderError` for an SDK (or JSON decoding) failure; None for anything else, which
    is a bug to propagate.

    Args:
        exc: What the SDK raised.
        sdk: The SDK module whose exception classes to match (`openai` or `anthropic`).
        base_url: The endpoint, named when the connection fails.
        timeout_s: The request timeout, named when it ran out (None: the SDK's default).
        api_key_env: The key's variable, named on HTTP 401/403.
    """
    if isinstance(exc, json.JSONDecodeError | sdk.APIResponseValidationError):
        return broken_json(exc)
    if isinstance(exc, sdk.RateLimitError):
        return RateLimitError(
            f"rate limited (HTTP 429): {server_message(exc)}",
            status=429,
            kind=type(exc).__name__,
            retry_after_s=retry_after_s(exc.response.headers),
        )
    if isinstance(exc, sdk.APIStatusError):
        status: int = exc.status_code
        message = f"HTTP {status}: {server_message(exc)}"
        if status in (401, 403) and api_key_env is not None:
            message += f" (the API key is read from ${api_key_env})"
        return ProviderStatusError(message, status=status, kind=type(exc).__name__)
    if isinstance(exc, sdk.APIConnectionError):
        # The aiohttp transport reports a dropped connection as a timeout: tell them apart by
        # the root cause so the message says what happened.
        if timed_out(exc, sdk.APITimeoutError):
            return timeout_error(timeout_s)
        return connection_error(base_url, exc)
    return None


def timeout_error(timeout_s: float | None) -> ProviderTimeoutError:
    """The error of a request that ran out of time (`timeout_s`: the limit, None when it is
    the client's default, which goes unnamed)."""
    after = f" after {timeout_s:g}s" if timeout_s is not None else ""
    return ProviderTimeoutError(f"the request timed out{after}", kind="APITimeoutError")


def connection_error(
    where: str, exc: BaseException, *, name_root: bool = False
) -> ProviderConnectionError:
    """The error of a connection to `where` that broke (`connection_problem` says how)."""
    return ProviderConnectionError(
        f"the connection to {where} {connection_problem(exc, name_root=name_root)}",
        kind="APIConnectionError",
    )


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


def connection_problem(exc: BaseException, *, name_root: bool = False) -> str:
    """What broke a connection, in words (for a connection error that is no timeout): refused,
    reset, or closed by the server before it replied, with the underlying error.

    The underlying error is named with its type; an SDK error without a cause is not (its own
    class says nothing more), an aiohttp error raised directly is (`name_root`)."""
    root = root_cause(exc)
    detail = f"{type(root).__name__}: {root}" if name_root or root is not exc else str(exc)
    if isinstance(root, ConnectionRefusedError):
        return f"was refused; is the server running? ({detail})"
    if isinstance(root, ConnectionResetError | ConnectionAbortedError | BrokenPipeError):
        return f"was reset by the server before it replied ({detail})"
    if type(root).__name__ == "ServerDisconnectedError":  # aiohttp's, without importing it
        return f"was closed by the server before it replied ({detail})"
    return f"failed ({detail})"
