"""promptfoo's gateway and hosted-model families that speak (or front) the OpenAI protocol.

Hugging Face and TrueFoundry map onto their provider presets; Helicone, Cloudflare AI Gateway,
Databricks serving endpoints and a llama.cpp server onto `openai` (or `anthropic`) targets with
the endpoint promptfoo calls and the key variable it reads; Replicate's predictions API onto an
`http` target. The whole model name after the family is kept. watsonx has no target: its API is
neither the OpenAI protocol nor keyed by a bearer API key.
"""

from __future__ import annotations

from assay.interop.promptfoo._agents import env_value
from assay.interop.promptfoo._providers import MappedProvider
from assay.interop.promptfoo._providers import _chat as chat_target
from assay.results import JSON

__all__ = ["map_gateway"]

_HF_CHAT_KEYS = {"max_new_tokens": "max_tokens", "apiEndpoint": "base_url"}
_CLOUDFLARE_OPENAI = {
    "openai": "OPENAI_API_KEY",
    "groq": "GROQ_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "perplexity-ai": "PERPLEXITY_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "cerebras": "CEREBRAS_API_KEY",
    "grok": "XAI_API_KEY",
}
"""Cloudflare AI Gateway's OpenAI-compatible provider routes and the provider key each needs."""
_REPLICATE_INPUT = {
    "temperature": "temperature",
    "max_tokens": "max_new_tokens",
    "max_new_tokens": "max_new_tokens",
    "max_length": "max_length",
    "top_p": "top_p",
    "top_k": "top_k",
    "repetition_penalty": "repetition_penalty",
    "stop_sequences": "stop_sequences",
    "seed": "seed",
    "system_prompt": "system_prompt",
}


def map_gateway(family: str, rest: str, config: dict[str, JSON]) -> MappedProvider | None:
    """The target for one of these families' provider ids, or None for another family."""
    handler = {
        "huggingface": _huggingface,
        "truefoundry": _truefoundry,
        "helicone": _helicone,
        "cloudflare-gateway": _cloudflare,
        "databricks": _databricks,
        "llama": _llama,
        "replicate": _replicate,
    }.get(family)
    if family == "watsonx":
        return MappedProvider(
            unmapped="watsonx.ai is called with an IBM Cloud IAM token and a project id on its "
            "own text/chat API, not the OpenAI protocol; assay has no watsonx target. Put an "
            "OpenAI-compatible gateway in front of it (e.g. LiteLLM) and use an `openai` target"
        )
    return handler(rest, dict(config)) if handler else None


def _huggingface(rest: str, config: dict[str, JSON]) -> MappedProvider:
    task, _, model = rest.partition(":")
    if task not in ("chat", "text-generation") or not model:
        return MappedProvider(
            unmapped=f"Hugging Face `{task}` models are not chat models; assay has no target "
            "for that task (huggingface:chat and huggingface:text-generation convert)"
        )
    endpoint = config.pop("apiEndpoint", config.pop("apiBaseUrl", None))
    spec: dict[str, JSON] = {"type": "openai", "provider": "huggingface", "model": model}
    for key, name in _HF_CHAT_KEYS.items():
        if key in config:
            config[name] = config.pop(key)
    note = None
    if task == "text-generation":
        config.pop("chatCompletion", None)
        note = (
            "huggingface:text-generation: promptfoo sends Hugging Face's text-generation "
            "request ({inputs, parameters}) and reads `generated_text`; the target sends a "
            "chat completion to the OpenAI-compatible route (`/v1`) of the same endpoint, so "
            "the model's chat template applies"
        )
    if isinstance(endpoint, str):
        url = env_value(endpoint).rstrip("/").removesuffix("/chat/completions")
        spec["base_url"] = url if "/v1" in url else f"{url}/v1"
    mapped = chat_target(spec, config)
    if note:
        mapped.approximated.append(note)
    return mapped


def _truefoundry(rest: str, config: dict[str, JSON]) -> MappedProvider:
    spec: dict[str, JSON] = {"type": "openai", "provider": "truefoundry", "model": rest}
    dropped = [
        f"config.{key}: promptfoo sends it as TrueFoundry's `X-TFY-{header}` header; an openai "
        "target sends no custom headers (configure it on the gateway)"
        for key, header in (("metadata", "METADATA"), ("loggingConfig", "LOGGING-CONFIG"))
        if config.pop(key, None) is not None
    ]
    body = {k: config.pop(k) for k in ("mcp_servers", "iteration_limit") if k in config}
    mapped = chat_target(spec, config)
    if body:
        extra = spec.setdefault("extra_body", {})
        assert isinstance(extra, dict)
        extra.update(body)
    mapped.dropped += dropped
    return mapped


def _helicone(rest: str, config: dict[str, JSON]) -> MappedProvider:
    """promptfoo's Helicone AI Gateway provider: a self-hosted gateway (default
    `http://localhost:8080`), its `/ai` route or `/router/NAME`, models as `provider/model`."""
    base = config.pop("baseUrl", None)
    router = config.pop("router", None)
    url = env_value(base).rstrip("/") if isinstance(base, str) else "http://localhost:8080"
    url += f"/router/{router}" if isinstance(router, str) else "/ai"
    spec: dict[str, JSON] = {
        "type": "openai",
        "base_url": url,
        "api_key_env": "HELICONE_API_KEY",
        "model": rest,
    }
    return chat_target(spec, config)


