"""The Anthropic Messages API through the `anthropic` SDK (`assay[anthropic]`), on its aiohttp
transport with the SDK's own retries off, as for OpenAI-compatible endpoints."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType

from assay.errors import UsageError
from assay.providers._base import Embeddings, Provider, ProviderConfig
from assay.providers._errors import MalformedReplyError
from assay.providers._sdk_errors import map_sdk_error
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


class AnthropicProvider(Provider):
    """Messages requests (`POST /v1/messages`) at one Anthropic endpoint."""

    def __init__(self, config: ProviderConfig, base_url: str) -> None:
        super().__init__(config, base_url)
        anthropic = anthropic_sdk(config.who)
        self._sdk = anthropic
        self._client = anthropic.AsyncAnthropic(
            api_key=config.api_key(),
            base_url=base_url,
            max_retries=0,
            timeout=anthropic.DEFAULT_TIMEOUT if config.timeout_s is None else config.timeout_s,
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
        if not isinstance(reply, dict):
            raise MalformedReplyError(
                f"the reply is not a JSON object: {str(reply)[:200]}", kind="MalformedResponse"
            )
        return reply

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
