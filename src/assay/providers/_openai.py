"""Every OpenAI-compatible endpoint (OpenAI, Azure, OpenRouter, Groq, vLLM, Ollama, ...) through
the `openai` SDK on its aiohttp transport.

httpx's connection pool collapses at the concurrency evaluations run at (SPEC §9), hence the
aiohttp transport. The SDK's own retries are off: the one `RetryPolicy` decides.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from assay.errors import UsageError
from assay.providers._base import Embeddings, Provider, ProviderConfig
from assay.providers._errors import MalformedReplyError, ProviderError
from assay.providers._sdk_errors import map_sdk_error
from assay.providers._wire_openai import read_usage
from assay.results import JSON

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["OpenAICompatibleProvider"]

_KEY_PREFIX = f"assay-{secrets.token_hex(6)}"
_REQUEST_NUMBERS = itertools.count()


class OpenAICompatibleProvider(Provider):
    """Chat Completions and embeddings at one OpenAI-compatible endpoint."""

    def __init__(self, config: ProviderConfig, base_url: str) -> None:
        super().__init__(config, base_url)
        import openai

        self._sdk = openai
        timeout = openai.DEFAULT_TIMEOUT if config.timeout_s is None else config.timeout_s
        client: AsyncOpenAI
        if config.provider == "azure":
            if not config.api_version:
                raise UsageError(
                    f"{config.who}: the azure provider needs `api_version` (e.g. 2024-10-21)"
                )
            # The Azure client sends the key as `api-key` and `api-version` on every request.
            client = openai.AsyncAzureOpenAI(
                api_key=config.api_key(),
                base_url=base_url,
                api_version=config.api_version,
                max_retries=0,
                timeout=timeout,
                http_client=openai.DefaultAioHttpClient(),
            )
        else:
            client = openai.AsyncOpenAI(
                api_key=config.api_key(),
                base_url=base_url,
                max_retries=0,
                timeout=timeout,
                http_client=openai.DefaultAioHttpClient(),
            )
        self._client = client
        # Absolute URLs, joined as the SDK joins a path to its base URL: a relative one costs
        # the SDK a second URL parse and merge per request (~30 µs).
        self._chat_url = f"{client.base_url}chat/completions"
        self._embeddings_url = f"{client.base_url}embeddings"

    async def complete(
        self, body: dict[str, JSON], *, metadata: Mapping[str, JSON] | None = None
    ) -> dict[str, JSON]:
        """One Chat Completions request.

        The body is already in wire format, so it goes through the SDK's generic `post` (the
        same client, transport, auth and errors as `chat.completions.create`) without
        `create`'s walk over its typed parameters (~0.4 ms per request), and the reply is read
        as plain JSON (`cast_to=object`). The idempotency key comes from a counter: the SDK's
        default draws a uuid4 per request (a syscall each).
        """
        del metadata
        try:
            reply = await self._client.post(
                self._chat_url,
                body=body,
                cast_to=object,
                options={"idempotency_key": f"{_KEY_PREFIX}-{next(_REQUEST_NUMBERS)}"},
            )
        except Exception as exc:
            raise self._mapped(exc) from exc
        if not isinstance(reply, dict):
            raise MalformedReplyError(
                f"the reply is not a JSON object: {str(reply)[:200]}", kind="MalformedResponse"
            )
        return reply

    async def embed(self, model: str, inputs: Sequence[str]) -> Embeddings:
        """`POST /embeddings`; the vectors are put back in input order by their `index`."""
        try:
            reply = await self._client.post(
                self._embeddings_url,
                body={"model": model, "input": list(inputs)},
                cast_to=object,
            )
        except Exception as exc:
            raise self._mapped(exc) from exc
        data = reply.get("data") if isinstance(reply, dict) else None
        vectors: list[tuple[int, list[float]]] = []
        for position, item in enumerate(data if isinstance(data, list) else []):
            vector = item.get("embedding") if isinstance(item, dict) else None
            if not isinstance(vector, list) or not all(isinstance(x, int | float) for x in vector):
                break
            index = item.get("index", position)
            vectors.append((index if isinstance(index, int) else position, vector))
        if len(vectors) != len(inputs):
            raise MalformedReplyError(
                f"the embeddings reply has {len(vectors)} vectors for {len(inputs)} inputs: "
                f"{str(reply)[:200]}",
                kind="MalformedResponse",
            )
        return Embeddings([v for _, v in sorted(vectors)], read_usage(reply))

    async def close(self) -> None:
        """Close the SDK client and its HTTP connections."""
        await self._client.close()

    def _mapped(self, exc: Exception) -> Exception:
        config = self.config
        mapped: ProviderError | None = map_sdk_error(
            exc,
            self._sdk,
            base_url=self.base_url,
            timeout_s=config.timeout_s,
            api_key_env=config.api_key_env,
        )
        return exc if mapped is None else mapped
