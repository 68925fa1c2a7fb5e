"""The runner's retry policy: the one `assay.providers.RetryPolicy` the judge client uses too, so
targets and judges cap a server's `Retry-After` the same way."""

from __future__ import annotations

from assay.providers import DEFAULT_MAX_RETRIES, RetryPolicy

__all__ = ["DEFAULT_MAX_RETRIES", "RetryPolicy"]
