"""The one exception tree of model-API failures, whatever the provider or the caller.

```
AssayError
└── ProviderError             a model API call failed; `retryable` says whether to try again
    ├── ProviderStatusError   the server answered with an HTTP error status (`status`)
    │   └── RateLimitError    HTTP 429: `retry_after_s` from the server, lowers concurrency
    ├── ProviderTimeoutError  no reply within the request timeout
    ├── ProviderConnectionError  refused, reset or dropped before a reply
    └── MalformedReplyError   a reply that is not what the wire format promises
```

Targets turn a `ProviderError` into a `TargetError`, the judge client into a `JudgeError`; both
keep `message`, `kind` and the retry fields as they are, so a failure reads the same from both.
"""

from __future__ import annotations

from assay.errors import AssayError

__all__ = [
    "MalformedReplyError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderStatusError",
    "ProviderTimeoutError",
    "RateLimitError",
]


class ProviderError(AssayError):
    """A model API call failed.

    Args:
        message: What happened, without the caller's prefix (`rate limited (HTTP 429): ...`).
        kind: A short name of the failure (the SDK's exception class for HTTP errors), stored
            as the case error's type.
        retryable: Whether trying again may help (429, 408, 5xx, timeouts, dropped connections,
            broken JSON).
        retry_after_s: The server's `Retry-After`, when it sent one.
    """

    retryable_by_default = False

    def __init__(
        self,
        message: str,
        *,
        kind: str | None = None,
        retryable: bool | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind or type(self).__name__
        self.retryable = self.retryable_by_default if retryable is None else retryable
        self.retry_after_s = retry_after_s
        self.attempts = 1
        """Requests sent before giving up (set by `complete_with_retries`)."""

    @property
    def rate_limited(self) -> bool:
        """Whether the server said to slow down (HTTP 429)."""
        return False


class ProviderStatusError(ProviderError):
    """The server answered with an HTTP error status; 408 and 5xx are worth retrying."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        kind: str | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        retryable = status in (408, 429) or status >= 500
        super().__init__(message, kind=kind, retryable=retryable, retry_after_s=retry_after_s)
        self.status = status

    @property
    def rejected_request(self) -> bool:
        """HTTP 400 or 422: the server refuses this request as such (e.g. an output mode)."""
        return self.status in (400, 422)


class RateLimitError(ProviderStatusError):
    """HTTP 429: retried after the server's `Retry-After` (capped), and lowers concurrency."""

    @property
    def rate_limited(self) -> bool:
        return True


class ProviderTimeoutError(ProviderError):
    """No reply within the request timeout."""

    retryable_by_default = True


class ProviderConnectionError(ProviderError):
    """The connection was refused, reset or closed before a reply."""

    retryable_by_default = True


class MalformedReplyError(ProviderError):
    """A reply that is not what the wire format promises (broken JSON is worth retrying; a
    well-formed reply without the expected fields is not)."""
