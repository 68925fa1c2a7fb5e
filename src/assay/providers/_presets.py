"""Named providers: the endpoint and API-key variable each one fills in.

Every OpenAI-compatible service differs from OpenAI only in where it listens and which
variable holds its key, so a preset is just those two (plus, for Azure, the deployment path and
`api-version` query). `base_url` and `api_key_env` in a suite still win over a preset's.
Installed packages add presets through the `assay.providers` entry-point group
(`PROVIDER_PLUGINS`, `provider_presets`), taken by name exactly like the built-in ones.
"""

from __future__ import annotations

import functools
from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

from assay._plugins import PluginEntry, PluginSpec, described, load_plugins
from assay._strict_model import suggest
from assay.errors import PluginError

__all__ = [
    "ANTHROPIC_PRESETS",
    "OPENAI_PRESETS",
    "PRESETS",
    "PROVIDER_PLUGINS",
    "Preset",
    "Wire",
    "check_preset",
    "preset_named",
    "preset_names",
    "provider_presets",
]

Wire = Literal["openai", "anthropic", "fake"]
"""The protocol a provider speaks: Chat Completions, Anthropic Messages, or none (offline)."""


@dataclass(frozen=True)
class Preset:
    """What a provider name fills in."""

    name: str
    wire: Wire
    base_url: str | None
    """Default endpoint; None when the user must give one (Azure: the resource's endpoint) or
    it is built per project (Vertex: from `VERTEX_PROJECT_ID` and `VERTEX_REGION`)."""
    api_key_env: str | None
    """Default key variable; None for local servers that need no key."""
    base_url_env: str | None = None
    """A variable that overrides the default endpoint, as the vendor's own SDK reads it."""
    title: str = ""
    """How the docs name the service."""
    api: str | None = None
    """The service's own API when it is not the wire itself: `bedrock-converse` (callers
    build Chat Completions bodies; the provider translates them to Bedrock's Converse API and
    signs them for AWS). Such a provider has no `/embeddings` or `/moderations` endpoint."""

    @property
    def chat_completions_api(self) -> bool:
        """Whether the endpoint is a real Chat Completions API, with `/embeddings` and
        `/moderations` beside it."""
        return self.wire == "openai" and self.api is None


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("openai", "openai", "https://api.openai.com/v1", "OPENAI_API_KEY",
               "OPENAI_BASE_URL", "OpenAI"),
        Preset("azure", "openai", None, "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT",
               "Azure OpenAI"),
        Preset("openrouter", "openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY",
               title="OpenRouter"),
        Preset("groq", "openai", "https://api.groq.com/openai/v1", "GROQ_API_KEY",
               title="Groq"),
        Preset("together", "openai", "https://api.together.xyz/v1", "TOGETHER_API_KEY",
               title="Together AI"),
        Preset("fireworks", "openai", "https://api.fireworks.ai/inference/v1",
               "FIREWORKS_API_KEY", title="Fireworks AI"),
        Preset("deepseek", "openai", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY",
               title="DeepSeek"),
        Preset("mistral", "openai", "https://api.mistral.ai/v1", "MISTRAL_API_KEY",
               title="Mistral AI"),
        Preset("gemini", "openai", "https://generativelanguage.googleapis.com/v1beta/openai",
               "GEMINI_API_KEY", title="Google Gemini (OpenAI-compatible endpoint)"),
        Preset("huggingface", "openai", "https://router.huggingface.co/v1", "HF_TOKEN",
               title="Hugging Face Inference Providers"),
        Preset("truefoundry", "openai", "https://llm-gateway.truefoundry.com",
               "TRUEFOUNDRY_API_KEY", title="TrueFoundry AI Gateway"),
        Preset("vertex", "openai", None, "VERTEX_ACCESS_TOKEN",
               title="Google Vertex AI (Gemini and Model Garden, OpenAI-compatible endpoint)"),
        Preset("ollama", "openai", "http://127.0.0.1:11434/v1", None, title="Ollama"),
        Preset("vllm", "openai", "http://127.0.0.1:8000/v1", None, title="vLLM"),
        Preset("sglang", "openai", "http://127.0.0.1:30000/v1", None, title="SGLang"),
        Preset("lmstudio", "openai", "http://127.0.0.1:1234/v1", None, title="LM Studio"),
        Preset("bedrock", "openai", None, None, "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
               "Amazon Bedrock (Converse API)", api="bedrock-converse"),
        Preset("anthropic", "anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY",
               "ANTHROPIC_BASE_URL", "Anthropic"),
        Preset("vertex-anthropic", "anthropic", None, "VERTEX_ACCESS_TOKEN",
               title="Claude on Google Vertex AI"),
        Preset("fake", "fake", None, None, title="fake (scripted, offline)"),
    )
}  # fmt: skip
"""The built-in providers; `provider_presets` adds those installed packages declare."""

