"""The Anthropic Messages wire format: `tool_use` / `tool_result` turns out, replies in."""

from __future__ import annotations

from collections.abc import Sequence

from assay._content import data_url
from assay.errors import TargetError
from assay.providers._conversation import link_tool_messages
from assay.providers._errors import MalformedReplyError, ProviderError
from assay.providers._turn import ModelTurn, TurnCall
from assay.results import JSON, Message, TokenUsage

__all__ = ["content_blocks", "follow_up", "read_turn", "read_usage", "turns"]


def turns(messages: Sequence[Message]) -> list[JSON]:
    """`messages` as Messages API turns: tool calls as `tool_use` blocks, tool results as
    `tool_result` blocks of one user turn; system messages stay `role: system` entries for the
    caller to move to `system`.

    Raises:
        TargetError: A `tool` message answers no tool call.
    """
    wire: list[JSON] = []
    for message, call_ids, answers in link_tool_messages(messages):
        if answers is not None:
            block = {
                "type": "tool_result",
                "tool_use_id": answers,
                "content": content_blocks(message.content),
            }
            _append_user_blocks(wire, [block])
            continue
        if not message.tool_calls:
            wire.append({"role": message.role, "content": content_blocks(message.content)})
            continue
        content = content_blocks(message.content)
        blocks: list[JSON] = (
            list(content) if isinstance(content, list) else [{"type": "text", "text": content}]
        )
        blocks = [b for b in blocks if b != {"type": "text", "text": ""}]
        blocks.extend(
            {"type": "tool_use", "id": call_id, "name": call.tool, "input": call.args}
            for call_id, call in zip(call_ids, message.tool_calls, strict=True)
        )
        wire.append({"role": message.role, "content": blocks})
    return wire


def content_blocks(content: str | list[dict[str, JSON]] | None) -> str | list[JSON]:
    """Message content as the Messages API takes it: text as it is; OpenAI-shaped parts as
    `text` blocks and `image` blocks (a base64 source for a `data:` URL, a url source for an
    http(s) URL).

    Raises:
        TargetError: A part the Messages API cannot carry (audio).
    """
    if not isinstance(content, list):
        return content or ""
    blocks: list[JSON] = []
    for part in content:
        kind = part.get("type")
        if kind == "text":
            blocks.append({"type": "text", "text": str(part.get("text", ""))})
        elif kind == "image_url":
            image = part.get("image_url")
            url = str(image.get("url") if isinstance(image, dict) else image)
            inline = data_url(url)
            source: JSON = (
                {"type": "base64", "media_type": inline[0], "data": inline[1]}
                if inline is not None
                else {"type": "url", "url": url}
            )
            blocks.append({"type": "image", "source": source})
        else:
            raise TargetError(
                f"Anthropic's Messages API takes text and image parts; a '{kind}' part "
                "cannot be sent: remove it from the input or use a model that takes it"
            )
    return blocks


_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
}
"""Anthropic's `stop_reason` in OpenAI's `finish_reason` words; others (`pause_turn`,
`refusal`) are kept as they are."""


def read_turn(reply: object) -> ModelTurn:
    """A Messages reply as a turn: text blocks join into the text, `tool_use` blocks are calls.

    Raises:
        MalformedReplyError: The reply has no content blocks.
        ProviderError: A `tool_use` input is not a JSON object (kind `InvalidToolArguments`).
    """
    blocks = reply.get("content") if isinstance(reply, dict) else None
    if not isinstance(blocks, list):
        raise MalformedReplyError(
            f"the reply has no content blocks: {str(reply)[:200]}", kind="MalformedResponse"
        )
    texts: list[str] = []
    calls: list[TurnCall] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use":
            name = str(block.get("name", ""))
            args = block.get("input")
            if not isinstance(args, dict):
                raise ProviderError(
                    f"the model called tool '{name}' with input that is not a JSON object: "
                    f"{str(args)[:200]}",
                    kind="InvalidToolArguments",
                )
            calls.append(TurnCall(str(block.get("id", "")), name, args))
    stop = reply.get("stop_reason") if isinstance(reply, dict) else None
    return ModelTurn(
        text="".join(texts) if texts else None,
        calls=calls,
        usage=read_usage(reply),
        finish_reason=_STOP_REASONS.get(stop, stop) if isinstance(stop, str) and stop else None,
    )


def read_usage(reply: object) -> TokenUsage | None:
    """`usage.input_tokens` / `output_tokens`; None when the server reports none."""
    usage = reply.get("usage") if isinstance(reply, dict) else None
    if not isinstance(usage, dict):
        return None
    given, produced = usage.get("input_tokens"), usage.get("output_tokens")
    return TokenUsage(
        input=given if isinstance(given, int) else 0,
        output=produced if isinstance(produced, int) else 0,
    )


def follow_up(turn: ModelTurn, results: list[str]) -> list[JSON]:
    """The assistant's `tool_use` turn, then a user turn of `tool_result` blocks."""
    blocks: list[JSON] = [{"type": "text", "text": turn.text}] if turn.text else []
    blocks.extend(
        {"type": "tool_use", "id": c.id, "name": c.name, "input": c.args} for c in turn.calls
    )
    answers: list[JSON] = [
        {"type": "tool_result", "tool_use_id": call.id, "content": text}
        for call, text in zip(turn.calls, results, strict=True)
    ]
    return [{"role": "assistant", "content": blocks}, {"role": "user", "content": answers}]


def _append_user_blocks(messages: list[JSON], blocks: list[JSON]) -> None:
    """Tool results answering one assistant turn must share one user turn."""
    last = messages[-1] if messages else None
    if (
        isinstance(last, dict)
        and last["role"] == "user"
        and isinstance(last["content"], list)
        and all(b.get("type") == "tool_result" for b in last["content"])
    ):
        last["content"].extend(blocks)
        return
    messages.append({"role": "user", "content": blocks})
