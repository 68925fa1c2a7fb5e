"""Embeddings are a provider call: `/embeddings` of an OpenAI-compatible endpoint, against the
local server of `assay.testing`."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from assay.errors import UsageError
from assay.providers import (
    Embeddings,
    ProviderConfig,
    RateLimitError,
    embed,
    fake_embedding,
    open_provider,
)
from assay.results import TokenUsage
from assay.testing import FakeOpenAIServer, fail_first


def embed_with(config: ProviderConfig, inputs: Sequence[str]) -> Embeddings:
    async def go() -> Embeddings:
        provider = open_provider(config, "openai")
        try:
            return await embed(provider, "embed-model", inputs)
        finally:
            await provider.close()

    return asyncio.run(go())


def test_vectors_come_back_in_input_order_with_their_token_usage() -> None:
    texts = ["first text here", "second", "third one"]
    with FakeOpenAIServer() as server:
        result = embed_with(ProviderConfig(base_url=server.base_url), texts)
        [body] = server.requests
        seen = server.seen[-1]
    assert result.vectors == [fake_embedding(t) for t in texts]
    assert result.usage == TokenUsage(input=6, output=0)
    assert body == {"model": "embed-model", "input": texts}
    assert (seen.method, seen.path) == ("POST", "/v1/embeddings")


def test_azure_embeddings_go_to_the_deployment_with_the_api_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "k")
    with FakeOpenAIServer(api_key="k") as server:
        config = ProviderConfig(
            provider="azure",
            base_url=server.url,
            api_key_env="AZURE_OPENAI_API_KEY",
            api_version="2024-10-21",
            deployment="emb",
        )
        result = embed_with(config, ["x"])
        seen = server.seen[-1]
    assert len(result.vectors) == 1
    assert (seen.path, seen.query) == (
        "/openai/deployments/emb/embeddings",
        {"api-version": "2024-10-21"},
    )


def test_a_rate_limited_embeddings_call_is_a_retryable_provider_error() -> None:
    with (
        FakeOpenAIServer(fault=fail_first(1, "429"), retry_after_s=2) as server,
        pytest.raises(RateLimitError) as caught,
    ):
        embed_with(ProviderConfig(base_url=server.base_url), ["x"])
    error = caught.value
    assert (error.retryable, error.rate_limited, error.retry_after_s) == (True, True, 2.0)
    assert error.message.startswith("rate limited (HTTP 429): ")


def test_no_inputs_make_no_request() -> None:
    with FakeOpenAIServer() as server:
        assert embed_with(ProviderConfig(base_url=server.base_url), []) == Embeddings([], None)
        assert server.request_count == 0


def test_anthropic_has_no_embeddings_and_says_what_to_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")

    async def go() -> None:
        config = ProviderConfig(provider="anthropic", api_key_env="ANTHROPIC_API_KEY", who="t")
        provider = open_provider(config, "anthropic")
        try:
            await embed(provider, "m", ["x"])
        finally:
            await provider.close()

    with pytest.raises(UsageError, match="has no embeddings API; use an OpenAI-compatible"):
        asyncio.run(go())
