"""What the model-API targets (`openai`, `anthropic`) share: options, the tool loop, tool-result
fixtures, SDK error mapping and pricing.

Each provider module only translates between assay's shapes and its wire format; the loop that
calls the model, answers tool calls from the test's `metadata.tool_results` and calls it again
lives here once.
"""

from __future__ import annotations

import json
import os
import time
from abc import abstractmethod
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Annotated, ClassVar, Generic, TypeVar

from pydantic import Field, PrivateAttr, field_validator

from assay._sdk_errors import retry_after_s, root_cause, server_message, timed_out
from assay._strict_model import StrictModel
from assay.errors import TargetError, UsageError
from assay.results import JSON, Message, TargetOutput, TokenUsage, ToolCall, add_usage
from assay.targets._base import Target, TargetRequest

__all__ = ["ChatModelTarget", "ModelTurn", "ToolSpec", "TurnCall", "link_tool_messages"]

_C = TypeVar("_C")
_SHOWN_ARGS_CHARS = 200
_NO_KEY = "assay-no-api-key"


class ToolSpec(StrictModel):
    """A tool the model may call, described by a JSON Schema of its arguments."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
    """Tool name as the model sees it: letters, digits, `_` and `-`, at most 64 characters."""
    description: str = ""
    """What the tool does; the model reads it to decide when to call the tool."""
    parameters: dict[str, JSON] = Field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    """JSON Schema of the arguments object; default: no arguments."""


@dataclass(frozen=True)
class TurnCall:
    """A tool call the model asked for in one turn, in provider-neutral form."""

    id: str
    name: str
    args: dict[str, JSON]


@dataclass(frozen=True)
class ModelTurn:
    """One model reply: its text, the tool calls it asks for and the tokens it used."""

    text: str | None
    calls: list[TurnCall] = field(default_factory=list)
    usage: TokenUsage | None = None


class _Slot(Generic[_C]):
    """Holds the SDK client. It is run state, not configuration: any two slots compare equal,
    so a target equals its config whether or not `setup` has run."""

    def __init__(self) -> None:
        self.value: _C | None = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Slot)

    def __hash__(self) -> int:
        return hash(_Slot)


class ChatModelTarget(Target):
    """Base of targets that call a hosted chat model through its official SDK.

    Subclasses build the provider's request body and convert its reply to a `ModelTurn`; this
    class runs the optional tool loop and assembles the `TargetOutput`.
    """

    model: Annotated[str, Field(min_length=1)]
    """Model name as the API expects it, e.g. `gpt-4.1-mini`."""
    base_url: str | None = None
    """API endpoint; default: the SDK's (or its `*_BASE_URL` environment variable)."""
    api_key_env: str | None
    """Environment variable holding the API key; `null` for a local server without auth."""
    temperature: Annotated[float, Field(ge=0.0, le=2.0)] | None = None
    """Sampling temperature; default: the API's."""
    top_p: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    """Nucleus sampling probability mass; default: the API's."""
    max_tokens: Annotated[int, Field(ge=1)] | None = None
    """Upper bound on generated tokens per model call."""
    stop: str | list[str] | None = None
    """Stop sequence(s): generation ends before any of them."""
    system_prompt: str | None = None
    """System prompt put before the test's messages."""
    tools: list[ToolSpec] = Field(default_factory=list)
    """Tools offered to the model, each with a JSON Schema of its arguments."""
    tool_loop: bool = False
    """Answer the model's tool calls from the test's `metadata.tool_results` and call it again
    until it answers with text. Without it, the first reply is the output, tool calls included."""
    max_tool_rounds: Annotated[int, Field(ge=1)] = 5
    """Most rounds of tool answers in one case; a model still calling tools after them is an
    error."""
    timeout_s: Annotated[float, Field(gt=0)] | None = None
    """Timeout of each HTTP request; default: the SDK's (10 minutes)."""
    extra_body: dict[str, JSON] = Field(default_factory=dict)
    """Extra request-body fields passed through as they are (provider-specific parameters)."""
    cost_per_1k_input: Annotated[float, Field(ge=0.0)] | None = None
    """Price in USD of 1000 input tokens, to report `cost_usd`."""
    cost_per_1k_output: Annotated[float, Field(ge=0.0)] | None = None
    """Price in USD of 1000 output tokens, to report `cost_usd`."""

    _client: _Slot[object] = PrivateAttr(default_factory=_Slot)

    provider: ClassVar[str]
    """Provider name, as in cache keys and messages (`openai`)."""
    default_base_url: ClassVar[str]
    """Where the SDK sends requests when neither `base_url` nor `base_url_env` is set."""
    base_url_env: ClassVar[str]
    """The environment variable the SDK reads its default endpoint from."""
    sdk_parameters: ClassVar[frozenset[str]]
    """Body fields passed to the SDK's `create()` by name (the ones it requires)."""

    @field_validator("extra_body")
    @classmethod
    def _check_extra_body(cls, value: dict[str, JSON]) -> dict[str, JSON]:
        reserved = sorted(set(value) & {"model", "messages", "stream"})
        if reserved:
            raise ValueError(
                f"`extra_body` must not set {', '.join(reserved)}: assay sets the model and the "
                "messages itself and reads whole (non-streamed) replies"
            )
        return value

    # -- what a provider supplies -------------------------------------------------------------

    @abstractmethod
    def first_messages(self, request: TargetRequest) -> list[JSON]:
        """The test's messages in the provider's wire format."""

    @abstractmethod
    def request_body(self, messages: list[JSON]) -> dict[str, JSON]:
        """The full request body for a conversation: model, sampling parameters, tools."""

    @abstractmethod
    def follow_up(self, turn: ModelTurn, results: list[str]) -> list[JSON]:
        """Wire messages that append a tool-calling turn and the results to the conversation."""

    @abstractmethod
    async def complete(self, client: object, body: dict[str, JSON]) -> ModelTurn:
        """Send one request body and convert the reply; SDK errors propagate unmapped."""

    @abstractmethod
    def sdk(self) -> ModuleType:
        """The imported SDK module, whose exception classes `call` maps to `TargetError`."""

    # -- lifecycle ------------------------------------------------------------------------------

    def describe(self) -> str:
        """Provider and model, plus the endpoint when it is not the default."""
        where = f" at {self.base_url}" if self.base_url else ""
        return f"{self.provider} {self.model}{where}"

    def api_key(self) -> str:
        """The API key from `api_key_env`.

        Raises:
            UsageError: The variable is unset or empty.
        """
        if self.api_key_env is None:
            # SDKs refuse to start without a key; a local server ignores it.
            return _NO_KEY
        problem = self.missing_key()
        if problem is not None:
            raise UsageError(problem)
        return os.environ[self.api_key_env]

    def missing_key(self) -> str | None:
        """The message `api_key` raises when `api_key_env` is named and unset, or None."""
        if self.api_key_env is None or os.environ.get(self.api_key_env):
            return None
        return (
            f"{self.provider} target: environment variable {self.api_key_env} is not set. "
            f"Export it with your API key, name another variable in `api_key_env`, or set "
            f"`api_key_env: null` for a local server that needs no key"
        )

    def check(self, base_dir: Path) -> None:
        """The SDK is installed (its API key is `missing_key`'s concern).

        Raises:
            UsageError: It is not.
        """
        del base_dir
        self.sdk()

    def resolved_base_url(self) -> str:
        """The endpoint requests go to: `base_url`, else the SDK's environment variable or
        default. Passed to the SDK explicitly so the cache key names the real endpoint."""
        return self.base_url or os.environ.get(self.base_url_env) or self.default_base_url

    def sdk_arguments(self, body: dict[str, JSON]) -> dict[str, JSON]:
        """Keyword arguments of the SDK's `create()` that put exactly `body` on the wire.

        Only the parameters every SDK version requires are passed by name; the rest go through
        `extra_body`, which the SDK sends unchanged. Named sampling parameters come and go
        between SDK releases (recent `anthropic` SDKs dropped `temperature`), the wire format
        does not.
        """
        arguments = {k: v for k, v in body.items() if k in self.sdk_parameters}
        extra = {k: v for k, v in body.items() if k not in self.sdk_parameters}
        if extra:
            arguments["extra_body"] = extra
        return arguments

    def set_client(self, client: object) -> object | None:
        """Store the SDK client made by `setup`; returns the one it replaces, to be closed."""
        previous, self._client.value = self._client.value, client
        return previous

    async def teardown(self) -> None:
        """Close the SDK client and its HTTP connections."""
        client, self._client.value = self._client.value, None
        if client is not None:
            await client.close()  # type: ignore[attr-defined]

    def cache_key(self, request: TargetRequest) -> dict[str, JSON] | None:
        """Provider, model, endpoint, the exact first request body and the tool fixtures."""
        return {
            "provider": self.provider,
            "model": self.model,
            "base_url": self.resolved_base_url(),
            "body": self.request_body(self.first_messages(request)),
            "tool_results": request.metadata.get("tool_results"),
        }

    # -- one case -------------------------------------------------------------------------------

    async def call(self, request: TargetRequest) -> TargetOutput:
        """Call the model, answering tool calls from fixtures when `tool_loop` is on.

        Raises:
            TargetError: The API failed (`retryable` for 429, 408, 5xx, timeouts, dropped
                connections and malformed replies; `rate_limited` with `retry_after_s` for 429),
                or a tool call has no fixture, or the model never stopped calling tools.
        """
        client = self.run_state("_client", _Slot).value
        if client is None:
            raise RuntimeError(f"{self.provider} target: call setup() before call()")
        started = time.perf_counter()
        conversation = self.first_messages(request)
        transcript = self._input_transcript(request)
        usage: TokenUsage | None = None
        for _ in range(self.max_tool_rounds + 1):
            turn = await self._complete(client, self.request_body(conversation))
            usage = add_usage(usage, turn.usage)
            if not turn.calls or not self.tool_loop:
                calls = [ToolCall(tool=c.name, args=c.args) for c in turn.calls]
                transcript.append(Message(role="assistant", content=turn.text, tool_calls=calls))
                return self._output(turn.text or "", transcript, usage, started)
            answered, results = _answer_all(turn.calls, request.metadata)
            transcript.append(Message(role="assistant", content=turn.text, tool_calls=answered))
            transcript.extend(
                Message(role="tool", content=text, name=c.tool)
                for c, text in zip(answered, results, strict=True)
            )
            conversation = [*conversation, *self.follow_up(turn, results)]
        raise TargetError(
            f"{self.describe()}: the model was still calling tools after max_tool_rounds="
            f"{self.max_tool_rounds} rounds of answers; raise `max_tool_rounds` or check that "
            "the `tool_results` fixtures give it what it needs",
            kind="ToolLoopError",
        )

    async def _complete(self, client: object, body: dict[str, JSON]) -> ModelTurn:
        try:
            return await self.complete(client, body)
        except Exception as exc:
            mapped = self._map_error(exc)
            if mapped is None:
                raise
            raise mapped from exc

    def _input_transcript(self, request: TargetRequest) -> list[Message]:
        system = [Message(role="system", content=self.system_prompt)] if self.system_prompt else []
        return [*system, *request.messages]

    def _output(
        self, text: str, transcript: list[Message], usage: TokenUsage | None, started: float
    ) -> TargetOutput:
        return TargetOutput(
            output=text,
            messages=transcript,
            tool_calls=[c for m in transcript for c in m.tool_calls],
            token_usage=usage,
            cost_usd=self._cost(usage),
            duration_ms=(time.perf_counter() - started) * 1000,
        )

    def _cost(self, usage: TokenUsage | None) -> float | None:
        return usage.price(self.cost_per_1k_input, self.cost_per_1k_output) if usage else None

    def _map_error(self, exc: Exception) -> TargetError | None:
        """The `TargetError` for an SDK or decoding failure; None for anything else (a bug)."""
        sdk = self.sdk()
        where = self.describe()
        if isinstance(exc, json.JSONDecodeError | sdk.APIResponseValidationError):
            return TargetError(
                f"{where}: the reply is not valid JSON for the API ({exc}); "
                "the server or a proxy in between sent a broken response",
                kind="MalformedResponse",
                retryable=True,
            )
        if isinstance(exc, sdk.RateLimitError):
            return TargetError(
                f"{where}: rate limited (HTTP 429): {server_message(exc)}",
                kind=type(exc).__name__,
                rate_limited=True,
                retry_after_s=retry_after_s(exc.response.headers),
            )
        if isinstance(exc, sdk.APIStatusError):
            status: int = exc.status_code
            message = f"{where}: HTTP {status}: {server_message(exc)}"
            if status in (401, 403) and self.api_key_env is not None:
                message += f" (the API key is read from ${self.api_key_env})"
            retryable = status == 408 or status >= 500
            return TargetError(message, kind=type(exc).__name__, retryable=retryable)
        if isinstance(exc, sdk.APIConnectionError):
            # The aiohttp transport reports a dropped connection as a timeout: tell them apart by
            # the root cause so the message says what happened.
            root = root_cause(exc)
            if timed_out(exc, sdk.APITimeoutError):
                after = f" after {self.timeout_s:g}s" if self.timeout_s is not None else ""
                return TargetError(
                    f"{where}: request timed out{after}", kind="APITimeoutError", retryable=True
                )
            cause = str(exc) if root is exc else f"{type(root).__name__}: {root}"
            return TargetError(
                f"{where}: connection failed: {cause}", kind="APIConnectionError", retryable=True
            )
        return None


