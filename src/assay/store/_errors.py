"""What the store raises when a call names something missing or conflicts with what is stored.

Both are `UsageError`s, so the CLI reports them as before (exit 2); the HTTP API tells them
apart to answer 404 and 409 instead of 400.
"""

from __future__ import annotations

from assay.errors import UsageError

__all__ = ["ConflictError", "NotFoundError"]


class NotFoundError(UsageError):
    """The run, case result or pinned baseline a call names does not exist."""


class ConflictError(UsageError):
    """The call contradicts what is stored: a run id that exists, a run that is not in the
    state the call needs (e.g. pinning a run that did not complete)."""
