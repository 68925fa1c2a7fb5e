"""promptfoo's Google providers: `vertex:` (Vertex AI) and the Gemini config shape.

`vertex:gemini-…` and the Model Garden's models become `openai` targets on the `vertex` preset
(Vertex's OpenAI-compatible endpoint names them `google/gemini-…`, `meta/llama-…`);
`vertex:claude-…` an `anthropic` target on `vertex-anthropic`. `config.projectId` and
`config.region` make the location (`base_url`); without them the preset reads
`VERTEX_PROJECT_ID` and `VERTEX_REGION`, as promptfoo does. A Gemini config (`generationConfig`,
`systemInstruction`, `tools: [{functionDeclarations}]`, `toolConfig`) is written the way the
OpenAI-compatible endpoint takes it. See docs/migrating-from-promptfoo.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.results import JSON

if TYPE_CHECKING:
    from assay.interop.promptfoo._providers import MappedProvider

__all__ = ["gemini_config", "map_vertex"]

_GENERATION = {
    "temperature": "temperature",
    "maxOutputTokens": "max_tokens",
    "max_output_tokens": "max_tokens",
    "topP": "top_p",
    "top_p": "top_p",
    "stopSequences": "stop",
    "stop_sequences": "stop",
    "seed": "seed",
    "presencePenalty": "presence_penalty",
    "frequencyPenalty": "frequency_penalty",
}
_MODES = {"AUTO": "auto", "ANY": "required", "NONE": "none"}
# model-name prefix -> the publisher Vertex's OpenAI-compatible endpoint names it under
_PUBLISHERS = (
    ("gemini", "google"),
    ("gemma", "google"),
    ("llama", "meta"),
    ("mistral", "mistralai"),
    ("codestral", "mistralai"),
    ("deepseek", "deepseek-ai"),
    ("qwen", "qwen"),
)


def _lower_types(schema: JSON) -> JSON:
    """Gemini's OpenAPI-style types (`OBJECT`, `STRING`) as JSON Schema's, everywhere."""
    if isinstance(schema, list):
        return [_lower_types(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {
        k: v.lower() if k == "type" and isinstance(v, str) else _lower_types(v)
        for k, v in schema.items()
    }


def _system_text(value: JSON) -> str | None:
    if isinstance(value, str):
        return value
    parts = value.get("parts") if isinstance(value, dict) else value
    if isinstance(parts, dict):
        parts = [parts]
    if isinstance(parts, list):
        texts = [p.get("text") for p in parts if isinstance(p, dict)]
        if texts and all(isinstance(t, str) for t in texts):
            return "\n".join(str(t) for t in texts)
    return None


def _functions(tools: JSON) -> tuple[list[JSON] | None, list[str]]:
    """Gemini tools as OpenAI function tools, and the provider-side ones left out."""
    if not isinstance(tools, list):
        return None, []
    out: list[JSON] = []
    built_in: list[str] = []
    for tool in tools:
        if not isinstance(tool, dict):
            return None, []
        listed = tool.get("functionDeclarations", tool.get("function_declarations"))
        if not isinstance(listed, list):
            if "function" in tool or "name" in tool:
                out.append(tool)  # already OpenAI-shaped
            else:
                built_in += sorted(tool)
            continue
        for fn in listed:
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                return None, []
            spec: dict[str, JSON] = {"name": fn["name"]}
            if isinstance(fn.get("description"), str):
                spec["description"] = fn["description"]
            schema = fn.get("parametersJsonSchema", fn.get("parameters"))
            if isinstance(schema, dict):
                spec["parameters"] = _lower_types(schema)
            out.append({"type": "function", "function": spec})
    return out, built_in


def gemini_config(config: dict[str, JSON]) -> tuple[dict[str, JSON], list[str]]:
    """A Gemini-shaped provider config as the flat OpenAI-style keys the chat mapping reads
    (`temperature`, `max_tokens`, `systemPrompt`, OpenAI `tools`, `tool_choice`,
    `response_format`), and what is left out, each with what to do. Other keys pass through."""
    flat: dict[str, JSON] = {}
    dropped: list[str] = []
    for key, value in config.items():
        if key == "generationConfig" and isinstance(value, dict):
            _generation(value, flat, dropped)
        elif key == "systemInstruction":
            text = _system_text(value)
            if text is None:
                dropped.append("config.systemInstruction: not text parts; set `system_prompt`")
            else:
                flat["systemPrompt"] = text
        elif key == "tools" and isinstance(value, list):
            _tools(value, flat, dropped)
        elif key == "toolConfig" and isinstance(value, dict):
            _tool_config(value, flat, dropped)
        elif key == "safetySettings":
            dropped.append(
                "config.safetySettings: Google's OpenAI-compatible endpoints take no safety "
                "settings; the model's defaults apply"
            )
        else:
            flat[key] = value
    return flat, dropped


def _tools(value: list[JSON], flat: dict[str, JSON], dropped: list[str]) -> None:
    tools, built_in = _functions(value)
    if tools is None:
        flat["tools"] = value
    elif tools:
        flat["tools"] = tools
    if built_in:
        dropped.append(
            f"config.tools: {', '.join(built_in)} runs on Google's side and has no "
            "OpenAI-compatible form; the target offers only the function tools"
        )


def _tool_config(value: dict[str, JSON], flat: dict[str, JSON], dropped: list[str]) -> None:
    calling = value.get("functionCallingConfig")
    mode = calling.get("mode") if isinstance(calling, dict) else None
    if isinstance(mode, str) and mode.upper() in _MODES and len(value) == 1:
        flat["tool_choice"] = _MODES[mode.upper()]
        if isinstance(calling, dict) and len(calling) == 1:
            return
    dropped.append(
        "config.toolConfig: only `functionCallingConfig.mode` converts (to `tool_choice`); "
        "set the rest in the target's `extra_body` by hand"
    )


def _generation(value: dict[str, JSON], flat: dict[str, JSON], dropped: list[str]) -> None:
    schema = value.get("responseSchema", value.get("response_schema"))
    mime = value.get("responseMimeType", value.get("response_mime_type"))
    for key, sub in value.items():
        if key in _GENERATION:
            flat[_GENERATION[key]] = sub
        elif key in ("responseSchema", "response_schema") and isinstance(sub, dict):
            flat["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "response", "schema": _lower_types(sub)},
            }
        elif key in ("responseMimeType", "response_mime_type"):
            if mime == "application/json" and schema is None:
                flat["response_format"] = {"type": "json_object"}
        else:
            dropped.append(
                f"config.generationConfig.{key}: no OpenAI-compatible equivalent; set it in "
                "the target's `extra_body` if the endpoint takes it"
            )


def _vertex_model(name: str) -> str:
    if "/" in name:
        return name
    for prefix, publisher in _PUBLISHERS:
        if name.lower().startswith(prefix):
            return f"{publisher}/{name}"
    return name


def map_vertex(rest: str, config: dict[str, JSON]) -> MappedProvider:
    """`vertex:[chat:]MODEL` as a target on the `vertex` or `vertex-anthropic` preset."""
    from assay.interop.promptfoo._providers import MappedProvider, _chat, _chat_model

    model = _chat_model(rest)
    if isinstance(model, MappedProvider):
        return model
    config = dict(config)
    project, region = config.pop("projectId", None), config.pop("region", None)
    location = None
    if isinstance(region, str) or isinstance(project, str):
        where = region if isinstance(region, str) else "${VERTEX_REGION:-us-central1}"
        who = project if isinstance(project, str) else "${VERTEX_PROJECT_ID}"
        host = (
            "aiplatform.googleapis.com"
            if where == "global"
            else f"{where}-aiplatform.googleapis.com"
        )
        location = f"https://{host}/v1/projects/{who}/locations/{where}"
    extra = config.pop("extra_body", None)
    dropped: list[str] = []
    if model.lower().startswith("claude"):
        version = config.pop("anthropic_version", None)
        if version not in (None, "vertex-2023-10-16"):
            dropped.append(
                f"config.anthropic_version {version}: the anthropic SDK's Vertex client sends "
                "vertex-2023-10-16"
            )
        spec: dict[str, JSON] = {"type": "anthropic", "provider": "vertex-anthropic"}
    else:
        config, dropped = gemini_config(config)
        spec = {"type": "openai", "provider": "vertex"}
    spec["model"] = model if spec["type"] == "anthropic" else _vertex_model(model)
    if location is not None:
        spec["base_url"] = location
    mapped = _chat(spec, config)
    mapped.dropped += dropped
    if isinstance(extra, dict) and spec["type"] == "openai":
        body = spec.setdefault("extra_body", {})
        assert isinstance(body, dict)
        body.update(extra)
    elif extra is not None:
        mapped.dropped.append("config.extra_body: set it on the target by hand")
    return mapped
