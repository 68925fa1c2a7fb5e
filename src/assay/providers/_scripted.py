"""Scripted answers to judge requests: an instance of the reply schema a judge request sends.

A judge request is recognised by the judge client's system message, which carries the JSON
Schema of the reply (and, in structured-output mode, `response_format` carries it too). A script
sets the values it cares about; every other field gets a type-appropriate default. The `fake`
provider and the test server (`assay.testing`) answer judges this way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from assay.results import JSON

__all__ = ["SCHEMA_MARKER", "fill", "is_judge_request", "schema_of"]

SCHEMA_MARKER = "JSON Schema of the reply:"
"""Where the judge client's system message gives the schema (see assay.judge.SYSTEM_RULES)."""

_DEFAULTS: dict[str, JSON] = {
    "string": "",
    "number": 0.0,
    "integer": 0,
    "boolean": False,
    "array": [],
    "null": None,
}


def _system_text(body: Mapping[str, JSON]) -> str:
    system = body.get("system")
    if isinstance(system, str):
        return system
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else []:
        if isinstance(message, dict) and message.get("role") == "system":
            content = message.get("content")
            return content if isinstance(content, str) else ""
    return ""


def is_judge_request(body: Mapping[str, JSON]) -> bool:
    """Whether the request comes from assay's judge client."""
    return SCHEMA_MARKER in _system_text(body)


def schema_of(body: Mapping[str, JSON]) -> dict[str, JSON]:
    """The reply schema: from `response_format` when present, else from the system message."""
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and isinstance(response_format.get("json_schema"), dict):
        schema = response_format["json_schema"].get("schema")
        if isinstance(schema, dict):
            return schema
    text = _system_text(body)
    start = text.index(SCHEMA_MARKER) + len(SCHEMA_MARKER)
    value, _ = json.JSONDecoder().raw_decode(text[start:].strip())
    if not isinstance(value, dict):
        raise ValueError("the system message's schema is not a JSON object")
    return value


def fill(schema: Mapping[str, JSON], values: Mapping[str, JSON], root: Mapping[str, JSON]) -> JSON:
    """An instance of `schema`: `values` for the fields they name (an object value completed
    from its own schema), defaults elsewhere."""
    ref = schema.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        defs = root.get("$defs")
        target = defs.get(name) if isinstance(defs, dict) else None
        return fill(target if isinstance(target, dict) else {}, values, root)
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    options = schema.get("anyOf")
    if isinstance(options, list):
        usable = [o for o in options if isinstance(o, dict) and o.get("type") != "null"]
        return fill(usable[0], values, root) if usable else None
    properties = schema.get("properties")
    if schema.get("type") == "object" or isinstance(properties, dict):
        fields = properties if isinstance(properties, dict) else {}
        filled = {
            name: _value(sub, values[name], root) if name in values else fill(sub, {}, root)
            for name, sub in fields.items()
            if isinstance(sub, dict)
        }
        return filled
    kind = schema.get("type")
    return _DEFAULTS.get(kind) if isinstance(kind, str) else None


def _value(schema: Mapping[str, JSON], value: JSON, root: Mapping[str, JSON]) -> JSON:
    """A scripted value of a field: an object is completed from its schema (so a keyed reply's
    pinned texts and unscripted fields are filled in; keys the schema lacks are kept, so a
    test can send an unknown entry), anything else is taken as it is."""
    fields = schema.get("properties")
    if isinstance(value, dict) and isinstance(fields, dict):
        filled = fill(schema, value, root)
        assert isinstance(filled, dict)
        return {**filled, **{k: v for k, v in value.items() if k not in fields}}
    return value
