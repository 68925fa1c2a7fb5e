"""promptfoo providers as assay targets and judges (see docs/migrating-from-promptfoo.md).

A promptfoo provider id is `family:rest`; everything after the family's own prefixes is the
model name, colons included (`ollama:chat:llama3.3:8b` is the model `llama3.3:8b`).
OpenAI-compatible families become `openai` targets on the matching provider preset, or on
the family's endpoint and key variable where assay has no preset; `http` providers become
`http` targets; `file://x.py` and `exec:` providers become `command` targets that run them
with promptfoo's own calling contract (`python -m assay.interop.promptfoo.call_api`).
What cannot be carried over is reported by the caller, with what to do.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from assay.results import JSON

__all__ = ["DEFAULT_GRADER", "MappedProvider", "judge_spec", "map_provider"]

DEFAULT_GRADER: dict[str, JSON] = {"provider": "openai", "model": "gpt-5.5-2026-04-23"}
"""promptfoo's default grading provider when OPENAI_API_KEY is set (its llm-rubric,
factuality … judge), used when the config names none."""

# family -> (assay preset, prefixes that may follow the family before the model name)
_PRESET_FAMILIES: dict[str, str] = {
    "openai": "openai",
    "openrouter": "openrouter",
    "groq": "groq",
    "together": "together",
    "togetherai": "together",
    "fireworks": "fireworks",
    "deepseek": "deepseek",
    "mistral": "mistral",
    "ollama": "ollama",
    "vllm": "vllm",
    "lmstudio": "lmstudio",
    "sglang": "sglang",
    "google": "gemini",
    "gemini": "gemini",
    "azure": "azure",
    "azureopenai": "azure",
}
# OpenAI-compatible families assay has no preset for: (base_url, key variable)
_ENDPOINTS: dict[str, tuple[str, str | None]] = {
    "perplexity": ("https://api.perplexity.ai", "PERPLEXITY_API_KEY"),
    "xai": ("https://api.x.ai/v1", "XAI_API_KEY"),
    "cerebras": ("https://api.cerebras.ai/v1", "CEREBRAS_API_KEY"),
    "hyperbolic": ("https://api.hyperbolic.xyz/v1", "HYPERBOLIC_API_KEY"),
    "localai": ("http://localhost:8080/v1", None),
    "llamafile": ("http://localhost:8080/v1", None),
    "docker": ("http://localhost:12434/engines/v1", None),
    "aimlapi": ("https://api.aimlapi.com/v1", "AIMLAPI_API_KEY"),
    "cometapi": ("https://api.cometapi.com/v1", "COMETAPI_KEY"),
    "nscale": ("https://inference.api.nscale.com/v1", "NSCALE_SERVICE_TOKEN"),
    "github": ("https://models.github.ai/inference", "GITHUB_TOKEN"),
    "litellm": ("http://0.0.0.0:4000", "LITELLM_API_KEY"),
    "llamaapi": ("https://api.llama.com/compat/v1", "LLAMA_API_KEY"),
    "nvidia": ("https://integrate.api.nvidia.com/v1", "NVIDIA_API_KEY"),
    "alibaba": ("https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "DASHSCOPE_API_KEY"),
    "cohere": ("https://api.cohere.ai/compatibility/v1", "COHERE_API_KEY"),
    "vercel": ("https://ai-gateway.vercel.sh/v1", "VERCEL_AI_GATEWAY_API_KEY"),
    "moonshot": ("https://api.moonshot.ai/v1", "MOONSHOT_API_KEY"),
    "novita": ("https://api.novita.ai/v3/openai", "NOVITA_API_KEY"),
    "sambanova": ("https://api.sambanova.ai/v1", "SAMBANOVA_API_KEY"),
}
# the sub-kinds a family's id may name before the model (`openai:chat:gpt-4o`)
_CHAT_KINDS = {"chat", "messages", "completion", "responses"}
_NOT_CHAT = {
    "embedding": "an embeddings provider is not a system under test",
    "embeddings": "an embeddings provider is not a system under test",
    "image": "image generation has no assay target",
    "assistant": "OpenAI assistants have no assay target",
    "realtime": "the realtime API has no assay target",
    "moderation": "a moderation provider is not a system under test",
    "transcription": "audio transcription has no assay target",
    "video": "video generation has no assay target",
    "agents": "an agents SDK provider has no assay target",
    "codex-app-server": "an agent SDK provider has no assay target (run the agent from a "
    "`command` or `python` target)",
    "chatkit": "ChatKit workflows have no assay target",
    "live": "the Live API (streaming audio and video) has no assay target",
    "voice": "a voice model has no assay target",
    "speech": "speech synthesis has no assay target",
    "tts": "speech synthesis has no assay target",
}
_CONFIG = {
    "temperature": "temperature",
    "max_tokens": "max_tokens",
    "max_completion_tokens": "max_tokens",
    "max_output_tokens": "max_tokens",
    "top_p": "top_p",
    "seed": "seed",
    "stop": "stop",
    "apiBaseUrl": "base_url",
    "baseUrl": "base_url",
    "base_url": "base_url",
    "apiKeyEnvar": "api_key_env",
}
# config keys an OpenAI-compatible server takes in the request body, passed through as is
_BODY = {
    "frequency_penalty",
    "presence_penalty",
    "response_format",
    "reasoning_effort",
    "tool_choice",
    "parallel_tool_calls",
    "logprobs",
    "top_logprobs",
    "n",
    "user",
    "top_k",
    "repeat_penalty",
    "num_predict",
    "thinking",
}
_JS_FILE = (".js", ".cjs", ".mjs", ".ts", ".cts", ".mts")


@dataclass
class MappedProvider:
    """One provider as a target spec (or why not), and what was approximated or left out."""

    target: dict[str, JSON] | None = None
    unmapped: str | None = None
    dropped: list[str] = field(default_factory=list)
    """Parts of the provider left out (config keys), each with what to do."""
    approximated: list[str] = field(default_factory=list)


def _family(ident: str) -> tuple[str, str]:
    family, _, rest = ident.partition(":")
    return family.lower(), rest


def _chat_model(rest: str) -> str | MappedProvider:
    """The model a chat provider id (`[chat:]MODEL`) names, or the unmapped provider when the
    id names an embedding, image or other non-chat route, or no model."""
    kind = rest.partition(":")[0]
    if kind in _NOT_CHAT:
        return MappedProvider(unmapped=_NOT_CHAT[kind])
    model = _model_of(rest)
    if not model:
        return MappedProvider(unmapped="the provider id names no model")
    return model


def _model_of(rest: str) -> str:
    """The model name after an optional sub-kind: `chat:llama3.3:8b` -> `llama3.3:8b`."""
    kind, sep, model = rest.partition(":")
    return model if sep and kind in _CHAT_KINDS and model else rest


def _env_template(value: str) -> str:
    """promptfoo's `{{ env.NAME }}` as assay's `${NAME}` (read when the suite loads)."""
    return re.sub(r"\{\{\s*env\.([A-Za-z_]\w*)\s*\}\}", r"${\1}", value)


def map_provider(
    ident: str, config: dict[str, JSON], *, base: Path, out: Path | None
) -> MappedProvider:
    """The assay target for the promptfoo provider `ident` with its `config`.

    `base` is the promptfoo config's directory (promptfoo resolves files against it), `out` the
    directory the suite will be written to (paths in the target are made relative to it).
    """
    family, rest = _family(ident)
    if ident.startswith(("http://", "https://")):
        return _http(ident, config)
    if family in ("http", "https") and not rest:
        url = config.get("url")
        if isinstance(url, str):
            return _http(url, config)
        return MappedProvider(unmapped="an http provider needs `config.url`")
    if family in ("file", "python", "exec") or ident.endswith(".py"):
        return _code(ident, config, base=base, out=out)
    if family == "echo":
        return MappedProvider(
            {"type": "openai", "provider": "fake", "model": "echo"},
            approximated=[
                "`echo` became an offline `fake` target, which answers with the last user "
                "message (promptfoo's echo returns the whole rendered prompt)"
            ],
        )
    if family == "vertex":
        from assay.interop.promptfoo._google import map_vertex

        return map_vertex(rest, config)
    from assay.interop.promptfoo._agents import map_agent
    from assay.interop.promptfoo._gateways import map_gateway

    special = map_agent(family, rest, config, base=base, out=out) or map_gateway(
        family, rest, config
    )
    if special is not None:  # agent SDKs, gateways and hosted families (their own modules)
        return special
    if family == "anthropic" or family in _PRESET_FAMILIES or family in _ENDPOINTS:
        return _model_api(family, rest, config)
    if family in ("bedrock", "bedrock-agent", "sagemaker"):
        from assay.interop.promptfoo import _aws

        if family == "sagemaker":
            return _aws.map_sagemaker(rest, config, _json_path)
        return _aws.map_bedrock(family, rest, config)
    return MappedProvider(unmapped=f"assay has no target for promptfoo's `{family}` provider")


def _model_api(family: str, rest: str, config: dict[str, JSON]) -> MappedProvider:
    """A model API family: anthropic, a preset, or an OpenAI-compatible endpoint."""
    model = _chat_model(rest)
    if isinstance(model, MappedProvider):
        return model
    if family == "anthropic":
        return _chat({"type": "anthropic", "model": model}, config)
    spec: dict[str, JSON] = {"type": "openai"}
    if family in _PRESET_FAMILIES:
        if _PRESET_FAMILIES[family] != "openai":
            spec["provider"] = _PRESET_FAMILIES[family]
    else:
        url, key = _ENDPOINTS[family]
        spec.update(base_url=url, api_key_env=key)
    spec["model"] = model
    if spec.get("provider") == "azure":
        return _azure(spec, model, config)
    if spec.get("provider") == "gemini":
        from assay.interop.promptfoo._google import gemini_config

        config, dropped = gemini_config(config)
        mapped = _chat(spec, config)
        mapped.dropped += dropped
        return mapped
    return _chat(spec, config)


def _azure(spec: dict[str, JSON], model: str, config: dict[str, JSON]) -> MappedProvider:
    config = dict(config)
    host = config.pop("apiHost", None)
    if isinstance(host, str):
        spec["base_url"] = host if host.startswith("http") else f"https://{host}"
    spec["deployment"] = model
    version = config.pop("apiVersion", None)
    spec["api_version"] = version if isinstance(version, str) else "2024-10-21"
    mapped = _chat(spec, config)
    if not isinstance(version, str):
        mapped.approximated.append(
            "the Azure API version is not set in the config; the target uses 2024-10-21 "
            "(set `api_version` to the one your deployment serves)"
        )
    return mapped


def _chat(spec: dict[str, JSON], config: dict[str, JSON]) -> MappedProvider:
    """Carry the config keys the target has (and request-body keys through `extra_body`)."""
    mapped = MappedProvider(spec)
    extra: dict[str, JSON] = {}
    for key, value in config.items():
        if key in _CONFIG:
            spec[_CONFIG[key]] = _env_template(value) if isinstance(value, str) else value
        elif key in _BODY and spec["type"] == "openai":
            extra[key] = value
        else:
            problem = _chat_key(spec, key, value)
            if problem:
                mapped.dropped.append(problem)
    if extra:
        spec["extra_body"] = extra
    return mapped


def _chat_key(spec: dict[str, JSON], key: str, value: JSON) -> str | None:
    """Set one more config key on a model target, or say why it is left out."""
    if key == "systemPrompt" and isinstance(value, str):
        spec["system_prompt"] = value
        return None
    if key == "tools" and isinstance(value, list):
        tools = _tools(value)
        if tools is not None:
            spec["tools"] = tools
            return None
        return (
            "config.tools: not in OpenAI's function format; write the target's `tools` as "
            "{name, description, parameters}"
        )
    if key == "apiKey":
        return (
            "config.apiKey: a key written in the config is not copied into the suite; export "
            "it and name its variable in `api_key_env`"
        )
    return (
        f"config.{key}: no matching option on the `{spec['type']}` target; set it by hand "
        "(openai targets pass request fields through `extra_body`)"
    )


def _tools(value: list[JSON]) -> list[JSON] | None:
    out: list[JSON] = []
    for tool in value:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            return None
        spec: dict[str, JSON] = {"name": fn["name"]}
        if isinstance(fn.get("description"), str):
            spec["description"] = fn["description"]
        if isinstance(fn.get("parameters"), dict):
            spec["parameters"] = fn["parameters"]
        out.append(spec)
    return out


_SIMPLE_PATH = re.compile(r"(json|data)(\??\.[A-Za-z_]\w*|\[\d+\]|\?\.\[\d+\])*")


def _json_path(expression: str) -> str | None:
    """`json.choices[0].message.content` as the JSONPath `$.choices[0].message.content`."""
    text = expression.strip()
    arrow = re.fullmatch(r"\(?\s*json\s*\)?\s*=>\s*(.+)", text, flags=re.S)
    if arrow:
        text = arrow.group(1).strip()
    if not _SIMPLE_PATH.fullmatch(text):
        return None
    path = re.sub(r"^(json|data)", "$", text).replace("?.", ".").replace(".[", "[")
    return path


def _vars_template(value: JSON) -> JSON:
    """promptfoo body templates see the vars by name; assay's http body sees `metadata.vars`."""
    if isinstance(value, str):
        value = _env_template(value)

        def var(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in ("prompt", "messages", "metadata", "case_id", "repeat_index", "env"):
                return match.group(0)
            return match.group(0).replace(name, f"metadata.vars.{name}", 1)

        return re.sub(r"\{\{-?\s*([A-Za-z_]\w*)", var, value)
    if isinstance(value, list):
        return [_vars_template(v) for v in value]
    if isinstance(value, dict):
        return {k: _vars_template(v) for k, v in value.items()}
    return value


def _http(url: str, config: dict[str, JSON]) -> MappedProvider:
    config = dict(config)
    config.pop("url", None)
    spec: dict[str, JSON] = {"type": "http", "url": _env_template(url)}
    mapped = MappedProvider(spec)
    method = config.pop("method", None)
    if isinstance(method, str) and method.upper() in ("POST", "PUT", "GET"):
        spec["method"] = method.upper()
    elif method is not None:
        mapped.dropped.append(f"config.method {method}: the http target sends POST, PUT or GET")
    headers = config.pop("headers", None)
    if isinstance(headers, dict):
        spec["headers"] = {str(k): _header(str(v)) for k, v in headers.items()}
    _http_body(spec, mapped, config.pop("body", None))
    transform = config.pop("transformResponse", config.pop("responseParser", None))
    path = _json_path(transform) if isinstance(transform, str) else None
    spec["output_path"] = path or "$"
    if isinstance(transform, str) and path is None:
        mapped.dropped.append(
            f"config.transformResponse `{transform.strip()[:80]}`: only a plain `json.a.b[0]` "
            "path converts (to `output_path`); the target reads the whole JSON reply; set "
            "`output_path` to the JSONPath of the answer"
        )
    mapped.dropped += [
        f"config.{key}: no matching option on the http target; set it by hand" for key in config
    ]
    return mapped


def _header(value: str) -> str:
    """A header value with `{{ env.X }}` as `${X:-}`: promptfoo renders an unset variable as
    empty text and sends the request anyway, so the suite loads and sends it alike."""
    return re.sub(r"\{\{\s*env\.([A-Za-z_]\w*)\s*\}\}", r"${\1:-}", value)


def _http_body(spec: dict[str, JSON], mapped: MappedProvider, body: JSON) -> None:
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except json.JSONDecodeError:
            mapped.approximated.append(
                "config.body is text that is not JSON; it is sent as a JSON string (assay's "
                "http target sends JSON bodies)"
            )
    if body is None:
        body = {"prompt": "{{ prompt }}"}
        mapped.approximated.append("the http provider has no `body`; the target sends {prompt}")
    spec["body"] = _vars_template(body)


def _code(ident: str, config: dict[str, JSON], *, base: Path, out: Path | None) -> MappedProvider:
    """`file://x.py[:fn]`, `python:x.py`, `exec:cmd`: a command target running the shim."""
    family, rest = _family(ident)
    if family == "exec":
        argv_spec: list[JSON] = ["--exec", rest.strip()]
        kind = "exec"
    else:
        ref = rest.removeprefix("//") if family == "file" else rest
        if family not in ("file", "python"):
            ref = ident
        file, _, function = ref.partition(":")
        suffix = Path(file).suffix.lower()
        if suffix in (".ts", ".cts", ".mts"):
            return MappedProvider(
                unmapped="a TypeScript provider needs promptfoo's TypeScript loader; compile "
                "it to JavaScript (it then converts) or rewrite it as a Python `call_api`"
            )
        if suffix in _JS_FILE:
            spec_js: dict[str, JSON] = {
                "type": "command",
                "command": [
                    "python",
                    "-m",
                    "assay.interop.promptfoo.call_api",
                    "--node",
                    f"{file}:{function}" if function else file,
                ],
            }
            return _finish_code(spec_js, config, base, out, "JavaScript")
        if suffix != ".py":
            return MappedProvider(
                unmapped=f"a `{suffix or file}` provider file has no assay target; define "
                "the target by hand (`command` runs any program)"
            )
        argv_spec = [f"{file}:{function or 'call_api'}"]
        kind = "python"
    spec: dict[str, JSON] = {
        "type": "command",
        "command": ["python", "-m", "assay.interop.promptfoo.call_api", *argv_spec],
    }
    return _finish_code(spec, config, base, out, kind)


def _finish_code(
    spec: dict[str, JSON], config: dict[str, JSON], base: Path, out: Path | None, kind: str
) -> MappedProvider:
    if config:
        command = spec["command"]
        assert isinstance(command, list)
        spec["command"] = [*command, "--config", json.dumps(config, ensure_ascii=False)]
    cwd = _relative(base, out)
    if cwd != ".":
        spec["cwd"] = cwd
    runner = "node" if kind == "JavaScript" else "python"
    note = (
        f"the {kind} provider runs through `python -m assay.interop.promptfoo.call_api` "
        "(promptfoo's contract: prompt, options, context in; {output, tokenUsage, cost, "
        "error} out); `python` must be the interpreter assay is installed in"
        + (", and `node` must be on PATH" if runner == "node" else "")
    )
    return MappedProvider(spec, approximated=[note])


def _relative(base: Path, out: Path | None) -> str:
    import os

    if out is None:
        return "."
    try:
        return os.path.relpath(base.resolve(), out.resolve())
    except ValueError:  # another drive (Windows)
        return str(base.resolve())


def judge_spec(provider: JSON) -> tuple[dict[str, JSON] | None, str | None]:
    """A grading `provider` (`openai:gpt-4o`, `{id, config}`, `{text: …}`) as an assay judge
    spec, or why it cannot be one."""
    if isinstance(provider, dict) and "id" not in provider:
        provider = provider.get("text", provider.get("chat"))
    ident = provider.get("id") if isinstance(provider, dict) else provider
    config = provider.get("config") if isinstance(provider, dict) else None
    if not isinstance(ident, str):
        return None, "the grading provider must be an id or {id, config}"
    mapped = map_provider(
        ident, config if isinstance(config, dict) else {}, base=Path("."), out=None
    )
    target = mapped.target
    if target is None or target.get("type") not in ("openai", "anthropic"):
        why = mapped.unmapped or "it is not a model API"
        return None, f"grading provider '{ident}' cannot be an assay judge: {why}"
    if target.get("provider") == "fake":
        return None, f"grading provider '{ident}' cannot be an assay judge"
    judge: dict[str, JSON] = {
        "provider": target.get("provider", target["type"]),
    }
    for key in (
        "model",
        "base_url",
        "api_key_env",
        "api_version",
        "deployment",
        "region",
        "temperature",
        "max_tokens",
    ):
        if key in target:
            judge[key] = target[key]
    return judge, None
