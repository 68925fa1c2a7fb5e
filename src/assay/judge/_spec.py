"""Which judge model to ask: the `judge:` settings and the order they resolve in.

Settings merge field by field, later levels winning: the project (`assay.yaml`), the suite,
the grader, the environment (`ASSAY_JUDGE_MODEL`, `ASSAY_JUDGE_BASE_URL`), the command line
(`--judge-model`, `--judge-base-url`). So a grader can pin a stronger model while a run can
still swap every judge for a cheaper one while iterating.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import Field, field_validator
from pydantic.config import JsonDict

from assay._strict_model import StrictModel
from assay.providers import check_preset, preset_named, preset_names
from assay.results import JSON

__all__ = ["JudgeSpec", "judge_from_env", "merge_judges"]

ENV_MODEL = "ASSAY_JUDGE_MODEL"
ENV_BASE_URL = "ASSAY_JUDGE_BASE_URL"


def _provider_names(schema: JsonDict) -> None:
    """The `provider` field's choices in the JSON schema, read when the schema is made so
    that installed provider plugins are among them."""
    schema["enum"] = [*preset_names(("openai", "anthropic", "fake"))]


class JudgeSpec(StrictModel):
    """An LLM judge: provider, model, endpoint and sampling (every field optional, so a level
    can override just one of them)."""

    provider: Annotated[str, Field(json_schema_extra=_provider_names)] | None = None
    """Which service, as for targets: `openai` (the default), `azure`, `openrouter`, `groq`,
    `together`, `fireworks`, `deepseek`, `mistral`, `gemini`, `vertex`, `huggingface`,
    `truefoundry`, `ollama`, `vllm`, `sglang`, `lmstudio`, `bedrock` (Amazon Bedrock),
    `anthropic`, `vertex-anthropic`, or `fake` (scripted offline verdicts from each test's
    `metadata.fake_judge`), or one an installed package adds (docs/plugins.md). It fills
    `base_url` and `api_key_env` (docs/providers.md)."""
    model: Annotated[str, Field(min_length=1)] | None = None
    """The judge model, e.g. `gpt-4.1-mini`; without one, no judge is configured."""
    base_url: str | None = None
    """API endpoint, e.g. `http://127.0.0.1:11434/v1` for Ollama."""
    api_key_env: str | None = None
    """Environment variable holding the API key (default: the provider's, e.g.
    `OPENAI_API_KEY`); `null` (or "") for a local server that needs no key."""
    api_version: str | None = None
    """Azure only: the `api-version` query parameter, e.g. `2024-10-21`."""
    deployment: str | None = None
    """Azure only: the deployment name; default: `model`."""
    region: str | None = None
    """Amazon Bedrock only: the AWS region; default: `AWS_REGION`, `AWS_DEFAULT_REGION`, the
    AWS profile's, else `us-east-1`."""
    temperature: Annotated[float, Field(ge=0.0, le=2.0)] | None = None
    """Sampling temperature (default 0: judges should be as repeatable as the model allows)."""
    max_tokens: Annotated[int, Field(ge=1)] | None = None
    """Upper bound on the judge's reply tokens (default 1024; Anthropic requires one)."""
    timeout_s: Annotated[float, Field(gt=0)] | None = None
    """Timeout of each judge request (default 120 s)."""
    max_retries: Annotated[int, Field(ge=0, le=10)] | None = None
    """Retries of a failed request (HTTP 429, 5xx, timeouts, dropped connections; default 3)."""
    structured_output: Literal["auto", "json_schema", "json_object", "text"] | None = None
    """How replies are constrained: `auto` (default) tries a strict JSON schema, then JSON
    mode, then reads JSON out of plain text, remembering what the server accepted."""
    cost_per_1k_input: Annotated[float, Field(ge=0.0)] | None = None
    """Price in USD of 1000 input tokens, to report the judge's `cost_usd`."""
    cost_per_1k_output: Annotated[float, Field(ge=0.0)] | None = None
    """Price in USD of 1000 output tokens."""
    extra_body: dict[str, JSON] | None = None
    """Extra request-body fields passed through as they are (provider-specific parameters)."""

    @field_validator("provider")
    @classmethod
    def _check_provider(cls, value: str | None) -> str | None:
        return value if value is None else check_preset(value)

    @field_validator("extra_body")
    @classmethod
    def _check_extra_body(cls, value: dict[str, JSON] | None) -> dict[str, JSON] | None:
        reserved = sorted(set(value or {}) & {"model", "messages", "stream", "response_format"})
        if reserved:
            raise ValueError(
                f"`extra_body` must not set {', '.join(reserved)}: the judge client sets them"
            )
        return value

    @property
    def resolved_provider(self) -> str:
        """The provider, `openai` unless set."""
        return self.provider or "openai"

    @property
    def resolved_api_key_env(self) -> str | None:
        """The key's variable; None when `api_key_env` is set to null or "" (no key needed)."""
        if "api_key_env" not in self.model_fields_set:
            return preset_named(self.resolved_provider).api_key_env
        return self.api_key_env or None

    def describe(self) -> str:
        """Provider and model, plus the endpoint when one is set."""
        where = f" at {self.base_url}" if self.base_url else ""
        return f"{self.resolved_provider} {self.model or '(no model)'}{where}"


def merge_judges(*levels: JudgeSpec | None) -> JudgeSpec | None:
    """Fold judge settings, later levels winning field by field; None when none is given."""
    merged: dict[str, JSON] = {}
    given = False
    for level in levels:
        if level is None:
            continue
        given = True
        merged.update({name: getattr(level, name) for name in level.model_fields_set})
    return JudgeSpec.model_validate(merged) if given else None


def judge_from_env(environ: Mapping[str, str] | None = None) -> JudgeSpec | None:
    """The judge settings of `ASSAY_JUDGE_MODEL` / `ASSAY_JUDGE_BASE_URL`, if either is set."""
    env = os.environ if environ is None else environ
    fields = {
        name: env[var]
        for name, var in (("model", ENV_MODEL), ("base_url", ENV_BASE_URL))
        if env.get(var)
    }
    return JudgeSpec.model_validate(fields) if fields else None
