"""Embeddings for graders (`semantic-similarity`): cached and retried like a judge's calls.

The vectors of a text do not vary between calls, so the cache key holds the provider, model,
endpoint and the texts, and no repeat index: every repeat and every run reuses them. Retries
follow the run's one `RetryPolicy`, under the judges' concurrency limit.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass

from assay._concurrency import AdaptiveLimiter
from assay.cache import ResponseCache, cache_key
from assay.providers import (
    Provider,
    ProviderConfig,
    ProviderError,
    RetryPolicy,
    embed,
    open_provider,
)
from assay.results import JSON, TokenUsage

__all__ = ["EmbeddingClient", "Vectors"]


@dataclass(frozen=True)
class Vectors:
    """One vector per text, the tokens the call used, and whether the cache answered."""

    vectors: list[list[float]]
    token_usage: TokenUsage | None
    cached: bool = False


class EmbeddingClient:
    """Embeds texts at one provider endpoint; made and closed by the run's `JudgePool`."""

    def __init__(
        self,
        config: ProviderConfig,
        *,
        cache: ResponseCache | None,
        limiter: AdaptiveLimiter,
        retry: RetryPolicy,
    ) -> None:
        self.config = config
        self._cache = cache
        self._limiter = limiter
        self._retry = retry
        self._rng = random.Random()  # noqa: S311 — backoff jitter, not secrets
        self._provider: Provider | None = None

    async def embed(self, model: str, texts: Sequence[str]) -> Vectors:
        """The vectors of `texts` with `model`.

        Raises:
            ProviderError: The call failed after its retries.
            UsageError: The provider has no embeddings API, or its key is missing.
            assay.cache.CacheMiss: Replay mode and the vectors are not cached.
        """
        provider = self._open()
        key = None
        if self._cache is not None:
            identity: dict[str, JSON] = {
                "provider": self.config.provider,
                "model": model,
                "base_url": provider.base_url,
                "input": list(texts),
            }
            key = cache_key("embedding", identity, repeat_index=0)
            hit = _from_cache(self._cache.get(key), len(texts))
            if hit is not None:
                return hit
        attempts = 1 + self._retry.max_retries
        for attempt in range(attempts):
            try:
                async with self._limiter:
                    result = await embed(provider, model, texts)
            except ProviderError as exc:
                if exc.rate_limited:
                    self._limiter.on_rate_limited()
                if not exc.retryable or attempt + 1 >= attempts:
                    exc.attempts = attempt + 1
                    raise
                await asyncio.sleep(self._retry.delay(attempt, exc.retry_after_s, self._rng))
                continue
            self._limiter.on_success()
            if key is not None and self._cache is not None:
                usage = result.usage.model_dump() if result.usage else None
                self._cache.put(
                    key, {"vectors": result.vectors, "token_usage": usage}, kind="judge"
                )
            return Vectors(result.vectors, result.usage)
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    async def close(self) -> None:
        """Close the provider's connections."""
        provider, self._provider = self._provider, None
        if provider is not None:
            await provider.close()

    def _open(self) -> Provider:
        if self._provider is None:
            self._provider = open_provider(self.config, "openai")
        return self._provider


def _from_cache(cached: JSON, count: int) -> Vectors | None:
    if not isinstance(cached, dict):
        return None
    vectors = cached.get("vectors")
    if not isinstance(vectors, list) or len(vectors) != count:
        return None
    usage = cached.get("token_usage")
    return Vectors(vectors, TokenUsage.model_validate(usage) if usage else None, cached=True)