def link_tool_messages(
    messages: Sequence[Message],
) -> list[tuple[Message, list[str], str | None]]:
    """Give input tool calls ids and pair each `tool` message with the call it answers.

    `Message` has no call ids, so calls are paired by position: the n-th `tool` message after an
    assistant message answers its n-th call. Returns (message, ids of its calls, id answered).

    Raises:
        TargetError: A `tool` message answers no call.
    """
    pending: deque[str] = deque()
    linked: list[tuple[Message, list[str], str | None]] = []
    for index, message in enumerate(messages):
        if message.role == "tool":
            if not pending:
                raise TargetError(
                    f"input message {index} has role 'tool' but answers no tool call of an "
                    "earlier assistant message; write it as a user message instead"
                )
            linked.append((message, [], pending.popleft()))
            continue
        ids = [f"call_{index}_{n}" for n in range(len(message.tool_calls))]
        pending.extend(ids)
        linked.append((message, ids, None))
    return linked


def _result_text(result: JSON) -> str:
    """A tool result as sent to the model: strings as they are, anything else as JSON."""
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def _answer_all(
    calls: list[TurnCall], metadata: Mapping[str, JSON]
) -> tuple[list[ToolCall], list[str]]:
    answered: list[ToolCall] = []
    texts: list[str] = []
    for call in calls:
        started = time.perf_counter()
        result = _fixture_result(call, metadata)
        elapsed_ms = (time.perf_counter() - started) * 1000
        answered.append(
            ToolCall(tool=call.name, args=call.args, output=result, duration_ms=elapsed_ms)
        )
        texts.append(_result_text(result))
    return answered, texts


