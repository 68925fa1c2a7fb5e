"""The one seam to model APIs, below targets, judges and the conversation simulator (SPEC §3.1).

A `Provider` sends wire-format request bodies to one endpoint and returns wire-format replies;
`openai_wire` and `anthropic_wire` read them into `ModelTurn`s. Every failure is a
`ProviderError`, retried (by the caller) under the one `RetryPolicy`. Presets name the services
(`PRESETS`; installed packages add more, `provider_presets`), `fake` answers offline from
each test's `metadata`, `embed` is the embeddings call.
"""

from __future__ import annotations

from assay.providers import _wire_anthropic as anthropic_wire
from assay.providers import _wire_openai as openai_wire
from assay.providers._base import NO_API_KEY, Embeddings, Provider, ProviderConfig, Purpose
from assay.providers._errors import (
    MalformedReplyError,
    ProviderConnectionError,
    ProviderError,
    ProviderStatusError,
    ProviderTimeoutError,
    RateLimitError,
)
from assay.providers._fake import fake_embedding
from assay.providers._open import check_provider, embed, open_provider
from assay.providers._presets import (
    ANTHROPIC_PRESETS,
    OPENAI_PRESETS,
    PRESETS,
    PROVIDER_PLUGINS,
    Preset,
    Wire,
    check_preset,
    preset_named,
    preset_names,
    provider_presets,
)
from assay.providers._pricing import Pricing
from assay.providers._retry import DEFAULT_MAX_RETRIES, MAX_RETRY_DELAY_S, RetryPolicy
from assay.providers._send import complete_with_retries, send_with_retries
from assay.providers._turn import ModelTurn, TurnCall

__all__ = [
    "ANTHROPIC_PRESETS",
    "DEFAULT_MAX_RETRIES",
    "MAX_RETRY_DELAY_S",
    "NO_API_KEY",
    "OPENAI_PRESETS",
    "PRESETS",
    "PROVIDER_PLUGINS",
    "Embeddings",
    "MalformedReplyError",
    "ModelTurn",
    "Preset",
    "Pricing",
    "Provider",
    "ProviderConfig",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderStatusError",
    "ProviderTimeoutError",
    "Purpose",
    "RateLimitError",
    "RetryPolicy",
    "TurnCall",
    "Wire",
    "anthropic_wire",
    "check_preset",
    "check_provider",
    "complete_with_retries",
    "embed",
    "fake_embedding",
    "open_provider",
    "openai_wire",
    "preset_named",
    "preset_names",
    "provider_presets",
    "send_with_retries",
]
