"""Named providers: the endpoint and API-key variable each one fills in.

Every OpenAI-compatible service differs from OpenAI only in where it listens and which
variable holds its key, so a preset is just those two (plus, for Azure, the deployment path and
`api-version` query). `base_url` and `api_key_env` in a suite still win over a preset's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from assay._strict_model import suggest

__all__ = [
    "ANTHROPIC_PRESETS",
    "OPENAI_PRESETS",
    "PRESETS",
    "Preset",
    "Wire",
    "check_preset",
]

Wire = Literal["openai", "anthropic", "fake"]
"""The protocol a provider speaks: Chat Completions, Anthropic Messages, or none (offline)."""


@dataclass(frozen=True)
class Preset:
    """What a provider name fills in."""

    name: str
    wire: Wire
    base_url: str | None
    """Default endpoint; None when the user must give one (Azure: the resource's endpoint)."""
    api_key_env: str | None
    """Default key variable; None for local servers that need no key."""
    base_url_env: str | None = None
    """A variable that overrides the default endpoint, as the vendor's own SDK reads it."""
    title: str = ""
    """How the docs name the service."""


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
        Preset("ollama", "openai", "http://127.0.0.1:11434/v1", None, title="Ollama"),
        Preset("vllm", "openai", "http://127.0.0.1:8000/v1", None, title="vLLM"),
        Preset("sglang", "openai", "http://127.0.0.1:30000/v1", None, title="SGLang"),
        Preset("lmstudio", "openai", "http://127.0.0.1:1234/v1", None, title="LM Studio"),
        Preset("anthropic", "anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY",
               "ANTHROPIC_BASE_URL", "Anthropic"),
        Preset("fake", "fake", None, None, title="fake (scripted, offline)"),
    )
}  # fmt: skip
"""Every provider name a target or a judge accepts."""

OPENAI_PRESETS = sorted(n for n, p in PRESETS.items() if p.wire != "anthropic")
"""The names an `openai` target accepts (every OpenAI-compatible service, and `fake`)."""
ANTHROPIC_PRESETS = sorted(n for n, p in PRESETS.items() if p.wire != "openai")
"""The names an `anthropic` target accepts (`anthropic`, and `fake`)."""


def check_preset(name: str, allowed: list[str] | None = None) -> str:
    """`name` if it is a known provider (among `allowed`), else a ValueError saying which are.

    Raises:
        ValueError: The name is unknown, with "did you mean" and the list of known names.
    """
    known = list(PRESETS) if allowed is None else allowed
    if name in known:
        return name
    if name in PRESETS:
        raise ValueError(
            f"provider '{name}' speaks the {PRESETS[name].wire} protocol, which this target "
            f"type does not; use one of: {', '.join(known)}"
        )
    raise ValueError(
        f"unknown provider '{name}'.{suggest(name, set(known))} Known providers: {', '.join(known)}"
    )
