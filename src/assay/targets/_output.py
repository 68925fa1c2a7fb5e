"""Turn what a Python function returns or a command prints into a `TargetOutput` (SPEC §3).

The structured shape is `{output, messages, tool_calls: [{tool, args, output, duration_ms}],
token_usage: {input, output}, cost_usd, duration_ms, finish_reason}`. Tool calls may also come
in the OpenAI Chat Completions form inside assistant messages; they are normalised to
`ToolCall`, given the content of the matching `role: tool` reply as their output, and collected
into the top-level `tool_calls` when the reply does not list them itself. An optional `spans`
list of OpenTelemetry GenAI spans (`assay.targets._otel`) supplies the tool calls, token usage
and retrieved passages the reply does not give directly; spans win over message tool calls
since they also carry durations. `context` is what a RAG system retrieved: a list of strings
or of `{id, text, score}`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from assay._strict_model import StrictModel
from assay.errors import TargetError
from assay.results import (
    JSON,
    Message,
    RetrievedPassage,
    TargetOutput,
    TargetOutputFields,
    TokenUsage,
    ToolCall,
)
from assay.targets._otel import (
    context_from_spans,
    token_usage_from_spans,
    tool_calls_from_spans,
)

__all__ = ["parse_target_output", "parse_text_output", "simple_output", "with_duration"]

_MAX_REPORTED_ERRORS = 5
NonNegative = Annotated[float, Field(ge=0.0)]


class _WireToolCall(StrictModel):
    """A tool call as written: `{tool, args, output, duration_ms}` or OpenAI's `{id, function}`."""

    tool: str
    args: dict[str, JSON] = Field(default_factory=dict)
    output: JSON = None
    duration_ms: NonNegative | None = None
    id: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_openai(cls, data: Any) -> Any:
        if not isinstance(data, Mapping) or "function" not in data:
            return data
        function = data["function"]
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise PydanticCustomError("tool_call", "function.name must be a string")
        return {
            "tool": function["name"],
            "args": _arguments(function.get("arguments")),
            "id": data.get("id"),
        }


def _arguments(raw: JSON) -> dict[str, JSON]:
    """OpenAI sends arguments as a JSON string; some compatible servers send the object."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise PydanticCustomError(
                "tool_call", "function.arguments is not valid JSON: {error}", {"error": str(exc)}
            ) from None
    if not isinstance(raw, dict):
        raise PydanticCustomError("tool_call", "function.arguments must be a JSON object")
    return raw


class _WirePassage(StrictModel):
    """A retrieved passage as written: `{id, text, score}`, each optional but not both of id
    and text (ids may be numbers, as many vector stores number them)."""

    text: str = ""
    id: str | int | None = None
    score: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, data: Any) -> Any:
        return {"text": data} if isinstance(data, str) else data

    @model_validator(mode="after")
    def _id_or_text(self) -> _WirePassage:
        if self.id is None and not self.text:
            raise ValueError("a passage needs its `text`, its `id`, or both")
        return self

    def passage(self) -> RetrievedPassage:
        """As stored; a numeric id becomes its text, so `7` matches an expected id `"7"`."""
        ident = None if self.id is None else str(self.id)
        return RetrievedPassage(text=self.text, id=ident, score=self.score)


class _WireMessage(BaseModel):
    """A transcript message. Unknown keys are ignored: provider SDK dumps carry many
    (`refusal`, `audio`, `annotations`) that mean nothing to grading."""

    model_config = ConfigDict(extra="ignore")

    role: str
    content: str | None = None
    tool_calls: list[_WireToolCall] | None = None
    name: str | None = None
    tool_call_id: str | None = None

    @field_validator("content", mode="before")
    @classmethod
    def _join_text_parts(cls, value: Any) -> Any:
        """OpenAI content may be a list of parts; keep the text ones."""
        if not isinstance(value, list):
            return value
        return "".join(
            part["text"]
            for part in value
            if isinstance(part, Mapping) and part.get("type") == "text" and "text" in part
        )


class _WireOutput(StrictModel):
    """The structured reply of a Python function or a command."""

    output: str
    messages: list[_WireMessage] = Field(default_factory=list)
    tool_calls: list[_WireToolCall] | None = None
    token_usage: TokenUsage | None = None
    cost_usd: NonNegative | None = None
    duration_ms: NonNegative | None = None
    context: list[_WirePassage] | None = None
    """The passages retrieved: strings, or `{id, text, score}` mappings."""
    spans: list[JSON] | None = None
    """OpenTelemetry GenAI spans of the run; malformed ones are skipped, not rejected."""
    finish_reason: str | None = None
    """Why the model stopped (`stop`, `length`, `tool_calls`, `content_filter`)."""

    def to_target_output(self) -> TargetOutput:
        replies = {
            m.tool_call_id: m.content
            for m in self.messages
            if m.role == "tool" and m.tool_call_id is not None
        }

        def convert(calls: list[_WireToolCall] | None) -> list[ToolCall]:
            return [
                ToolCall(
                    tool=c.tool,
                    args=c.args,
                    output=c.output if c.output is not None else replies.get(c.id or ""),
                    duration_ms=c.duration_ms,
                )
                for c in calls or []
            ]

        messages = [
            Message(role=m.role, content=m.content, tool_calls=convert(m.tool_calls), name=m.name)
            for m in self.messages
        ]
        span_calls = tool_calls_from_spans(self.spans) if self.spans else []
        if self.tool_calls is not None:
            tool_calls = convert(self.tool_calls)
        elif span_calls:
            tool_calls = span_calls
        else:
            tool_calls = [call for m in messages for call in m.tool_calls]
        token_usage = self.token_usage
        if token_usage is None and self.spans:
            token_usage = token_usage_from_spans(self.spans)
        fields: TargetOutputFields = {
            "output": self.output,
            "messages": messages,
            "tool_calls": tool_calls,
            "token_usage": token_usage,
            "cost_usd": self.cost_usd,
            "finish_reason": self.finish_reason,
        }
        if self.context is not None:
            fields["context"] = [p.passage() for p in self.context]
        elif self.spans:
            fields["context"] = context_from_spans(self.spans)
        # Left unset when not reported so the target can fill in the latency it measured.
        if self.duration_ms is not None:
            fields["duration_ms"] = self.duration_ms
        return TargetOutput(**fields)


def parse_target_output(value: JSON, *, source: str = "target") -> TargetOutput:
    """Build a `TargetOutput` from a string, a structured mapping or a `TargetOutput`.

    Args:
        value: What the system under test produced.
        source: Who produced it, for error messages (e.g. `function 'agent:answer'`).

    Returns:
        The output. `duration_ms` is in `model_fields_set` only when the value reported it.

    Raises:
        TargetError: The value is neither a string nor a mapping of the structured shape; the
            message names the offending field.
    """
    if isinstance(value, TargetOutput):
        return value
    if isinstance(value, str):
        return TargetOutput(output=value)
    if not isinstance(value, Mapping):
        raise TargetError(
            f"invalid output from {source}: got {type(value).__name__}; expected a string or "
            "a mapping with an 'output' key"
        )
    simple = simple_output(value)
    if simple is not None:
        return simple
    try:
        wire = _WireOutput.model_validate(dict(value))
    except ValidationError as exc:
        raise TargetError(f"invalid output from {source}: {_describe(exc)}") from None
    return wire.to_target_output()


def simple_output(
    value: Mapping[str, Any], keys: frozenset[str] = frozenset({"output", "duration_ms"})
) -> TargetOutput | None:
    """The output of `{output, duration_ms?}` (what most recordings hold), built directly:
    the general path validates the structured shape, then converts it (~5 µs a record of a
    100,000-case replay). None for anything else, which takes the general path. `keys` are
    those `value` may have (a replay record's id keys besides the reply's)."""
    output = value.get("output")
    if not isinstance(output, str) or not value.keys() <= keys:
        return None
    if "duration_ms" not in value:
        return TargetOutput(output=output)
    duration = value["duration_ms"]
    if isinstance(duration, bool) or not isinstance(duration, int | float) or not duration >= 0:
        return None  # the general path names the problem
    return TargetOutput(output=output, duration_ms=duration)


def parse_text_output(text: str, *, source: str = "target") -> TargetOutput:
    """Parse what a command printed: the structured JSON object, or else plain text.

    The text counts as structured only when all of it is a JSON object with an `output` key;
    anything else is the output itself, without trailing newlines.

    Args:
        text: The command's stdout, or the content of its `{OUTPUT_FILE}`.
        source: Who printed it, for error messages.

    Raises:
        TargetError: The text is a JSON object with `output` but of an invalid shape.
    """
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and "output" in data:
            return parse_target_output(data, source=source)
    return TargetOutput(output=text.rstrip("\r\n"))


def with_duration(output: TargetOutput, duration_ms: float) -> TargetOutput:
    """Fill in the latency the target measured, unless the system under test reported its own."""
    if "duration_ms" in output.model_fields_set:
        return output
    return output.model_copy(update={"duration_ms": duration_ms})


def _describe(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False, include_input=False)
    parts = [
        f"{_location(err['loc'])}: {err['msg']}" if err["loc"] else err["msg"]
        for err in errors[:_MAX_REPORTED_ERRORS]
    ]
    if len(errors) > _MAX_REPORTED_ERRORS:
        parts.append(f"and {len(errors) - _MAX_REPORTED_ERRORS} more")
    return "; ".join(parts)


def _location(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text
