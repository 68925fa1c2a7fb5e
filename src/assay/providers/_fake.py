"""The `fake` provider: scripted replies from each test's `metadata`, no network, no key.

It lets a suite with model targets and judged graders run offline (docs, CI smoke runs, demos).
Each caller reads its own key of the test's `metadata`:

- a target reads `fake_reply` (one reply) or `fake_replies` (one per model turn, so a tool loop
  can call tools and then answer); without either it echoes the last user message;
- a judge reads `fake_judge`, the reply fields to set (e.g. `{score: 0.9, reasoning: ...}`);
  every other field of the reply schema gets a default (`""`, `0`, `false`, the first enum value);
- a simulator (a model playing the user, SPEC §2.1) reads `fake_user_turns`, one entry per
  turn: the user's message, or the reply fields (`{message, done, reason}`); past the last
  entry it says it is done.

A reply is the text, or `{content, tool_calls: [{name, arguments}], usage: {input, output}}`.
Replies come in the wire format the caller speaks, so they go through the same reading code as a
real server's.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from collections.abc import Mapping, Sequence

from assay.providers._base import Embeddings, Provider, ProviderConfig
from assay.providers._errors import ProviderError
from assay.providers._presets import Wire
from assay.providers._scripted import fill, is_judge_request, schema_of
from assay.results import JSON, TokenUsage

__all__ = ["EMBEDDING_DIMENSIONS", "FakeProvider", "fake_embedding"]

EMBEDDING_DIMENSIONS = 64
"""Length of the fake embeddings: a hashed bag of words, so texts sharing words are close."""

_IDS = itertools.count(1)
_WORD = re.compile(r"\w+")


class FakeProvider(Provider):
    """Answers from the test's `metadata` in the wire format `wire` (never `fake` itself)."""

    def __init__(self, config: ProviderConfig, wire: Wire) -> None:
        super().__init__(config, "fake://scripted")
        self.wire = wire

    async def complete(
        self, body: dict[str, JSON], *, metadata: Mapping[str, JSON] | None = None
    ) -> dict[str, JSON]:
        """The scripted reply for this request.

        Raises:
            ProviderError: The script in `metadata` has the wrong shape (kind `FakeScriptError`).
        """
        metadata = metadata or {}
        turn = sum(1 for m in _messages(body) if m.get("role") == "assistant")
        if self.config.purpose == "simulator":
            return self._simulator_reply(body, metadata, turn)
        if self.config.purpose == "judge" or is_judge_request(body):
            return self._judge_reply(body, metadata)
        replies = metadata.get("fake_replies")
        if replies is not None:
            if not isinstance(replies, list) or not replies:
                raise _script_error("`metadata.fake_replies` must be a non-empty list of replies")
            reply: JSON = replies[min(turn, len(replies) - 1)]
        elif "fake_reply" in metadata:
            reply = metadata["fake_reply"]
        else:
            reply = _last_user_text(body)
        content, calls, usage = _parse(reply, "fake_replies")
        return self._wrap(body, content, calls, usage)

    async def embed(self, model: str, inputs: Sequence[str]) -> Embeddings:
        """Deterministic vectors: each word adds ±1 to a hashed dimension, then unit length."""
        del model
        vectors = [fake_embedding(text) for text in inputs]
        tokens = sum(len(_WORD.findall(text)) for text in inputs)
        return Embeddings(vectors, TokenUsage(input=tokens, output=0))

    async def close(self) -> None:
        """Nothing to release: the fake holds no connections."""

    def _simulator_reply(
        self, body: dict[str, JSON], metadata: Mapping[str, JSON], turn: int
    ) -> dict[str, JSON]:
        """The scripted user's `turn`-th message (its earlier ones are the request's assistant
        messages); structured as the request's reply schema when it sends one."""
        turns = metadata.get("fake_user_turns", [])
        if not isinstance(turns, list):
            raise _script_error("`metadata.fake_user_turns` must be a list of user messages")
        values: JSON
        if turn < len(turns):
            entry = turns[turn]
            values = {"message": entry, "done": False} if isinstance(entry, str) else entry
            if not isinstance(values, dict):
                raise _script_error("a `fake_user_turns` entry is a message or a mapping")
        else:
            values = {"message": "", "done": True, "reason": "no more scripted user turns"}
        if is_judge_request(body):
            schema = schema_of(body)
            return self._wrap(body, json.dumps(fill(schema, values, schema)), [], None)
        message = values.get("message")
        return self._wrap(body, message if isinstance(message, str) else "", [], None)

    def _judge_reply(self, body: dict[str, JSON], metadata: Mapping[str, JSON]) -> dict[str, JSON]:
        values = metadata.get("fake_judge", {})
        if not isinstance(values, Mapping):
            raise _script_error("`metadata.fake_judge` must be a mapping of reply fields")
        try:
            schema = schema_of(body)
        except ValueError as exc:
            raise _script_error(f"the judge request carries no reply schema ({exc})") from None
        answer = fill(schema, values, schema)
        if self.wire == "anthropic" and isinstance(body.get("tool_choice"), dict):
            name = str(body["tool_choice"].get("name", "submit_judgement"))
            return self._wrap(body, None, [(name, answer)], None)
        return self._wrap(body, json.dumps(answer), [], None)

    def _wrap(
        self,
        body: dict[str, JSON],
        content: str | None,
        calls: list[tuple[str, JSON]],
        usage: TokenUsage | None,
    ) -> dict[str, JSON]:
        """The reply in the caller's wire format."""
        number = next(_IDS)
        if usage is None:
            produced = len(content or "") + sum(len(json.dumps(a)) for _, a in calls)
            usage = TokenUsage(input=len(json.dumps(_messages(body))) // 4 + 1,
                               output=produced // 4 + 1)  # fmt: skip
        model = body.get("model", "fake")
        if self.wire == "anthropic":
            blocks: list[JSON] = [{"type": "text", "text": content}] if content else []
            blocks.extend(
                {"type": "tool_use", "id": f"toolu_{number}_{i}", "name": name, "input": args}
                for i, (name, args) in enumerate(calls)
            )
            return {
                "id": f"msg_fake_{number}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": blocks,
                "stop_reason": "tool_use" if calls else "end_turn",
                "usage": {"input_tokens": usage.input, "output_tokens": usage.output},
            }
        message: dict[str, JSON] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{number}_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for i, (name, args) in enumerate(calls)
            ]
        return {
            "id": f"chatcmpl-fake-{number}",
            "object": "chat.completion",
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if calls else "stop",
                }
            ],
            "usage": {"prompt_tokens": usage.input, "completion_tokens": usage.output},
        }


