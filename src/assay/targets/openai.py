"""The `openai` target: any OpenAI-compatible Chat Completions endpoint, through a provider.

`provider` names the service (`openai`, `azure`, `groq`, `ollama`, ... or `fake`); the provider
layer (`assay.providers`) carries the requests on the SDK's aiohttp transport with the SDK's own
retries off, so the runner alone retries retryable `TargetError`s with its backoff and
concurrency control.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, ClassVar, Literal, Self

from pydantic import Field, model_validator
from pydantic.config import JsonDict

from assay.providers import (
    ModelTurn,
    ProviderConfig,
    Wire,
    openai_wire,
    preset_named,
    preset_names,
)
from assay.results import JSON
from assay.targets._base import TargetRequest
from assay.targets._chat import ChatModelTarget

__all__ = ["OpenAITarget"]

_SAMPLING = ("temperature", "top_p", "max_tokens", "seed", "stop")


def _provider_names(schema: JsonDict) -> None:
    """The `provider` field's choices in the JSON schema, read when the schema is made so
    that installed provider plugins are among them."""
    schema["enum"] = [*preset_names(("openai", "fake"))]


class OpenAITarget(ChatModelTarget):
    """Calls a Chat Completions model: OpenAI, Azure, vLLM, Ollama, llama.cpp, OpenRouter, …

    With `tools` the model may call functions; with `tool_loop` those calls are answered from
    the test's `metadata.tool_results` and the model is called again until it answers in text.
    """

    type: Literal["openai"]
    """Target type discriminator."""
    provider: Annotated[str, Field(json_schema_extra=_provider_names)] = "openai"
    """Which OpenAI-compatible service: `openai`, `azure`, `openrouter`, `groq`, `together`,
    `fireworks`, `deepseek`, `mistral`, `gemini`, `vertex`, `huggingface`, `truefoundry`,
    `ollama`, `vllm`, `sglang`, `lmstudio`, `bedrock` (Amazon Bedrock's Converse API, signed
    with your AWS credentials), or `fake` (scripted offline replies), or one an installed
    package adds (docs/plugins.md).
    It fills `base_url` and `api_key_env` unless they are set (docs/providers.md)."""
    api_key_env: str | None = "OPENAI_API_KEY"
    """Environment variable holding the API key (default: the provider's, e.g.
    `OPENAI_API_KEY`, `GROQ_API_KEY`, none for local servers); `null` for a server without
    auth."""
    api_version: str | None = None
    """Azure only: the `api-version` query parameter, e.g. `2024-10-21`."""
    deployment: str | None = None
    """Azure only: the deployment name; default: `model`."""
    region: str | None = None
    """Amazon Bedrock only: the AWS region, e.g. `us-west-2`; default: `AWS_REGION`,
    `AWS_DEFAULT_REGION`, the AWS profile's, else `us-east-1`."""
    seed: int | None = None
    """Sampling seed, for providers that support reproducible sampling."""
    max_tokens: Annotated[int, Field(ge=1)] | None = None
    """Upper bound on generated tokens per model call (newer OpenAI models want
    `extra_body: {max_completion_tokens: N}` instead)."""

    wire: ClassVar[Literal["openai", "anthropic"]] = "openai"
    provider_wires: ClassVar[tuple[Wire, ...]] = ("openai", "fake")

    @model_validator(mode="after")
    def _check_azure(self) -> Self:
        if self.provider == "azure" and not self.api_version:
            raise ValueError(
                "provider 'azure' needs `api_version` (e.g. `api_version: 2024-10-21`), and "
                "`deployment` when it differs from `model`"
            )
        if self.provider != "azure" and (self.api_version or self.deployment):
            raise ValueError("`api_version` and `deployment` apply to `provider: azure` only")
        if self.region is not None and preset_named(self.provider).api != "bedrock-converse":
            raise ValueError("`region` applies to `provider: bedrock` only")
        return self

    def provider_config(self) -> ProviderConfig:
        """Where and how to reach the model (Azure: the deployment, default the model name;
        Bedrock: the region)."""
        config = super().provider_config()
        if self.region is not None:
            return dataclasses.replace(config, region=self.region)
        if self.provider != "azure":
            return config
        return dataclasses.replace(
            config, api_version=self.api_version, deployment=self.deployment or self.model
        )

    def first_messages(self, request: TargetRequest) -> list[JSON]:
        """System prompt, then the test's messages as Chat Completions messages."""
        return openai_wire.chat_messages(request.messages, self.system_prompt)

    def request_body(self, messages: list[JSON]) -> dict[str, JSON]:
        """Model, messages, the sampling parameters that are set, tools and `extra_body`."""
        body: dict[str, JSON] = {"model": self.model, "messages": messages}
        for name in _SAMPLING:
            value = getattr(self, name)
            if value is not None:
                body[name] = value
        if self.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        **({"description": tool.description} if tool.description else {}),
                        "parameters": tool.parameters,
                    },
                }
                for tool in self.tools
            ]
        body.update(self.extra_body)
        return body

    def follow_up(self, turn: ModelTurn, results: list[str]) -> list[JSON]:
        """The assistant's tool-calling message, then one `tool` message per result."""
        return openai_wire.follow_up(turn, results)

    def read_turn(self, reply: dict[str, JSON]) -> ModelTurn:
        """`choices[0].message` of the reply as the turn."""
        return openai_wire.read_turn(reply)
