"""Amazon Bedrock's Converse API, translated from and to the Chat Completions wire.

Converse is Bedrock's one request shape for every chat model it hosts (Anthropic, Meta Llama,
Mistral, Amazon Nova and Titan, AI21, Cohere, DeepSeek, Qwen, OpenAI's gpt-oss, …), so callers
keep building Chat Completions bodies — the `openai` target's tool loop, the judge client —
and the `bedrock` provider translates them here and the replies back. What has a Converse
equivalent is carried: system messages, text and base64 image parts, tool calls and results,
`max_tokens`, `temperature`, `top_p`, `stop`, tools and `tool_choice`. A strict JSON
`response_format` becomes a forced tool whose input is returned as the reply's text (how
Anthropic-style models give structured output); JSON mode has no Converse equivalent and is
left to the prompt. Converse's own top-level fields given in `extra_body` pass through; any
other field goes into `additionalModelRequestFields`, Converse's place for model-specific
parameters (`top_k`, `thinking`, `reasoningConfig`, …).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from typing import Any

from assay.providers._errors import MalformedReplyError, ProviderError
from assay.results import JSON

__all__ = ["chat_reply", "converse_request"]

_CHAT_FIELDS = {
    "model",
    "messages",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "stop",
    "tools",
    "tool_choice",
    "response_format",
    "stream",
    "seed",
    "n",
    "parallel_tool_calls",
}
"""Chat Completions fields translated here (or, `seed`, `n`, `parallel_tool_calls`, left out:
Converse has no such setting)."""
_CONVERSE_FIELDS = {
    "additionalModelRequestFields",
    "additionalModelResponseFieldPaths",
    "guardrailConfig",
    "performanceConfig",
    "promptVariables",
    "requestMetadata",
    "serviceTier",
}
_DATA_URL = re.compile(r"data:image/(?P<format>[a-z]+);base64,(?P<data>.*)", re.S)
_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
}


def converse_request(body: Mapping[str, JSON]) -> dict[str, JSON]:
    """A Chat Completions request body as a Converse request (the model goes in the URL).

    Raises:
        ProviderError: A message part Converse cannot carry (an image by URL rather than
            inline, audio), kind `UnsupportedContent`.
    """
    system, messages = _conversation(body)
    request: dict[str, JSON] = {"messages": list(messages)}
    if system:
        request["system"] = system
    inference = _inference(body)
    if inference:
        request["inferenceConfig"] = inference
    tool_config = _tool_config(body)
    if tool_config:
        request["toolConfig"] = tool_config
    extra: dict[str, JSON] = {}
    for key, value in body.items():
        if key in _CHAT_FIELDS:
            continue
        if key in _CONVERSE_FIELDS:
            request[key] = value
        elif key == "inferenceConfig" and isinstance(value, dict):
            request["inferenceConfig"] = {**value, **inference}
        elif key == "toolConfig" and isinstance(value, dict) and not tool_config:
            request["toolConfig"] = value
        else:
            extra[key] = value
    if extra:
        given = request.get("additionalModelRequestFields")
        request["additionalModelRequestFields"] = {
            **extra,
            **(given if isinstance(given, dict) else {}),
        }
    return request


def _conversation(body: Mapping[str, JSON]) -> tuple[list[JSON], list[dict[str, Any]]]:
    """The system blocks and the Converse messages of a Chat Completions body."""
    system: list[JSON] = []
    messages: list[dict[str, Any]] = []
    raw_messages = body.get("messages")
    for message in raw_messages if isinstance(raw_messages, list) else []:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role in ("system", "developer"):
            system.extend(_blocks(message.get("content")))
            continue
        if role == "tool":
            result: JSON = {
                "toolResult": {
                    "toolUseId": str(message.get("tool_call_id", "")),
                    "content": [{"text": _text(message.get("content"))}],
                }
            }
            _append(messages, "user", [result])
            continue
        blocks = _blocks(message.get("content"))
        if role == "assistant":
            blocks.extend(_tool_use(call) for call in _list(message.get("tool_calls")))
            _append(messages, "assistant", blocks)
        else:
            _append(messages, "user", blocks)
    return system, messages


def chat_reply(reply: Mapping[str, Any], body: Mapping[str, JSON]) -> dict[str, JSON]:
    """A Converse reply as a Chat Completions reply (what `openai_wire.read_turn` reads).

    The forced tool of a `response_format` request comes back as the message's text.

    Raises:
        MalformedReplyError: The reply has no `output.message.content`.
    """
    output = reply.get("output")
    message = output.get("message") if isinstance(output, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        raise MalformedReplyError(
            f"the Converse reply has no output.message.content: {str(reply)[:200]}",
            kind="MalformedResponse",
        )
    forced = _forced_tool(body)
    texts: list[str] = []
    calls: list[JSON] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if isinstance(block.get("text"), str):
            texts.append(block["text"])
        use = block.get("toolUse")
        if isinstance(use, dict):
            if forced is not None:  # the one tool the request allowed: the answer
                texts = [json.dumps(use.get("input", {}), ensure_ascii=False)]
                continue
            calls.append(
                {
                    "id": str(use.get("toolUseId", "")),
                    "type": "function",
                    "function": {
                        "name": str(use.get("name", "")),
                        "arguments": json.dumps(use.get("input", {}), ensure_ascii=False),
                    },
                }
            )
    stop = str(reply.get("stopReason", "end_turn"))
    wire: dict[str, JSON] = {"role": "assistant", "content": "".join(texts) if texts else None}
    if calls:
        wire["tool_calls"] = calls
    if stop in ("guardrail_intervened", "content_filtered") and not calls:
        wire["refusal"] = "".join(texts) or f"Bedrock stopped the reply: {stop}"
    chat: dict[str, JSON] = {
        "object": "chat.completion",
        "model": body.get("model"),
        "choices": [
            {
                "index": 0,
                "message": wire,
                "finish_reason": "tool_calls" if calls else _STOP_REASONS.get(stop, stop),
            }
        ],
    }
    usage = reply.get("usage")
    if isinstance(usage, dict):
        chat["usage"] = {
            "prompt_tokens": _int(usage.get("inputTokens")),
            "completion_tokens": _int(usage.get("outputTokens")),
        }
    return chat


def _append(messages: list[dict[str, Any]], role: str, blocks: list[JSON]) -> None:
    """Add blocks as a message of `role`, merged into the previous one of the same role:
    Converse wants user and assistant turns to alternate (several tool results are one
    user turn)."""
    if not blocks:
        blocks = [{"text": ""}]
    if messages and messages[-1]["role"] == role:
        messages[-1]["content"].extend(blocks)
    else:
        messages.append({"role": role, "content": list(blocks)})


def _blocks(content: object) -> list[JSON]:
    """Chat content (a string or a list of parts) as Converse content blocks."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"text": content}] if content else []
    blocks: list[JSON] = []
    for part in _list(content):
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("text", "input_text") and isinstance(part.get("text"), str):
            blocks.append({"text": part["text"]})
        elif kind == "image_url":
            blocks.append(_image(part.get("image_url")))
        else:
            raise ProviderError(
                f"Bedrock's Converse API takes text and inline images; a '{kind}' message "
                "part cannot be sent",
                kind="UnsupportedContent",
            )
    return blocks


