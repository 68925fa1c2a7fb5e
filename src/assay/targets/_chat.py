"""What the model-API targets (`openai`, `anthropic`) share: options, the tool loop and
tool-result fixtures, over a provider (`assay.providers`).

The provider carries requests and maps failures; the wire modules read replies. Each target
module only builds its request bodies from its options; the loop that calls the model, answers
tool calls from the test's `metadata.tool_results` and calls it again lives here once.
"""

from __future__ import annotations

import json
import time
from abc import abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, PrivateAttr, field_validator, model_validator

from assay._strict_model import StrictModel
from assay.errors import TargetError
from assay.providers import (
    ModelTurn,
    Pricing,
    Provider,
    ProviderConfig,
    ProviderError,
    TurnCall,
    Wire,
    check_preset,
    check_provider,
    open_provider,
    preset_named,
)
from assay.results import JSON, Message, TargetOutput, TokenUsage, ToolCall, add_usage
from assay.targets._base import Target, TargetRequest
from assay.targets._client import Slot, target_error

__all__ = ["ChatModelTarget", "ModelTurn", "ToolSpec", "TurnCall"]

_SHOWN_ARGS_CHARS = 200


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


class ChatModelTarget(Target):
    """Base of targets that call a hosted chat model through a provider.

    Subclasses build the request body in their wire format; this class opens the provider, runs
    the optional tool loop and assembles the `TargetOutput`.
    """

    provider: str
    """Which service: a preset that fills `base_url` and `api_key_env` (see docs/providers.md),
    or `fake` for scripted offline replies from each test's `metadata`."""
    model: Annotated[str, Field(min_length=1)]
    """Model name as the API expects it, e.g. `gpt-4.1-mini`."""
    base_url: str | None = None
    """API endpoint; default: the provider preset's (or its `*_BASE_URL` environment
    variable)."""
    api_key_env: str | None = None
    """Environment variable holding the API key (default: the provider preset's, e.g.
    `OPENAI_API_KEY`); `null` for a local server without auth."""
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

    _client: Slot[Provider] = PrivateAttr(default_factory=Slot)

    wire: ClassVar[Literal["openai", "anthropic"]]
    """The protocol the target builds its request bodies in."""
    provider_wires: ClassVar[tuple[Wire, ...]]
    """The protocols of the providers the target type accepts (built-in and plugin)."""

    @model_validator(mode="before")
    @classmethod
    def _preset_key(cls, data: Any) -> Any:
        """An unset `api_key_env` becomes the preset's variable. Each target type's declared
        default is its own provider's variable, so a config dumped without its defaults (a
        stored run plan) validates back to the same variable, `null` included."""
        if isinstance(data, dict) and "api_key_env" not in data:
            try:
                preset = preset_named(str(data.get("provider", cls.wire)))
            except KeyError:  # an unknown provider: `_check_provider` reports it
                return data
            data = {**data, "api_key_env": preset.api_key_env}
        return data

    @field_validator("provider")
    @classmethod
    def _check_provider(cls, value: str) -> str:
        return check_preset(value, cls.provider_wires)

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

    # -- what a target type supplies ------------------------------------------------------------

    @abstractmethod
    def first_messages(self, request: TargetRequest) -> list[JSON]:
        """The test's messages in the wire format."""

    @abstractmethod
    def request_body(self, messages: list[JSON]) -> dict[str, JSON]:
        """The full request body for a conversation: model, sampling parameters, tools."""

    @abstractmethod
    def follow_up(self, turn: ModelTurn, results: list[str]) -> list[JSON]:
        """Wire messages that append a tool-calling turn and the results to the conversation."""

    @abstractmethod
    def read_turn(self, reply: dict[str, JSON]) -> ModelTurn:
        """A wire-format reply as a turn (raises `ProviderError` when it is malformed)."""

    # -- lifecycle ------------------------------------------------------------------------------

    def provider_config(self) -> ProviderConfig:
        """Where and how to reach the model."""
        who = f"{self.type} target" if self.provider == self.type else f"{self.provider} target"
        return ProviderConfig(
            provider=self.provider,
            base_url=self.base_url,
            api_key_env=self.api_key_env,
            timeout_s=self.timeout_s,
            who=who,
            purpose="target",
        )

    def describe(self) -> str:
        """Provider and model, plus the endpoint when it is not the default."""
        where = f" at {self.base_url}" if self.base_url else ""
        return f"{self.provider} {self.model}{where}"

    def resolved_base_url(self) -> str:
        """The endpoint requests go to: `base_url`, else the preset's environment variable or
        default (named in the cache key, so it names the real endpoint)."""
        if preset_named(self.provider).wire == "fake":
            return "fake://scripted"
        return self.provider_config().endpoint()

    async def setup(self, base_dir: Path) -> None:
        """Open the provider (one per target, shared by concurrent cases).

        Raises:
            UsageError: The API key's environment variable is not set, or the provider's SDK
                or settings are missing.
        """
        del base_dir
        provider = open_provider(self.provider_config(), self.wire)
        await self._client.hold(provider)
        await provider.prepare()

    def missing_key(self) -> str | None:
        """The message opening the provider raises for an unset API key variable, or None."""
        return self.provider_config().missing_key()

    def check(self, base_dir: Path) -> None:
        """The provider's SDK is installed (its API key is `missing_key`'s concern).

        Raises:
            UsageError: It is not.
        """
        del base_dir
        check_provider(self.provider_config())

    async def teardown(self) -> None:
        """Close the provider and its HTTP connections."""
        await self._client.close()

    def cache_key(self, request: TargetRequest) -> dict[str, JSON] | None:
        """Provider, model, endpoint, the exact first request body and the tool fixtures."""
        key: dict[str, JSON] = {
            "provider": self.provider,
            "model": self.model,
            "base_url": self.resolved_base_url(),
            "body": self.request_body(self.first_messages(request)),
            "tool_results": request.metadata.get("tool_results"),
        }
        if preset_named(self.provider).wire == "fake":
            key["metadata"] = dict(request.metadata)  # the script is the fake model
        return key

    # -- one case -------------------------------------------------------------------------------

    async def call(self, request: TargetRequest) -> TargetOutput:
        """Call the model, answering tool calls from fixtures when `tool_loop` is on.

        Raises:
            TargetError: The API failed (`retryable` for 429, 408, 5xx, timeouts, dropped
                connections and malformed replies; `rate_limited` with `retry_after_s` for 429),
                or a tool call has no fixture, or the model never stopped calling tools.
        """
        slot: Slot[Provider] = self.run_state("_client", Slot)
        provider = slot.held(f"{self.provider} target")
        started = time.perf_counter()
        conversation = self.first_messages(request)
        transcript = self._input_transcript(request)
        usage: TokenUsage | None = None
        for _ in range(self.max_tool_rounds + 1):
            turn = await self._complete(provider, self.request_body(conversation), request)
            usage = add_usage(usage, turn.usage)
            if not turn.calls or not self.tool_loop:
                calls = [ToolCall(tool=c.name, args=c.args) for c in turn.calls]
                transcript.append(Message(role="assistant", content=turn.text, tool_calls=calls))
                return self._output(turn.text or "", transcript, usage, started, turn.finish_reason)
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

    async def _complete(
        self, provider: Provider, body: dict[str, JSON], request: TargetRequest
    ) -> ModelTurn:
        try:
            return self.read_turn(await provider.complete(body, metadata=request.metadata))
        except ProviderError as exc:
            raise target_error(self.describe(), exc) from exc

    def _input_transcript(self, request: TargetRequest) -> list[Message]:
        system = [Message(role="system", content=self.system_prompt)] if self.system_prompt else []
        return [*system, *request.messages]

    def _output(
        self,
        text: str,
        transcript: list[Message],
        usage: TokenUsage | None,
        started: float,
        finish_reason: str | None,
    ) -> TargetOutput:
        return TargetOutput(
            output=text,
            messages=transcript,
            tool_calls=[c for m in transcript for c in m.tool_calls],
            token_usage=usage,
            cost_usd=Pricing(self.cost_per_1k_input, self.cost_per_1k_output).cost(usage),
            duration_ms=(time.perf_counter() - started) * 1000,
            finish_reason=finish_reason,
        )


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
