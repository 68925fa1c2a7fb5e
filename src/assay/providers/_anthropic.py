"""The Anthropic Messages API through the `anthropic` SDK (`assay[anthropic]`), on its aiohttp
transport with the SDK's own retries off, as for OpenAI-compatible endpoints."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from assay.errors import UsageError
from assay.providers._base import Embeddings, Provider, ProviderConfig
from assay.providers._json_reply import json_object
from assay.providers._sdk_errors import map_sdk_error
from assay.providers._vertex import vertex_location
from assay.results import JSON

__all__ = ["AnthropicProvider", "anthropic_sdk"]

_INSTALL_HINT = "pip install 'assay[anthropic]'"


def anthropic_sdk(who: str) -> ModuleType:
    """The `anthropic` module.

    Raises:
        UsageError: It is not installed (the message names the extra).
    """
    try:
        import anthropic
    except ImportError:
        raise UsageError(
            f"{who} needs the `anthropic` SDK; install the extra: {_INSTALL_HINT}"
        ) from None
    return anthropic


def _vertex_client(
    anthropic: ModuleType, config: ProviderConfig, base_url: str, timeout: object
) -> Any:
    """The SDK's Vertex client for Claude on Vertex: it moves the model from the body into the
    `:rawPredict` path and sends the access token as a bearer token (never `x-api-key`)."""
    from anthropic.lib.vertex import AsyncAnthropicVertex

    where = vertex_location(base_url, config.who)
    return AsyncAnthropicVertex(
        region=where.region,
        project_id=where.project,
        access_token=config.api_key(),
        base_url=where.root,
        max_retries=0,
        timeout=timeout,  # type: ignore[arg-type]
        http_client=anthropic.DefaultAioHttpClient(),
    )


class AnthropicProvider(Provider):
    """Messages requests (`POST /v1/messages`) at one Anthropic endpoint."""

    def __init__(self, config: ProviderConfig, base_url: str) -> None:
        super().__init__(config, base_url)
        anthropic = anthropic_sdk(config.who)
        self._sdk = anthropic
        timeout = anthropic.DEFAULT_TIMEOUT if config.timeout_s is None else config.timeout_s
        if config.provider == "vertex-anthropic":
            self._client = _vertex_client(anthropic, config, base_url, timeout)
            return
        self._client = anthropic.AsyncAnthropic(
            api_key=config.api_key(),
            base_url=base_url,
            max_retries=0,
            timeout=timeout,
            http_client=anthropic.DefaultAioHttpClient(),
        )

    async def complete(
        self, body: dict[str, JSON], *, metadata: Mapping[str, JSON] | None = None
    ) -> dict[str, JSON]:
        """One Messages request, read as plain JSON (`cast_to=object`)."""
        del metadata
        try:
            reply = await self._client.post("/v1/messages", body=body, cast_to=object)
        except Exception as exc:
            mapped = map_sdk_error(
                exc,
                self._sdk,
                base_url=self.base_url,
                timeout_s=self.config.timeout_s,
                api_key_env=self.config.api_key_env,
            )
            if mapped is None:
                raise
            raise mapped from exc
        return json_object(reply)

    async def embed(self, model: str, inputs: Sequence[str]) -> Embeddings:
        """Anthropic has no embeddings API.

        Raises:
            UsageError: Always.
        """
        raise UsageError(
            f"{self.config.who}: the anthropic provider has no embeddings API; use an "
            "OpenAI-compatible provider (openai, mistral, together, ollama, ...) for embeddings"
        )

    async def close(self) -> None:
        """Close the SDK client and its HTTP connections."""
        await self._client.close()
