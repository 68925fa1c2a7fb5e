"""The provider seam: one object per model endpoint that sends a wire-format request body and
returns the wire-format reply, raising only `ProviderError`s.

Callers (the model targets' tool loop, the judge client, and the conversation simulator to
come) build request bodies in the wire format the provider speaks and read replies with
`assay.providers.openai_wire` / `anthropic_wire`; what carries the bytes (aiohttp directly for
the OpenAI-compatible wire, the `anthropic` SDK on its aiohttp transport for Anthropic's) stays
behind `complete` and `embed`, so it can be swapped without touching them.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from assay.errors import UsageError
from assay.providers._presets import Preset, preset_named
from assay.providers._vertex import missing_vertex_project, vertex_chat_endpoint, vertex_location
from assay.results import JSON, TokenUsage

__all__ = ["NO_API_KEY", "Embeddings", "Provider", "ProviderConfig", "Purpose"]

NO_API_KEY = "assay-no-api-key"
"""Sent when no key is configured: the `anthropic` SDK refuses to start without one, and an
OpenAI-compatible request carries it as before; local servers ignore it."""

Purpose = Literal["target", "judge", "simulator"]
"""Who calls the provider; the `fake` provider answers each from its own `metadata` key."""


@dataclass(frozen=True)
class ProviderConfig:
    """Where and how to reach one model endpoint, resolved from a target's or judge's options.

    Args:
        provider: A preset name (`openai`, `groq`, `azure`, `anthropic`, `fake`, ...).
        base_url: The endpoint; None for the preset's (or its `*_BASE_URL` variable's).
        api_key_env: The variable holding the key; None when no key is needed.
        timeout_s: Timeout of each request; None for the SDKs' default (10 minutes).
        api_version: Azure's `api-version` query parameter.
        deployment: Azure's deployment name.
        region: The AWS region of an AWS provider (`bedrock`); None for `AWS_REGION`,
            `AWS_DEFAULT_REGION`, the profile's, else `us-east-1`.
        who: How messages name the caller (`openai target`, `judge gpt-4.1-mini`).
        key_optional: Send a placeholder when the key's variable is unset instead of failing
            (a judge at its own endpoint usually needs no key; one that does answers 401).
        purpose: Who calls; selects the `fake` provider's script.
    """

    provider: str = "openai"
    base_url: str | None = None
    api_key_env: str | None = None
    timeout_s: float | None = None
    api_version: str | None = None
    deployment: str | None = None
    region: str | None = None
    who: str = "model"
    key_optional: bool = False
    purpose: Purpose = "target"

    @property
    def preset(self) -> Preset:
        """The preset this configuration starts from."""
        return preset_named(self.provider)

    def endpoint(self) -> str:
        """The endpoint requests go to: `base_url`, else the preset's variable or default.

        For Azure this is the deployment's URL, `{endpoint}/openai/deployments/{deployment}`;
        for Vertex the project's location (`vertex`: its `/endpoints/openapi`), see `_vertex`.

        Raises:
            UsageError: Azure without an endpoint or deployment; Vertex without a project.
        """
        preset = self.preset
        if preset.name == "vertex":
            return vertex_chat_endpoint(self.base_url, self.who)
        if preset.name == "vertex-anthropic":
            return vertex_location(self.base_url, self.who).url
        env = os.environ.get(preset.base_url_env) if preset.base_url_env else None
        url = self.base_url or env or preset.base_url
        if preset.name == "azure":
            if not url:
                raise UsageError(
                    f"{self.who}: the azure provider needs your resource's endpoint: set "
                    "`base_url: https://NAME.openai.azure.com` or export AZURE_OPENAI_ENDPOINT"
                )
            if not self.deployment:
                raise UsageError(f"{self.who}: the azure provider needs a `deployment`")
            return f"{url.rstrip('/')}/openai/deployments/{self.deployment}"
        if preset.api == "bedrock-converse" and not url:
            from assay.providers._bedrock import bedrock_endpoint

            return bedrock_endpoint(self.aws_region())
        return url or ""

    def aws_region(self) -> str:
        """The AWS region requests are signed for (see `region`)."""
        from assay.providers._aws import aws_region

        return aws_region(self.region)

    def api_key(self) -> str:
        """The API key from `api_key_env` (a placeholder when none is needed).

        Raises:
            UsageError: The variable is unset or empty (and the key is not optional).
        """
        problem = self.missing_key()
        if problem is not None:
            raise UsageError(problem)
        if self.api_key_env is None:
            return NO_API_KEY
        return os.environ.get(self.api_key_env) or NO_API_KEY

    def missing_key(self) -> str | None:
        """What `api_key` would refuse, or None: `run` stops on it, `validate` warns. A Vertex
        provider without a project to build its endpoint from is reported here too."""
        if self.provider in ("vertex", "vertex-anthropic"):
            problem = missing_vertex_project(self.base_url, self.who)
            if problem is not None:
                return problem
        if self.api_key_env is None or self.key_optional or os.environ.get(self.api_key_env):
            return None
        return (
            f"{self.who}: environment variable {self.api_key_env} is not set. Export it with "
            "your API key, name another variable in `api_key_env`, or set `api_key_env: null` "
            "for a local server that needs no key"
        )


@dataclass(frozen=True)
class Embeddings:
    """One vector per input, in input order, and the tokens the call used."""

    vectors: list[list[float]]
    usage: TokenUsage | None


class Provider(ABC):
    """One model endpoint. Made by `open_provider`; one per target or judge, shared by
    concurrent calls; `close` releases its connections."""

    def __init__(self, config: ProviderConfig, base_url: str) -> None:
        self.config = config
        self.base_url = base_url
        """The resolved endpoint (named in messages and cache keys)."""

    @abstractmethod
    async def complete(
        self, body: dict[str, JSON], *, metadata: Mapping[str, JSON] | None = None
    ) -> dict[str, JSON]:
        """Send one chat request body; return the reply as parsed JSON.

        Args:
            body: The request in the wire format the provider was opened for.
            metadata: The test's `metadata` (only the `fake` provider reads it).

        Raises:
            ProviderError: The call failed; `retryable` says whether to try again.
        """

    @abstractmethod
    async def embed(self, model: str, inputs: Sequence[str]) -> Embeddings:
        """Embed `inputs` with `model` (`POST /embeddings`).

        Raises:
            ProviderError: The call failed.
            UsageError: The provider has no embeddings API.
        """

    async def moderate(self, model: str, text: str) -> dict[str, JSON]:
        """Classify `text` with a moderation model (`POST /moderations`); the reply as parsed
        JSON. Not abstract: only OpenAI-compatible endpoints have one.

        Raises:
            ProviderError: The call failed (a 404 when the server has no such endpoint).
            UsageError: The provider has no moderation API.
        """
        del model, text
        raise UsageError(
            f"{self.config.who}: the {self.config.provider} provider has no moderation endpoint"
        )

    async def prepare(self) -> None:  # noqa: B027 -- an optional hook
        """Load what the first call would (a client library, a session), for a target's
        set-up: done there, it overlaps the store's opening instead of delaying the first
        request. Default: nothing."""

    @abstractmethod
    async def close(self) -> None:
        """Release the provider's connections."""
