"""Scripted judge replies for the fake server: answer the reply schema a judge request sends.

The test sets the values it cares about; every other field gets a type-appropriate default, so
a test of a rubric grader need not spell out fields it does not check (the schema reading and
filling is `assay.providers`', shared with the `fake` provider).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TypeAlias

from assay.providers._scripted import SCHEMA_MARKER, fill, is_judge_request, schema_of
from assay.results import JSON

__all__ = ["SCHEMA_MARKER", "JudgeScript", "fill", "is_judge_request", "judge_reply", "schema_of"]

JudgeScript: TypeAlias = (
    Mapping[str, JSON] | Callable[[dict[str, JSON], dict[str, JSON]], Mapping[str, JSON]]
)
"""The judge's values: a mapping of top-level reply fields, or a function of the request body
and the reply schema returning one."""


def judge_reply(body: dict[str, JSON], script: JudgeScript, *, anthropic: bool) -> JSON:
    """The scripted reply to a judge request, in the shape the reply script uses."""
    schema = schema_of(body)
    values = script(body, schema) if callable(script) else script
    answer = fill(schema, values, schema)
    if anthropic and isinstance(body.get("tool_choice"), dict):
        name = body["tool_choice"].get("name", "submit_judgement")
        return {"tool_calls": [{"name": name, "arguments": answer}]}
    text = json.dumps(answer)
    if "response_format" in body:
        return text
    return f"Here is my judgement.\n```json\n{text}\n```"
