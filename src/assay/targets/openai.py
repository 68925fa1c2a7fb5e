"""The `openai` target: any OpenAI-compatible Chat Completions endpoint via the official SDK.

The SDK runs on its aiohttp transport (`DefaultAioHttpClient`): httpx's connection pool
collapses at the concurrency evaluations run at (SPEC §9). The SDK's own retries are off; the
runner retries retryable `TargetError`s with its backoff and concurrency control.
"""

from __future__ import annotations

import itertools
import json
import secrets
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Annotated, ClassVar, Literal, cast

from pydantic import Field

from assay.errors import TargetError
from assay.results import JSON, TokenUsage
from assay.targets._base import TargetRequest
from assay.targets._chat import (
    ChatModelTarget,
    ModelTurn,
    TurnCall,
    link_tool_messages,
)

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["OpenAITarget"]

_SAMPLING = ("temperature", "top_p", "max_tokens", "seed", "stop")

_KEY_PREFIX = f"assay-{secrets.token_hex(6)}"
_REQUEST_NUMBERS = itertools.count()


class OpenAITarget(ChatModelTarget):
    """Calls a Chat Completions model: OpenAI, Azure, vLLM, Ollama, llama.cpp, OpenRouter, …

    With `tools` the model may call functions; with `tool_loop` those calls are answered from
    the test's `metadata.tool_results` and the model is called again until it answers in text.
    """

    type: Literal["openai"]
    """Target type discriminator."""
    api_key_env: str | None = "OPENAI_API_KEY"
    """Environment variable holding the API key; `null` for a local server without auth."""
    seed: int | None = None
    """Sampling seed, for providers that support reproducible sampling."""
    max_tokens: Annotated[int, Field(ge=1)] | None = None
    """Upper bound on generated tokens per model call (newer OpenAI models want
    `extra_body: {max_completion_tokens: N}` instead)."""

    provider: ClassVar[str] = "openai"
    default_base_url: ClassVar[str] = "https://api.openai.com/v1"
    base_url_env: ClassVar[str] = "OPENAI_BASE_URL"
    sdk_parameters: ClassVar[frozenset[str]] = frozenset({"model", "messages"})

    async def setup(self, base_dir: Path) -> None:
        """Create the SDK client (one per target, shared by concurrent cases).

        Raises:
            UsageError: The API key's environment variable is not set.
        """
        del base_dir
        api_key = self.api_key()
        import openai

        client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=self.resolved_base_url(),
            max_retries=0,
            timeout=openai.DEFAULT_TIMEOUT if self.timeout_s is None else self.timeout_s,
            http_client=openai.DefaultAioHttpClient(),
        )
        previous = self.set_client(client)
        if previous is not None:
            await cast("AsyncOpenAI", previous).close()

    def sdk(self) -> ModuleType:
        """The `openai` module (imported by `setup`)."""
        import openai

        return openai

    def first_messages(self, request: TargetRequest) -> list[JSON]:
        """System prompt, then the test's messages as Chat Completions messages."""
        messages: list[JSON] = []
        if self.system_prompt:
            messages.append({"role": "system", "content": self.system_prompt})
        for message, call_ids, answers in link_tool_messages(request.messages):
            if answers is not None:
                messages.append(
                    {"role": "tool", "tool_call_id": answers, "content": message.content or ""}
                )
                continue
            wire: dict[str, JSON] = {"role": message.role, "content": message.content}
            if message.name is not None:
                wire["name"] = message.name
            if message.tool_calls:
                wire["tool_calls"] = [
                    _wire_call(call_id, call.tool, call.args)
                    for call_id, call in zip(call_ids, message.tool_calls, strict=True)
                ]
            elif message.content is None:
                wire["content"] = ""
            messages.append(wire)
        return messages

    def request_body(self, messages: list[JSON]) -> dict[str, JSON]:
        """Model, messages, the sampling parameters that are set, tools and `extra_body`."""
        body: dict[str, JSON] = {"model": self.model, "messages": messages}
        for name in _SAMPLING:
            value = getattr(self, name)
            if value is not None:
                body[name] = value
        if self.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        **({"description": tool.description} if tool.description else {}),
                        "parameters": tool.parameters,
                    },
                }
                for tool in self.tools
            ]
        body.update(self.extra_body)
        return body

    def follow_up(self, turn: ModelTurn, results: list[str]) -> list[JSON]:
        """The assistant's tool-calling message, then one `tool` message per result."""
        assistant: JSON = {
            "role": "assistant",
            "content": turn.text,
            "tool_calls": [_wire_call(c.id, c.name, c.args) for c in turn.calls],
        }
        answers: list[JSON] = [
            {"role": "tool", "tool_call_id": call.id, "content": text}
            for call, text in zip(turn.calls, results, strict=True)
        ]
        return [assistant, *answers]

    async def complete(self, client: object, body: dict[str, JSON]) -> ModelTurn:
        """One Chat Completions request; the first choice becomes the turn.

        The body is already in wire format, so it goes through the SDK's generic `post` (the
        same client, transport, auth and errors as `chat.completions.create`) without `create`'s
        walk over its typed parameters (~0.4 ms per request). The reply is read as plain JSON
        (`cast_to=object`) rather than built into the SDK's `ChatCompletion` models, which cost
        another ~0.3 ms; the few fields used here are checked below. The idempotency key comes
        from a counter: the SDK's default draws a uuid4 per request (a syscall each). The URL is
        absolute, joined as the SDK joins a path to its base URL: a relative one costs the SDK
        a second URL parse and merge per request (~30 µs).
        """
        sdk_client = cast("AsyncOpenAI", client)
        reply = await sdk_client.post(
            f"{sdk_client.base_url}chat/completions",
            body=body,
            cast_to=object,
            options={"idempotency_key": f"{_KEY_PREFIX}-{next(_REQUEST_NUMBERS)}"},
        )
        message = _first_message(reply, self.describe())
        calls = [_turn_call(call, self.describe()) for call in _list(message.get("tool_calls"))]
        content = message.get("content")
        return ModelTurn(
            text=content if isinstance(content, str) else None,
            calls=calls,
            usage=_usage(reply),
        )


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _first_message(reply: object, where: str) -> dict[str, object]:
    """`choices[0].message` of a Chat Completions reply, or a MalformedResponse error."""
    choices = _list(reply.get("choices")) if isinstance(reply, dict) else []
    message = choices[0].get("message") if choices and isinstance(choices[0], dict) else None
    if not isinstance(message, dict):
        raise TargetError(
            f"{where}: the reply has no choices[0].message: {str(reply)[:200]}",
            kind="MalformedResponse",
        )
    return message


