"""Reply schemas for structured output, and reading JSON out of a free-text reply.

OpenAI's strict structured output accepts a subset of JSON Schema: every object closed
(`additionalProperties: false`) with every property required, and no numeric or length
bounds. `strict_schema` derives that subset from the pydantic model of a reply; the model
itself still validates the bounds, so a reply outside them is retried like any invalid one.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from pydantic import BaseModel

from assay.results import JSON

__all__ = ["extract_json", "reply_schema", "strict_schema"]

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


def extract_json(text: str) -> JSON:
    """The JSON object in `text`: the whole text, else the first fenced block holding one,
    else the first `{...}` that parses (models often wrap JSON in prose or Markdown fences).

    A fenced block wins over an object earlier in the prose, so a judge that quotes a verdict
    printed by the output before giving its own in a fence is read by its own.

    Raises:
        ValueError: No JSON object could be read.
    """
    stripped = text.strip()
    for candidate in (stripped, *(m.group(1) for m in _FENCE.finditer(stripped))):
        try:
            whole = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(whole, dict):
            return whole
    decoder = json.JSONDecoder()
    start = stripped.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(stripped, start)
        except json.JSONDecodeError:
            start = stripped.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = stripped.find("{", start + 1)
    raise ValueError(f"the reply holds no JSON object: {stripped[:200]!r}")