OPENAI_PRESETS = sorted(n for n, p in PRESETS.items() if p.wire != "anthropic")
"""The built-in names an `openai` target accepts (every OpenAI-compatible service, and `fake`);
`preset_names` adds the installed plugins'."""
ANTHROPIC_PRESETS = sorted(n for n, p in PRESETS.items() if p.wire != "openai")
"""The built-in names an `anthropic` target accepts (`anthropic`, `vertex-anthropic`, and
`fake`)."""


def _plugin_preset(entry: PluginEntry, obj: object) -> str | None:
    """What is wrong with `obj` as the provider named `entry.name`: it must be a `Preset` of
    that name speaking a real wire (`fake` is assay's own)."""
    if not isinstance(obj, Preset):
        return f"it gives {described(obj)}, not an assay.providers.Preset"
    if obj.name != entry.name:
        return f"its Preset is named '{obj.name}'; name it '{entry.name}', as its entry point"
    if obj.wire not in ("openai", "anthropic"):
        return f"its Preset speaks '{obj.wire}'; a provider plugin speaks 'openai' or 'anthropic'"
    if obj.api not in (None, "bedrock-converse"):
        return f"its Preset has api '{obj.api}'; a provider plugin has none or 'bedrock-converse'"
    if obj.base_url is None and obj.base_url_env is None and obj.api is None:
        return "its Preset has neither base_url nor base_url_env: no endpoint to call"
    return None


PROVIDER_PLUGINS = PluginSpec("provider", PRESETS, _plugin_preset)
"""How provider plugins are taken: a `Preset` under a name no built-in provider has."""


@functools.cache
def provider_presets() -> dict[str, Preset]:
    """Every provider a target or a judge accepts: the built-ins, then the presets installed
    packages add (entry point group `assay.providers`), loaded once per process.

    Raises:
        PluginError: a provider plugin cannot be loaded, is not a Preset, or reuses a name.
    """
    loaded = load_plugins(PROVIDER_PLUGINS)  # each a Preset: `_plugin_preset` checked it
    return {**PRESETS, **{n: p for n, p in loaded.items() if isinstance(p, Preset)}}


def preset_named(name: str) -> Preset:
    """The provider called `name`, built-in or plugin (a name `check_preset` accepted).

    Raises:
        KeyError: no provider has that name.
    """
    builtin = PRESETS.get(name)
    return builtin if builtin is not None else provider_presets()[name]


def preset_names(wires: Collection[Wire]) -> list[str]:
    """The providers speaking one of `wires`, plugins included, sorted: the `enum` of a
    `provider` field in `assay schema`, which editors offer. A plugin that cannot be loaded
    is left out here (validating a suite that names it reports why)."""
    try:
        presets = provider_presets()
    except PluginError:
        presets = PRESETS
    return sorted(n for n, p in presets.items() if p.wire in wires)


def check_preset(name: str, wires: Collection[Wire] | None = None) -> str:
    """`name` if it is a known provider (speaking one of `wires`), else a ValueError saying
    which are. Installed provider plugins count, so they are suggested too.

    Raises:
        ValueError: The name is unknown, with "did you mean" and the list of known names.
        PluginError: an installed provider plugin is broken (looked up for an unknown name).
    """
    builtin = PRESETS.get(name)
    if builtin is not None and (wires is None or builtin.wire in wires):
        return name
    presets = provider_presets()
    known = [n for n, p in presets.items() if wires is None or p.wire in wires]
    if name in known:
        return name
    if name in presets:
        raise ValueError(
            f"provider '{name}' speaks the {presets[name].wire} protocol, which this target "
            f"type does not; use one of: {', '.join(known)}"
        )
    raise ValueError(
        f"unknown provider '{name}'.{suggest(name, set(known))} Known providers: {', '.join(known)}"
    )