def _script_error(message: str) -> ProviderError:
    return ProviderError(f"fake provider: {message}", kind="FakeScriptError")


def _parse(reply: JSON, key: str) -> tuple[str | None, list[tuple[str, JSON]], TokenUsage | None]:
    """A scripted reply's text, tool calls and token counts."""
    if isinstance(reply, str):
        return reply, [], None
    if not isinstance(reply, dict) or not set(reply) <= {"content", "tool_calls", "usage"}:
        raise _script_error(
            f"a reply (in `metadata.{key}` or `fake_reply`) is a string or a mapping of "
            f"`content`, `tool_calls` and `usage`, got {json.dumps(reply)[:200]}"
        )
    content = reply.get("content")
    calls: list[tuple[str, JSON]] = []
    for call in reply.get("tool_calls") or []:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise _script_error(f"a scripted tool call needs a `name`: {json.dumps(call)[:200]}")
        calls.append((call["name"], call.get("arguments", {})))
    usage = reply.get("usage")
    tokens = None
    if isinstance(usage, dict):
        given, produced = usage.get("input", 0), usage.get("output", 0)
        tokens = TokenUsage(
            input=given if isinstance(given, int) else 0,
            output=produced if isinstance(produced, int) else 0,
        )
    return (content if isinstance(content, str) else None), calls, tokens


def _messages(body: Mapping[str, JSON]) -> list[dict[str, JSON]]:
    messages = body.get("messages")
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def _last_user_text(body: Mapping[str, JSON]) -> str:
    for message in reversed(_messages(body)):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            texts = [b.get("text") for b in content if isinstance(b, dict)]
            return "".join(t for t in texts if isinstance(t, str))
    return ""


def fake_embedding(text: str) -> list[float]:
    """A unit vector of `EMBEDDING_DIMENSIONS` for `text`: texts sharing words point alike."""
    vector = [0.0] * EMBEDDING_DIMENSIONS
    for word in _WORD.findall(text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        vector[digest[0] % EMBEDDING_DIMENSIONS] += 1.0 if digest[1] & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else vector