def _cloudflare(rest: str, config: dict[str, JSON]) -> MappedProvider:
    """`cloudflare-gateway:PROVIDER:MODEL`: the provider's route on the gateway, called with
    the provider's own key, as promptfoo calls it."""
    provider, _, model = rest.partition(":")
    account = config.pop("accountId", None)
    gateway = config.pop("gatewayId", None)
    account_s = env_value(account) if isinstance(account, str) else "${CLOUDFLARE_ACCOUNT_ID}"
    gateway_s = env_value(gateway) if isinstance(gateway, str) else "${CLOUDFLARE_GATEWAY_ID}"
    url = f"https://gateway.ai.cloudflare.com/v1/{account_s}/{gateway_s}/{provider}"
    token = config.pop("cfAigToken", None)
    spec: dict[str, JSON]
    if provider == "anthropic":
        spec = {"type": "anthropic", "base_url": url, "model": model}
    elif provider in _CLOUDFLARE_OPENAI:
        key = _CLOUDFLARE_OPENAI[provider]
        spec = {"type": "openai", "base_url": url, "api_key_env": key, "model": model}
    else:
        return MappedProvider(
            unmapped=f"Cloudflare AI Gateway's `{provider}` route is not OpenAI-compatible "
            "(or not known to assay); use its provider's own target"
        )
    if not model:
        return MappedProvider(unmapped="the provider id names no model")
    mapped = chat_target(spec, config)
    if token is not None:
        mapped.dropped.append(
            "config.cfAigToken: an authenticated gateway needs the `cf-aig-authorization` "
            "header, which model targets do not send; turn authentication off on the gateway "
            "or call it through an `http` target"
        )
    return mapped


def _databricks(rest: str, config: dict[str, JSON]) -> MappedProvider:
    """A serving endpoint: `WORKSPACE/serving-endpoints` speaks Chat Completions."""
    workspace = config.pop("workspaceUrl", None)
    url = env_value(workspace) if isinstance(workspace, str) else "${DATABRICKS_WORKSPACE_URL}"
    config.pop("isPayPerToken", None)  # the same endpoint path either way
    spec: dict[str, JSON] = {
        "type": "openai",
        "base_url": f"{url.rstrip('/')}/serving-endpoints",
        "api_key_env": "DATABRICKS_TOKEN",
        "model": rest,
    }
    mapped = chat_target(spec, config)
    return mapped


def _llama(rest: str, config: dict[str, JSON]) -> MappedProvider:
    """promptfoo's `llama` provider posts the raw prompt to a llama.cpp server's `/completion`."""
    base = config.pop("baseUrl", config.pop("apiBaseUrl", None))
    url = env_value(base).rstrip("/") if isinstance(base, str) else "http://localhost:8080"
    if "n_predict" in config:
        config["max_tokens"] = config.pop("n_predict")
    spec: dict[str, JSON] = {
        "type": "openai",
        "base_url": f"{url}/v1",
        "api_key_env": None,
        "model": rest or "default",
    }
    mapped = chat_target(spec, config)
    mapped.approximated.append(
        "llama: promptfoo posts the prompt as raw text to the llama.cpp server's `/completion`; "
        "the target sends a chat completion to its `/v1/chat/completions`, where the server "
        "applies the model's chat template"
    )
    return mapped


def _replicate(rest: str, config: dict[str, JSON]) -> MappedProvider:
    """A language model on Replicate's predictions API, waited for in one request."""
    kind = rest.partition(":")[0]
    if kind in ("image", "moderation"):
        return MappedProvider(
            unmapped=f"Replicate `{kind}` models have no assay target (image generation, "
            "and moderation is not a system under test)"
        )
    model, _, version = rest.partition(":")
    if not model:
        return MappedProvider(unmapped="the provider id names no model")
    inputs: dict[str, JSON] = {"prompt": "{{ prompt }}"}
    for key, name in _REPLICATE_INPUT.items():
        if key in config:
            inputs[name] = config.pop(key)
    spec: dict[str, JSON] = {
        "type": "http",
        "url": "https://api.replicate.com/v1/predictions"
        if version
        else f"https://api.replicate.com/v1/models/{model}/predictions",
        "headers": {"Authorization": "Bearer ${REPLICATE_API_TOKEN}", "Prefer": "wait"},
        "body": {"version": version, "input": inputs} if version else {"input": inputs},
        "output_path": "$.output[*]",
    }
    mapped = MappedProvider(spec)
    if config.pop("apiKey", None) is not None:
        mapped.dropped.append(
            "config.apiKey: a key written in the config is not copied into the suite; export "
            "it as REPLICATE_API_TOKEN"
        )
    mapped.dropped += [f"config.{key}: not a Replicate model input assay knows" for key in config]
    mapped.approximated.append(
        "replicate: the target sends one prediction request with `Prefer: wait` and joins the "
        "streamed `output` pieces (promptfoo polls until the prediction finishes; a prediction "
        "still running after Replicate's wait errors the case). A model whose output is one "
        "string needs `output_path: $.output`"
    )
    return mapped
