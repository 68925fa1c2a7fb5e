"""Provider calls of graders that are not judge prompts: embeddings (`semantic-similarity`) and
moderation (`moderation`), cached and retried like a judge's calls.

Their replies do not vary between calls, so a cache key holds the provider, model, endpoint and
the texts, and no repeat index: every repeat and every run reuses them. Retries follow the
run's one `RetryPolicy` (`send_with_retries`), under the judges' concurrency limit.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from assay._concurrency import AdaptiveLimiter
from assay.cache import ResponseCache, cache_key
from assay.providers import (
    Provider,
    ProviderConfig,
    RetryPolicy,
    embed,
    open_provider,
    send_with_retries,
)
from assay.results import JSON, TokenUsage

__all__ = ["ProviderCalls", "Vectors"]


@dataclass(frozen=True)
class Vectors:
    """One vector per text, the tokens the call used, and whether the cache answered."""

    vectors: list[list[float]]
    token_usage: TokenUsage | None
    cached: bool = False


class ProviderCalls:
    """Embeddings and moderation at one provider endpoint; made and closed by the run's
    `JudgePool`."""

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
        key = self._key("embedding", provider, model, list(texts))
        cached = self._cache.get(key) if key is not None and self._cache is not None else None
        hit = _vectors_from_cache(cached, len(texts))
        if hit is not None:
            return hit
        result, _ = await send_with_retries(
            lambda: embed(provider, model, texts),
            policy=self._retry,
            rng=self._rng,
            limiter=self._limiter,
        )
        if key is not None and self._cache is not None:
            usage = result.usage.model_dump() if result.usage else None
            self._cache.put(key, {"vectors": result.vectors, "token_usage": usage}, kind="judge")
        return Vectors(result.vectors, result.usage)

    async def moderate(self, model: str, text: str) -> tuple[dict[str, JSON], bool]:
        """The moderation endpoint's reply for `text`, and whether the cache answered.

        Raises:
            ProviderError: The call failed after its retries (a 404: no such endpoint).
            UsageError: The provider has no moderation endpoint.
            assay.cache.CacheMiss: Replay mode and the reply is not cached.
        """
        provider = self._open()
        key = self._key("moderation", provider, model, text)
        cached = self._cache.get(key) if key is not None and self._cache is not None else None
        if isinstance(cached, dict):
            return cached, True
        reply, _ = await send_with_retries(
            lambda: provider.moderate(model, text),
            policy=self._retry,
            rng=self._rng,
            limiter=self._limiter,
        )
        if key is not None and self._cache is not None:
            self._cache.put(key, reply, kind="judge")
        return reply, False

    async def close(self) -> None:
        """Close the provider's connections."""
        provider, self._provider = self._provider, None
        if provider is not None:
            await provider.close()

    def _open(self) -> Provider:
        if self._provider is None:
            self._provider = open_provider(self.config, "openai")
        return self._provider

    def _key(self, kind: str, provider: Provider, model: str, given: JSON) -> str | None:
        if self._cache is None:
            return None
        identity: dict[str, JSON] = {
            "provider": self.config.provider,
            "model": model,
            "base_url": provider.base_url,
            "input": given,
        }
        return cache_key(kind, identity, repeat_index=0)


def _vectors_from_cache(cached: JSON, count: int) -> Vectors | None:
    if not isinstance(cached, dict):
        return None
    vectors = cached.get("vectors")
    if not isinstance(vectors, list) or len(vectors) != count:
        return None
    usage = cached.get("token_usage")
    return Vectors(vectors, TokenUsage.model_validate(usage) if usage else None, cached=True)
