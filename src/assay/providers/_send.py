"""One request with the one retry policy: the loop the judge client (and the conversation
simulator to come) send model requests through.

A target's retries are the runner's (it retries every target type's retryable `TargetError`
with the same `RetryPolicy` value), so the targets' tool loop sends once per model turn.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

from assay._concurrency import AdaptiveLimiter
from assay.providers._base import Provider
from assay.providers._errors import ProviderError
from assay.providers._retry import RetryPolicy
from assay.results import JSON

__all__ = ["complete_with_retries", "send_with_retries"]

T = TypeVar("T")


async def complete_with_retries(
    provider: Provider,
    body: dict[str, JSON],
    *,
    policy: RetryPolicy,
    rng: random.Random,
    limiter: AdaptiveLimiter,
    metadata: Mapping[str, JSON] | None = None,
) -> tuple[dict[str, JSON], int]:
    """Send `body`, retrying retryable failures; returns the reply and the requests sent.

    Each attempt holds a slot of `limiter`; a 429 halves it and a success lets it grow back.
    Between attempts the wait is `policy.delay` (the server's `Retry-After`, capped, or full
    jitter).

    Raises:
        ProviderError: A failure that is not retryable, or the last attempt's failure; its
            `attempts` says how many requests were sent.
    """
    return await send_with_retries(
        lambda: provider.complete(body, metadata=metadata),
        policy=policy,
        rng=rng,
        limiter=limiter,
    )


async def send_with_retries(
    send: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    rng: random.Random,
    limiter: AdaptiveLimiter,
) -> tuple[T, int]:
    """Await `send()` (one request to a provider), retrying retryable failures as
    `complete_with_retries` does; returns the result and the requests sent. The loop of every
    provider call graders make (chat, embeddings, moderation).

    Raises:
        ProviderError: A failure that is not retryable, or the last attempt's failure.
    """
    attempts = 1 + policy.max_retries
    for attempt in range(attempts):
        try:
            async with limiter:
                reply = await send()
        except ProviderError as exc:
            if exc.rate_limited:
                limiter.on_rate_limited()
            if not exc.retryable or attempt + 1 >= attempts:
                exc.attempts = attempt + 1
                raise
            await asyncio.sleep(policy.delay(attempt, exc.retry_after_s, rng))
            continue
        limiter.on_success()
        return reply, attempt + 1
    raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover
