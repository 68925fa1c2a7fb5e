"""Tool calls and token usage from OpenTelemetry GenAI spans (SPEC §3).

Agents instrumented with the OpenTelemetry GenAI semantic conventions already record what a
grader needs: one `execute_tool` span per tool call (`gen_ai.tool.name`,
`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`) and one model-call span per LLM request
(`gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`). Reading them lets a recorded trace
be graded like any other output. Retrieval spans give the passages a RAG system retrieved (its
runtime `context`): the GenAI convention's `retrieval` operation with `gen_ai.retrieval.documents`
(`[{id, score, content}]`, structured or as a JSON string), and OpenInference's `RETRIEVER`
spans (`retrieval.documents.N.document.{id, content, score}`).

Input is a list of spans as exported: OTLP JSON (`attributes` as `[{key, value: {stringValue |
intValue | doubleValue | boolValue | arrayValue | kvlistValue}}]`, timestamps in
`startTimeUnixNano` / `endTimeUnixNano`, possibly still wrapped in `resourceSpans` /
`scopeSpans`) or the flat form of the Python SDK's `span.to_json()` (`attributes` as a mapping,
`start_time` / `end_time` as ISO 8601). Traces come from many instrumentations, so anything
malformed is skipped rather than rejected.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime

from assay.results import JSON, RetrievedPassage, TokenUsage, ToolCall

__all__ = ["context_from_spans", "token_usage_from_spans", "tool_calls_from_spans"]

_OPERATION = "gen_ai.operation.name"
_TOOL_OPERATION = "execute_tool"
_RETRIEVAL_OPERATION = "retrieval"
_DOCUMENTS_KEYS = ("gen_ai.retrieval.documents", "retrieval.documents")
_OPENINFERENCE_KIND = "openinference.span.kind"
_OPENINFERENCE_DOCUMENT = "retrieval.documents."
_PASSAGE_TEXT_KEYS = ("content", "text", "document.content", "page_content")
_PASSAGE_ID_KEYS = ("id", "document.id")
_PASSAGE_SCORE_KEYS = ("score", "document.score")
_MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
# The current attribute first, then names used by older conventions and other instrumentations.
_TOOL_NAME_KEYS = ("gen_ai.tool.name", "tool.name")
_ARGUMENT_KEYS = ("gen_ai.tool.call.arguments", "gen_ai.tool.arguments", "gen_ai.tool.args")
_RESULT_KEYS = ("gen_ai.tool.call.result", "gen_ai.tool.result", "gen_ai.tool.output")
_INPUT_TOKEN_KEYS = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")
_OUTPUT_TOKEN_KEYS = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")
_NS_PER_MS = 1_000_000


@dataclass(frozen=True)
class _Span:
    name: str
    attributes: dict[str, JSON]
    start_ns: int | None
    end_ns: int | None

    @property
    def operation(self) -> str | None:
        """`gen_ai.operation.name`, or the first word of the span name that the convention
        builds from it (`execute_tool get_weather`, `chat gpt-4.1`)."""
        value = self.attributes.get(_OPERATION)
        if isinstance(value, str) and value:
            return value
        if self.attributes.get(_OPENINFERENCE_KIND) == "RETRIEVER":
            return _RETRIEVAL_OPERATION
        head = self.name.split(" ", 1)[0]
        known = head in _MODEL_OPERATIONS or head in (_TOOL_OPERATION, _RETRIEVAL_OPERATION)
        return head if known else None

    def first(self, keys: tuple[str, ...]) -> JSON:
        for key in keys:
            if self.attributes.get(key) is not None:
                return self.attributes[key]
        return None


def tool_calls_from_spans(spans: Iterable[JSON]) -> list[ToolCall]:
    """The tool calls recorded as `execute_tool` spans, in the order they started.

    Args:
        spans: Span dicts in OTLP JSON or flat form (see the module docstring).

    Returns:
        One `ToolCall` per tool span that names its tool. Arguments that are not a JSON object
        are left out; the result is kept as recorded (usually a string); the duration comes
        from the span's timestamps. Spans without a start time come last.
    """
    calls: list[tuple[float, int, ToolCall]] = []
    for index, span in enumerate(_iter_spans(spans)):
        if span.operation != _TOOL_OPERATION:
            continue
        tool = span.first(_TOOL_NAME_KEYS)
        if not isinstance(tool, str) or not tool:
            _, _, tool = span.name.partition(" ")
            tool = tool.strip()
        if not tool:
            continue
        duration_ms = None
        if span.start_ns is not None and span.end_ns is not None and span.end_ns >= span.start_ns:
            duration_ms = (span.end_ns - span.start_ns) / _NS_PER_MS
        call = ToolCall(
            tool=tool,
            args=_arguments(span.first(_ARGUMENT_KEYS)),
            output=span.first(_RESULT_KEYS),
            duration_ms=duration_ms,
        )
        start = span.start_ns if span.start_ns is not None else math.inf
        calls.append((start, index, call))
    calls.sort(key=lambda item: (item[0], item[1]))
    return [call for _, _, call in calls]


def token_usage_from_spans(spans: Iterable[JSON]) -> TokenUsage | None:
    """Tokens summed over the model-call spans (`chat`, `text_completion`, `generate_content`).

    Agent and workflow spans may repeat the totals of their children, so only model calls
    count. Returns None when no model-call span reports usage.
    """
    total: TokenUsage | None = None
    for span in _iter_spans(spans):
        if span.operation not in _MODEL_OPERATIONS:
            continue
        input_tokens = _count(span.first(_INPUT_TOKEN_KEYS))
        output_tokens = _count(span.first(_OUTPUT_TOKEN_KEYS))
        if input_tokens is None and output_tokens is None:
            continue
        usage = TokenUsage(input=input_tokens or 0, output=output_tokens or 0)
        total = usage if total is None else total + usage
    return total


def context_from_spans(spans: Iterable[JSON]) -> list[RetrievedPassage]:
    """The passages of the retrieval spans, span after span in start order, each span's in
    its rank order.

    A document needs an id or a text to count; a score that is not a number is dropped.
    """
    found: list[tuple[float, int, list[RetrievedPassage]]] = []
    for index, span in enumerate(_iter_spans(spans)):
        if span.operation != _RETRIEVAL_OPERATION:
            continue
        documents = _documents(span)
        passages = [p for p in (_passage(d) for d in documents) if p is not None]
        start = span.start_ns if span.start_ns is not None else math.inf
        found.append((start, index, passages))
    found.sort(key=lambda item: (item[0], item[1]))
    return [passage for _, _, passages in found for passage in passages]


def _documents(span: _Span) -> list[JSON]:
    """The documents of a retrieval span: a list (or its JSON text) under the GenAI or the
    OpenInference key, else OpenInference's flattened `retrieval.documents.N.document.*`."""
    raw = span.first(_DOCUMENTS_KEYS)
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            raw = None
    if isinstance(raw, list):
        return raw
    flattened: dict[int, dict[str, JSON]] = {}
    for key, value in span.attributes.items():
        if not key.startswith(_OPENINFERENCE_DOCUMENT):
            continue
        position, _, field = key[len(_OPENINFERENCE_DOCUMENT) :].partition(".")
        if position.isdigit() and field:
            flattened.setdefault(int(position), {})[field] = value
    return [flattened[i] for i in sorted(flattened)]