def _turn_call(call: object, where: str) -> TurnCall:
    """A function tool call of the reply; other tool call types are not supported."""
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(call, dict) or not isinstance(function, dict):
        kind = call.get("type", "?") if isinstance(call, dict) else type(call).__name__
        raise TargetError(
            f"{where}: the model made a '{kind}' tool call; only function tools are supported",
            kind="UnsupportedToolCall",
        )
    name = function.get("name")
    if not isinstance(name, str):
        raise TargetError(
            f"{where}: a tool call has no function name: {str(call)[:200]}",
            kind="MalformedResponse",
        )
    return TurnCall(
        str(call.get("id", "")), name, _arguments(name, function.get("arguments"), where)
    )


def _usage(reply: object) -> TokenUsage | None:
    usage = reply.get("usage") if isinstance(reply, dict) else None
    if not isinstance(usage, dict):
        return None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    return TokenUsage(
        input=prompt if isinstance(prompt, int) else 0,
        output=completion if isinstance(completion, int) else 0,
    )


def _wire_call(call_id: str, name: str, args: dict[str, JSON]) -> JSON:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
    }


def _arguments(name: str, raw: object, where: str) -> dict[str, JSON]:
    """The arguments of a function call: a JSON object encoded as a string."""
    raw = raw or "{}"
    if not isinstance(raw, str):
        raw = json.dumps(raw)
    try:
        args = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise TargetError(
            f"{where}: the model called tool '{name}' with arguments that are not valid JSON "
            f"({exc}): {raw[:200]}",
            kind="InvalidToolArguments",
        ) from None
    if not isinstance(args, dict):
        raise TargetError(
            f"{where}: the model called tool '{name}' with arguments that are not a JSON "
            f"object: {raw[:200]}",
            kind="InvalidToolArguments",
        )
    return args