def _fixture_result(call: TurnCall, metadata: Mapping[str, JSON]) -> JSON:
    """The result `metadata.tool_results` gives for one call: `{tool: result}` or
    `{tool: [{args, result}, ...]}` matched by equal arguments (an entry without `args` is the
    fallback)."""
    shown = _shown_args(call.args)
    fixtures = metadata.get("tool_results")
    how = (
        f"add `metadata: {{tool_results: {{{call.name}: <result>}}}}` to the test, or a list of "
        f"`{{args: ..., result: ...}}` to answer by arguments"
    )
    if fixtures is None:
        raise TargetError(
            f"the model called tool '{call.name}' with {shown}, but the test has no "
            f"`metadata.tool_results`; {how}",
            kind="ToolFixtureError",
        )
    if not isinstance(fixtures, Mapping):
        raise TargetError(
            "`metadata.tool_results` must be a mapping from tool name to result, got "
            f"{type(fixtures).__name__}",
            kind="ToolFixtureError",
        )
    if call.name not in fixtures:
        known = ", ".join(sorted(map(str, fixtures))) or "none"
        raise TargetError(
            f"the model called tool '{call.name}' with {shown}, but `metadata.tool_results` has "
            f"no entry for it (it has: {known}); {how}",
            kind="ToolFixtureError",
        )
    fixture = fixtures[call.name]
    if not _is_args_list(fixture):
        return fixture
    for entry in fixture:
        if "args" in entry and entry["args"] == call.args:
            return entry["result"]
    for entry in fixture:
        if "args" not in entry:
            return entry["result"]
    listed = "; ".join(_shown_args(e["args"]) for e in fixture)
    raise TargetError(
        f"the model called tool '{call.name}' with {shown}, but no entry of "
        f"`metadata.tool_results.{call.name}` has these args (listed: {listed}); add "
        "`{args: ..., result: ...}` for them, or an entry without `args` as the fallback",
        kind="ToolFixtureError",
    )


def _is_args_list(fixture: JSON) -> bool:
    return (
        isinstance(fixture, list)
        and bool(fixture)
        and all(
            isinstance(e, Mapping) and "result" in e and set(e) <= {"args", "result"}
            for e in fixture
        )
    )


def _shown_args(args: JSON) -> str:
    text = json.dumps(args, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _SHOWN_ARGS_CHARS else text[:_SHOWN_ARGS_CHARS] + "…"
