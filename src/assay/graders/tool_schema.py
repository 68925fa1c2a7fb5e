"""The valid-tool-calls grader: every tool call names a declared tool with valid arguments.

The declarations are the `tools` a model was offered, in OpenAI's shape
(`{type: function, function: {name, parameters}}`) or as plain `{name, parameters}`; each
call's arguments are validated against its tool's `parameters` JSON Schema (draft 2020-12).
promptfoo's `is-valid-openai-tools-call` becomes this grader.
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import model_validator

from assay.graders._base import Grader, GradingContext, Measurement
from assay.graders._details import detail, truncate
from assay.graders._json_schema import check_schema, schema_violations
from assay.results import JSON

__all__ = ["ValidToolCalls"]


def _declaration(tool: dict[str, JSON]) -> tuple[str, dict[str, JSON]]:
    """(name, parameters schema) of one declaration, OpenAI-shaped or plain."""
    spec = tool.get("function") if isinstance(tool.get("function"), dict) else tool
    assert isinstance(spec, dict)
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"a tool declaration has no `name`: {truncate(tool)}")
    parameters = spec.get("parameters", {"type": "object"})
    if not isinstance(parameters, dict):
        raise ValueError(f"tool '{name}': `parameters` must be a JSON Schema object")
    return name, parameters


class ValidToolCalls(Grader):
    """The output made at least one tool call, and every call is valid (score 1 or 0)."""

    type: Literal["valid-tool-calls"]
    tools: list[dict[str, JSON]]
    """The declared tools: `{type: function, function: {name, description, parameters}}` (the
    OpenAI request shape) or `{name, parameters}`; `parameters` is checked when the suite loads."""
    require_call: bool = True
    """Fail when the output made no tool call (promptfoo's rule); false passes it."""

    @model_validator(mode="after")
    def _valid_tools(self) -> Self:
        for tool in self.tools:
            name, parameters = _declaration(tool)
            try:
                check_schema(parameters)
            except ValueError as exc:
                raise ValueError(f"tool '{name}': {exc}") from None
        return self

    async def measure(self, ctx: GradingContext) -> Measurement:
        declared = dict(_declaration(t) for t in self.tools)
        calls = ctx.tool_calls
        if not calls:
            passed = not self.require_call
            message = "the output made no tool call"
            return Measurement(
                score=1.0 if passed else 0.0,
                hits=[message] if passed else [],
                misses=[] if passed else [message],
                details=[
                    detail("valid-tool-calls", passed, expected="a tool call", message=message)
                ],
            )
        details = []
        misses = []
        for i, call in enumerate(calls):
            check = f"valid-tool-calls[{i}].{call.tool}"
            if call.tool not in declared:
                problem = f"'{call.tool}' is not a declared tool ({', '.join(declared) or 'none'})"
            else:
                violations = schema_violations(call.args, declared[call.tool])
                problem = (
                    f"'{call.tool}' arguments: {violations[0][0]}: {violations[0][1]}"
                    if violations
                    else ""
                )
            if problem:
                misses.append(truncate(problem, 200))
            details.append(
                detail(check, not problem, actual=call.args, message=truncate(problem, 200))
            )
        passed = not misses
        return Measurement(
            score=1.0 if passed else 0.0,
            hits=[f"{len(calls)} tool call(s) match their declarations"] if passed else [],
            misses=misses,
            details=details,
        )
