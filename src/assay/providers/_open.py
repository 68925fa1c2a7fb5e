"""Opening a provider from its configuration, and the embeddings call."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from assay.providers._base import Embeddings, Provider, ProviderConfig

__all__ = ["check_provider", "embed", "open_provider"]


def open_provider(config: ProviderConfig, wire: Literal["openai", "anthropic"]) -> Provider:
    """The provider `config` names, speaking `wire` (the format the caller builds bodies in).

    Call it inside the running event loop: the anthropic SDK client binds its transport to it
    (the OpenAI-compatible provider opens its session on its first call).

    Raises:
        UsageError: The key's variable is unset, the `anthropic` SDK (or for `bedrock`,
            `botocore`) is missing, or Azure lacks its endpoint, deployment or `api_version`.
    """
    preset = config.preset
    if preset.wire == "fake":
        from assay.providers._fake import FakeProvider

        return FakeProvider(config, wire)
    if preset.wire != wire:
        raise ValueError(f"provider '{config.provider}' speaks {preset.wire}, not {wire}")
    if preset.api == "bedrock-converse":
        from assay.providers._bedrock import BedrockProvider

        return BedrockProvider(config, config.endpoint())
    if wire == "anthropic":
        from assay.providers._anthropic import AnthropicProvider

        return AnthropicProvider(config, config.endpoint())
    from assay.providers._openai_http import OpenAICompatibleProvider

    return OpenAICompatibleProvider(config, config.endpoint())


def check_provider(config: ProviderConfig) -> None:
    """What opening `config` would refuse for a missing dependency, without opening it (the
    API key is `ProviderConfig.missing_key`'s concern): `validate` and `run` refuse alike.

    Raises:
        UsageError: The provider speaks Anthropic's wire and the `anthropic` SDK is missing, or
            it is an AWS provider and `botocore` is missing.
    """
    if config.preset.api == "bedrock-converse":
        from assay.providers._aws import require_botocore

        require_botocore(config.who)
    if config.preset.wire == "anthropic":
        from assay.providers._anthropic import anthropic_sdk

        anthropic_sdk(config.who)


async def embed(provider: Provider, model: str, inputs: Sequence[str]) -> Embeddings:
    """Embed `inputs` with `model` at `provider` (`POST /embeddings` on OpenAI-compatible
    endpoints; deterministic hashed vectors from `fake`). The `semantic-similarity` grader's
    call.

    Raises:
        ProviderError: The call failed.
        UsageError: The provider has no embeddings API (anthropic).
    """
    if not inputs:
        return Embeddings([], None)
    return await provider.embed(model, inputs)
