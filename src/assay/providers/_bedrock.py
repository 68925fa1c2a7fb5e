"""The `bedrock` provider: Amazon Bedrock Runtime's Converse API, signed with SigV4.

Callers speak the Chat Completions wire to it (an `openai` target with `provider: bedrock`, a
judge with `provider: bedrock`); `_wire_converse` translates each body to Converse and the reply
back, `_aws` signs and sends it. The model id goes into the path whole and percent-encoded, so
inference profiles (`us.anthropic.claude-…`) and ARNs (`arn:aws:bedrock:…:application-inference-
profile/…`) are called as they are.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping, Sequence

from assay.errors import UsageError
from assay.providers._aws import AwsClient
from assay.providers._base import Embeddings, Provider, ProviderConfig
from assay.providers._json_reply import json_reply
from assay.providers._wire_converse import chat_reply, converse_request
from assay.results import JSON

__all__ = ["BedrockProvider", "bedrock_endpoint"]


def bedrock_endpoint(region: str) -> str:
    """Bedrock Runtime's public endpoint in `region`."""
    return f"https://bedrock-runtime.{region}.amazonaws.com"


class BedrockProvider(Provider):
    """Converse calls to one Bedrock Runtime endpoint (one region)."""

    def __init__(self, config: ProviderConfig, base_url: str) -> None:
        super().__init__(config, base_url)
        self._client = AwsClient(
            "bedrock", config.aws_region(), who=config.who, timeout_s=config.timeout_s
        )

    async def complete(
        self, body: dict[str, JSON], *, metadata: Mapping[str, JSON] | None = None
    ) -> dict[str, JSON]:
        """One Converse request for a Chat Completions `body`; the reply as Chat Completions."""
        del metadata
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise UsageError(f"{self.config.who}: a Bedrock request needs a model id")
        request = converse_request(body)
        url = f"{self.base_url.rstrip('/')}/model/{urllib.parse.quote(model, safe='')}/converse"
        data = json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode()
        raw = await self._client.post(url, data, where=self.base_url)
        return chat_reply(json_reply(raw), body)

    async def embed(self, model: str, inputs: Sequence[str]) -> Embeddings:
        """Not offered: Bedrock's embedding models answer InvokeModel in per-model formats.

        Raises:
            UsageError: Always.
        """
        del model, inputs
        raise UsageError(
            f"{self.config.who}: the bedrock provider has no embeddings call; use an "
            "OpenAI-compatible provider for semantic-similarity"
        )

    async def close(self) -> None:
        """Close the HTTP session."""
        await self._client.close()
