"""The contains-json grader: some part of the output is JSON (an object or an array), and with
a `schema`, some such part satisfies it.

Prose around the JSON is allowed: a model that answers "Here is the order: {…}" passes. Each
`{` or `[` (the first 200) starts a candidate read with the same strict JSON reader as is-json;
a candidate found inside an earlier one is not tried again.
"""

from __future__ import annotations

import json
from typing import Annotated, Literal

from pydantic import Field, field_validator

from assay.graders._base import Grader, GradingContext, Measurement
from assay.graders._details import detail, truncate
from assay.graders._json_schema import check_schema, schema_violations
from assay.graders.structured import _STRICT_DECODER
from assay.results import JSON

__all__ = ["ContainsJson", "embedded_json"]

_MAX_STARTS = 200
"""Candidate starts tried; an output with more `{`/`[` keeps the first 200."""


def embedded_json(text: str) -> list[JSON]:
    """The JSON objects and arrays in `text`, outermost first, in order of appearance."""
    found: list[JSON] = []
    end = 0
    tried = 0
    for i, char in enumerate(text):
        if char not in "{[" or i < end:
            continue
        tried += 1
        if tried > _MAX_STARTS:
            break
        try:
            value, stop = _STRICT_DECODER.raw_decode(text, i)
        except ValueError:
            continue
        found.append(value)
        end = stop
    return found


class ContainsJson(Grader):
    """The output contains JSON, matching `schema` when one is given (score 1 or 0)."""

    type: Literal["contains-json"]
    schema_: Annotated[dict[str, JSON] | None, Field(alias="schema")] = None
    """A JSON Schema (draft 2020-12) one of the embedded JSON values must satisfy."""

    @field_validator("schema_")
    @classmethod
    def _valid_schema(cls, schema: dict[str, JSON] | None) -> dict[str, JSON] | None:
        if schema is not None:
            check_schema(schema)
        return schema

    async def measure(self, ctx: GradingContext) -> Measurement:
        values = embedded_json(ctx.output)
        if not values:
            return self._verdict(False, "the output contains no JSON object or array", ctx)
        if self.schema_ is None:
            return self._verdict(True, f"the output contains {len(values)} JSON value(s)", ctx)
        first_problem = ""
        for value in values:
            violations = schema_violations(value, self.schema_)
            if not violations:
                return self._verdict(True, "embedded JSON matches the schema", ctx, value)
            first_problem = first_problem or f"{violations[0][0]}: {violations[0][1]}"
        return self._verdict(
            False, f"no embedded JSON matches the schema ({truncate(first_problem, 120)})", ctx
        )

    @staticmethod
    def _verdict(
        passed: bool, message: str, ctx: GradingContext, value: JSON = None
    ) -> Measurement:
        shown = ctx.output if value is None else json.dumps(value, ensure_ascii=False)
        return Measurement(
            score=1.0 if passed else 0.0,
            hits=[message] if passed else [],
            misses=[] if passed else [message],
            details=[
                detail(
                    "contains-json", passed, expected="embedded JSON", actual=shown, message=message
                )
            ],
        )