def _passage(document: JSON) -> RetrievedPassage | None:
    if isinstance(document, str):
        return RetrievedPassage(text=document) if document else None
    if not isinstance(document, Mapping):
        return None
    if isinstance(document.get("document"), Mapping):  # OpenInference's nested form
        document = document["document"]
    text = next((document[k] for k in _PASSAGE_TEXT_KEYS if isinstance(document.get(k), str)), "")
    ident = next((document[k] for k in _PASSAGE_ID_KEYS if document.get(k) is not None), None)
    score = next((document[k] for k in _PASSAGE_SCORE_KEYS if document.get(k) is not None), None)
    if isinstance(ident, bool) or not isinstance(ident, str | int | None):
        ident = None
    if isinstance(score, bool) or not isinstance(score, int | float):
        score = None
    if ident is None and not text:
        return None
    return RetrievedPassage(
        text=text,
        id=None if ident is None else str(ident),
        score=None if score is None else float(score),
    )


def _iter_spans(spans: Iterable[JSON]) -> Iterator[_Span]:
    """Each well-formed span, looking inside OTLP `resourceSpans` / `scopeSpans` envelopes."""
    for item in spans:
        if not isinstance(item, Mapping):
            continue
        if isinstance(item.get("resourceSpans"), list):
            yield from _iter_spans(item["resourceSpans"])
        elif isinstance(item.get("scopeSpans"), list):
            yield from _iter_spans(item["scopeSpans"])
        elif isinstance(item.get("spans"), list) and "name" not in item:
            yield from _iter_spans(item["spans"])
        elif isinstance(item.get("name"), str):
            yield _Span(
                name=item["name"],
                attributes=_attributes(item.get("attributes")),
                start_ns=_timestamp(item.get("startTimeUnixNano", item.get("start_time"))),
                end_ns=_timestamp(item.get("endTimeUnixNano", item.get("end_time"))),
            )


def _attributes(raw: JSON) -> dict[str, JSON]:
    if isinstance(raw, Mapping):
        return {str(key): _any_value(value) for key, value in raw.items()}
    if isinstance(raw, list):
        return _key_values(raw)
    return {}


def _key_values(items: list[JSON]) -> dict[str, JSON]:
    """OTLP `[{key, value: AnyValue}]`."""
    return {
        item["key"]: _any_value(item.get("value"))
        for item in items
        if isinstance(item, Mapping) and isinstance(item.get("key"), str)
    }


def _any_value(value: JSON) -> JSON:
    """Unwrap an OTLP `AnyValue`; anything else is already a plain value."""
    if not isinstance(value, Mapping) or len(value) != 1:
        return value
    ((kind, inner),) = value.items()
    if kind in ("stringValue", "boolValue", "doubleValue", "bytesValue"):
        return inner
    if kind == "intValue":
        # The proto3 JSON mapping writes int64 as a string.
        try:
            return int(inner)
        except (TypeError, ValueError):
            return inner
    if kind == "arrayValue":
        values = inner.get("values") if isinstance(inner, Mapping) else None
        return [_any_value(v) for v in values] if isinstance(values, list) else []
    if kind == "kvlistValue":
        values = inner.get("values") if isinstance(inner, Mapping) else None
        return _key_values(values) if isinstance(values, list) else {}
    return value


def _timestamp(raw: JSON) -> int | None:
    """Nanoseconds since the epoch from an integer, a digit string or an ISO 8601 time."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if not isinstance(raw, str):
        return None
    if raw.isdigit():
        return int(raw)
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        return None
    return round(moment.timestamp() * 1_000_000) * 1000


def _arguments(raw: JSON) -> dict[str, JSON]:
    """The convention records arguments as a JSON string; some SDKs record the object."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            return {}
    return dict(raw) if isinstance(raw, Mapping) else {}


def _count(raw: JSON) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw if raw >= 0 else None
    if isinstance(raw, float) and raw.is_integer() and raw >= 0:
        return int(raw)
    if isinstance(raw, str) and raw.isdigit():
        return int(raw)
    return None
