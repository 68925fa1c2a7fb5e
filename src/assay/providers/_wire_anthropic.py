"""The Anthropic Messages wire format: `tool_use` / `tool_result` turns out, replies in."""

from __future__ import annotations

from assay.providers._errors import MalformedReplyError, ProviderError
from assay.providers._turn import ModelTurn, TurnCall
from assay.results import JSON, TokenUsage

__all__ = ["follow_up", "read_turn", "read_usage"]


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
    return ModelTurn(text="".join(texts) if texts else None, calls=calls, usage=read_usage(reply))


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
