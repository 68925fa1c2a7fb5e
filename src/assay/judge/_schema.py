"""Reply schemas for structured output, and reading JSON out of a free-text reply.

OpenAI's strict structured output accepts a subset of JSON Schema: every object closed
(`additionalProperties: false`) with every property required, and no numeric or length
bounds. `strict_schema` derives that subset from the pydantic model of a reply; the model
itself still validates the bounds, so a reply outside them is retried like any invalid one.

A grader whose reply has one entry per thing it asks about (an expected outcome, a rubric
item, an agent metric) pins those entries in the call's schema with `keyed_schema`: one
required property per entry, named by its number or id, with the entry's text fixed to a
single-value `enum`. Strict structured output then cannot produce an unknown, missing or
drifted entry, and `schema_problems` runs the same checks on replies from servers without
strict mode. A repeated key, which a JSON parser would silently collapse into one entry, is
refused when the reply is read (`extract_json`).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from assay.results import JSON

__all__ = [
    "Entry",
    "extract_json",
    "keyed_schema",
    "reply_schema",
    "schema_problems",
    "strict_schema",
]

_SHOWN_PROBLEMS = 5
"""Schema violations quoted in a re-ask (and in the grader's error); the rest are counted."""
_QUOTED = 160
"""Longest quotation of a reply's value in a violation message."""

_FENCE = re.compile(r"```[A-Za-z]*[ \t]*\n(.*?)```", re.DOTALL)

_KEPT = frozenset(
    {
        "type",
        "properties",
        "required",
        "items",
        "enum",
        "const",
        "anyOf",
        "description",
        "additionalProperties",
        "$ref",
        "$defs",
        "title",
    }
)


@functools.lru_cache(maxsize=256)
def reply_schema(model: type[BaseModel]) -> dict[str, JSON]:
    """The plain JSON Schema of a reply model (shown to the judge in its instructions).

    Built once per model: generating it took more CPU than the rest of a judge call. The
    result is shared; callers must not change it."""
    return model.model_json_schema()


@functools.lru_cache(maxsize=256)
def reply_schema_text(model: type[BaseModel]) -> str:
    """`reply_schema` as the JSON text the judge's instructions quote (made once per model:
    every judge call quotes it)."""
    return json.dumps(reply_schema(model))


@functools.lru_cache(maxsize=256)
def strict_schema(model: type[BaseModel]) -> dict[str, JSON]:
    """The strict-mode JSON Schema of a reply model (built once per model, shared: callers
    must not change it)."""
    return _strict(reply_schema(model))  # type: ignore[no-any-return]


def _strict(node: Any) -> Any:
    if isinstance(node, list):
        return [_strict(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _strict(v) for k, v in node.items() if k in _KEPT}
    if "$defs" in node:
        out["$defs"] = {name: _strict(d) for name, d in node["$defs"].items()}
    if "properties" in node:
        out["properties"] = {name: _strict(p) for name, p in node["properties"].items()}
        out["required"] = list(node["properties"])
        out["additionalProperties"] = False
    if "$ref" in out:  # strict mode rejects siblings of $ref
        return {"$ref": out["$ref"]}
    return out


@dataclass(frozen=True)
class Entry:
    """One entry a keyed reply must hold: the model its value follows, the fields pinned to a
    single value (the statement it answers, copied by the grammar rather than by the judge),
    and what the judge reads about it."""

    model: type[BaseModel]
    pinned: Mapping[str, str] = field(default_factory=dict)
    description: str | None = None


def keyed_schema(
    title: str, field_name: str, entries: Mapping[str, Entry], description: str
) -> dict[str, JSON]:
    """The closed schema of a reply `{field_name: {key: entry, ...}}` holding exactly the keys
    of `entries`, each value following its entry's model with the pinned fields fixed.

    Strict-mode compatible as it is (every object closed, every property required), so it is
    both the schema shown to the judge and the one sent as `response_format`.
    """
    properties: dict[str, JSON] = {key: _pinned(entry) for key, entry in entries.items()}
    return {
        "title": title,
        "type": "object",
        "properties": {
            field_name: {
                "type": "object",
                "description": description,
                "properties": properties,
                "required": list(entries),
                "additionalProperties": False,
            }
        },
        "required": [field_name],
        "additionalProperties": False,
    }


def _pinned(entry: Entry) -> dict[str, JSON]:
    base = strict_schema(entry.model)
    if "$defs" in base:
        raise ValueError(f"a keyed entry's model must be flat; {entry.model.__name__} is not")
    fields: dict[str, Any] = dict(base["properties"])
    for name, value in entry.pinned.items():
        fields[name] = {**fields[name], "enum": [value]}
    item: dict[str, JSON] = {**base, "properties": fields}
    if entry.description is not None:
        item["description"] = entry.description
    return item


def schema_problems(data: JSON, schema: Mapping[str, JSON]) -> str | None:
    """What in a parsed reply breaks its (closed) schema: unknown, missing or drifted entries,
    wrong types; None when it conforms. The checks strict structured output makes while the
    reply is generated, made again for servers that have no strict mode."""
    from jsonschema import Draft202012Validator

    errors = sorted(
        Draft202012Validator(schema).iter_errors(data),
        key=lambda e: [str(p) for p in e.absolute_path],
    )
    if not errors:
        return None
    shown = [f"{e.json_path}: {_clip(e.message)}" for e in errors[:_SHOWN_PROBLEMS]]
    more = len(errors) - len(shown)
    if more:
        shown.append(f"and {more} more")
    return f"it does not match the schema ({'; '.join(shown)})"


def _clip(message: str) -> str:
    return message if len(message) <= 2 * _QUOTED else f"{message[:_QUOTED]}…{message[-_QUOTED:]}"


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object of a reply, refusing a key given twice (json.loads would keep the last)."""
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError(f"the reply gives the key {key!r} more than once")
        obj[key] = value
    return obj


_DECODER = json.JSONDecoder(object_pairs_hook=_no_repeated_keys)
"""Judge replies' decoder (one: `json.loads` with a hook builds one per call)."""


def _loads(text: str) -> Any:
    return _DECODER.decode(text)


def extract_json(text: str) -> JSON:
    """The JSON object in `text`: the whole text, else the first fenced block holding one,
    else the first `{...}` that parses (models often wrap JSON in prose or Markdown fences).

    A fenced block wins over an object earlier in the prose, so a judge that quotes a verdict
    printed by the output before giving its own in a fence is read by its own.

    Raises:
        ValueError: No JSON object could be read, or the one read gives a key twice.
    """
    stripped = text.strip()
    for candidate in (stripped, *(m.group(1) for m in _FENCE.finditer(stripped))):
        try:
            whole = _loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(whole, dict):
            return whole
    start = stripped.find("{")
    while start != -1:
        try:
            value, _ = _DECODER.raw_decode(stripped, start)
        except json.JSONDecodeError:
            start = stripped.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = stripped.find("{", start + 1)
    raise ValueError(f"the reply holds no JSON object: {stripped[:200]!r}")
