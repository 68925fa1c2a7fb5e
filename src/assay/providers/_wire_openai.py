"""The Chat Completions wire format: messages and tool calls out, replies and token counts in.

Replies are read as plain JSON rather than built into the SDK's `ChatCompletion` models (which
cost ~0.3 ms per request); the few fields used are checked here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from assay.providers._conversation import link_tool_messages
from assay.providers._errors import MalformedReplyError, ProviderError
from assay.providers._turn import ModelTurn, TurnCall
from assay.results import JSON, Message, TokenUsage

__all__ = ["chat_messages", "follow_up", "read_turn", "read_usage", "wire_call"]


def chat_messages(messages: Sequence[Message], system_prompt: str | None = None) -> list[JSON]:
    """`system_prompt`, then `messages` as Chat Completions messages.

    Raises:
        TargetError: A `tool` message answers no tool call.
    """
    wire_messages: list[JSON] = []
    if system_prompt:
        wire_messages.append({"role": "system", "content": system_prompt})
    for message, call_ids, answers in link_tool_messages(messages):
        if answers is not None:
            wire_messages.append(
                {"role": "tool", "tool_call_id": answers, "content": message.content or ""}
            )
            continue
        wire: dict[str, JSON] = {"role": message.role, "content": message.content}
        if message.name is not None:
            wire["name"] = message.name
        if message.tool_calls:
            wire["tool_calls"] = [
                wire_call(call_id, call.tool, call.args)
                for call_id, call in zip(call_ids, message.tool_calls, strict=True)
            ]
        elif message.content is None:
            wire["content"] = ""
        wire_messages.append(wire)
    return wire_messages


def read_turn(reply: object) -> ModelTurn:
    """`choices[0].message` of a reply as a turn.

    Raises:
        MalformedReplyError: There is no `choices[0].message`, or a tool call has no name.
        ProviderError: A tool call is not a function call, or its arguments are no JSON object
            (kinds `UnsupportedToolCall`, `InvalidToolArguments`).
    """
    choices = _list(reply.get("choices")) if isinstance(reply, dict) else []
    message = choices[0].get("message") if choices and isinstance(choices[0], dict) else None
    if not isinstance(message, dict):
        raise MalformedReplyError(
            f"the reply has no choices[0].message: {str(reply)[:200]}", kind="MalformedResponse"
        )
    calls = [_turn_call(call) for call in _list(message.get("tool_calls"))]
    content = message.get("content")
    refusal = message.get("refusal")
    return ModelTurn(
        text=content if isinstance(content, str) else None,
        calls=calls,
        usage=read_usage(reply),
        refusal=refusal if isinstance(refusal, str) and refusal else None,
        finish_reason=_finish_reason(choices[0]),
    )


def _finish_reason(choice: object) -> str | None:
    """`choices[0].finish_reason`; the legacy `function_call` is today's `tool_calls`."""
    reason = choice.get("finish_reason") if isinstance(choice, dict) else None
    if not isinstance(reason, str) or not reason:
        return None
    return "tool_calls" if reason == "function_call" else reason


def read_usage(reply: object) -> TokenUsage | None:
    """`usage.prompt_tokens` / `completion_tokens`; None when the server reports none."""
    usage = reply.get("usage") if isinstance(reply, dict) else None
    if not isinstance(usage, dict):
        return None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    return TokenUsage(
        input=prompt if isinstance(prompt, int) else 0,
        output=completion if isinstance(completion, int) else 0,
    )


def follow_up(turn: ModelTurn, results: list[str]) -> list[JSON]:
    """The assistant's tool-calling message, then one `tool` message per result."""
    assistant: JSON = {
        "role": "assistant",
        "content": turn.text,
        "tool_calls": [wire_call(c.id, c.name, c.args) for c in turn.calls],
    }
    answers: list[JSON] = [
        {"role": "tool", "tool_call_id": call.id, "content": text}
        for call, text in zip(turn.calls, results, strict=True)
    ]
    return [assistant, *answers]


def wire_call(call_id: str, name: str, args: dict[str, JSON]) -> JSON:
    """A function tool call as an assistant message carries it (arguments JSON-encoded)."""
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
    }


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _turn_call(call: object) -> TurnCall:
    """A function tool call of the reply; other tool call types are not supported."""
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(call, dict) or not isinstance(function, dict):
        kind = call.get("type", "?") if isinstance(call, dict) else type(call).__name__
        raise ProviderError(
            f"the model made a '{kind}' tool call; only function tools are supported",
            kind="UnsupportedToolCall",
        )
    name = function.get("name")
    if not isinstance(name, str):
        raise MalformedReplyError(
            f"a tool call has no function name: {str(call)[:200]}", kind="MalformedResponse"
        )
    return TurnCall(str(call.get("id", "")), name, _arguments(name, function.get("arguments")))


def _arguments(name: str, raw: object) -> dict[str, JSON]:
    """The arguments of a function call: a JSON object encoded as a string."""
    raw = raw or "{}"
    if not isinstance(raw, str):
        raw = json.dumps(raw)
    try:
        args = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ProviderError(
            f"the model called tool '{name}' with arguments that are not valid JSON "
            f"({exc}): {raw[:200]}",
            kind="InvalidToolArguments",
        ) from None
    if not isinstance(args, dict):
        raise ProviderError(
            f"the model called tool '{name}' with arguments that are not a JSON "
            f"object: {raw[:200]}",
            kind="InvalidToolArguments",
        )
    return args