def _image(image_url: object) -> JSON:
    url = image_url.get("url") if isinstance(image_url, dict) else image_url
    match = _DATA_URL.fullmatch(url) if isinstance(url, str) else None
    if match is None:
        raise ProviderError(
            "Bedrock's Converse API takes images inline (a `data:image/...;base64,` URL), not "
            f"by address: {str(url)[:80]}",
            kind="UnsupportedContent",
        )
    data = match.group("data").strip()
    base64.b64decode(data, validate=False)  # a broken payload fails here, not at AWS
    fmt = match.group("format").lower()
    return {"image": {"format": "jpeg" if fmt == "jpg" else fmt, "source": {"bytes": data}}}


def _tool_use(call: object) -> JSON:
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(call, dict) or not isinstance(function, dict):
        return {"text": ""}
    raw = function.get("arguments") or "{}"
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        args = {}
    return {
        "toolUse": {
            "toolUseId": str(call.get("id", "")),
            "name": str(function.get("name", "")),
            "input": args if isinstance(args, dict) else {},
        }
    }


def _inference(body: Mapping[str, JSON]) -> dict[str, JSON]:
    inference: dict[str, JSON] = {}
    max_tokens = body.get("max_tokens", body.get("max_completion_tokens"))
    if isinstance(max_tokens, int):
        inference["maxTokens"] = max_tokens
    for source, target in (("temperature", "temperature"), ("top_p", "topP")):
        value = body.get(source)
        if isinstance(value, int | float):
            inference[target] = value
    stop = body.get("stop")
    if isinstance(stop, str):
        inference["stopSequences"] = [stop]
    elif isinstance(stop, list):
        inference["stopSequences"] = [s for s in stop if isinstance(s, str)]
    return inference


def _forced_tool(body: Mapping[str, JSON]) -> str | None:
    """The tool name a strict `response_format` is sent as, or None."""
    fmt = body.get("response_format")
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        return None
    schema = fmt.get("json_schema")
    name = schema.get("name") if isinstance(schema, dict) else None
    return str(name) if isinstance(name, str) and name else "structured_reply"


def _tool_config(body: Mapping[str, JSON]) -> dict[str, JSON] | None:
    forced = _forced_tool(body)
    if forced is not None:
        fmt = body["response_format"]
        assert isinstance(fmt, dict)
        schema = fmt["json_schema"]
        shape = schema.get("schema") if isinstance(schema, dict) else None
        return {
            "tools": [
                {
                    "toolSpec": {
                        "name": forced,
                        "description": "Reply with this tool: its input is the whole answer.",
                        "inputSchema": {"json": shape if isinstance(shape, dict) else {}},
                    }
                }
            ],
            "toolChoice": {"tool": {"name": forced}},
        }
    tools: list[JSON] = []
    for tool in _list(body.get("tools")):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict):
            continue
        spec: dict[str, JSON] = {"name": function.get("name")}
        if function.get("description"):
            spec["description"] = function["description"]
        parameters = function.get("parameters")
        spec["inputSchema"] = {
            "json": parameters if isinstance(parameters, dict) else {"type": "object"}
        }
        tools.append({"toolSpec": spec})
    choice = body.get("tool_choice")
    if not tools or choice == "none":
        return None
    config: dict[str, JSON] = {"tools": tools}
    if choice == "required":
        config["toolChoice"] = {"any": {}}
    elif choice == "auto":
        config["toolChoice"] = {"auto": {}}
    elif isinstance(choice, dict):
        function = choice.get("function")
        name = function.get("name") if isinstance(function, dict) else choice.get("name")
        if isinstance(name, str):
            config["toolChoice"] = {"tool": {"name": name}}
    return config


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    parts = [p.get("text") for p in _list(content) if isinstance(p, dict)]
    return "".join(p for p in parts if isinstance(p, str))


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0
