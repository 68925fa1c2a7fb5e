"""The valid-tool-calls grader: every tool call names a declared tool with valid arguments.

The declarations are the `tools` a model was offered, in OpenAI's shape
(`{type: function, function: {name, parameters}}`), as plain `{name, parameters}`, or in
Gemini's (`{functionDeclarations: [...]}`, N functions); each call's arguments are validated
against its tool's `parameters` JSON Schema (draft 2020-12). Provider-side tools (an MCP server,
a built-in search) have no local schema: a call to one is checked by name only.
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


ANY_TOOL = "*"
"""The name under which an MCP server that lists no `allowed_tools` accepts any call."""

_PROVIDER_SIDE = {
    "web_search",
    "web_search_preview",
    "file_search",
    "code_interpreter",
    "computer_use_preview",
    "image_generation",
    "local_shell",
    "shell",
}
"""OpenAI Responses tool types the provider runs itself: they declare no local function."""
_GEMINI_BUILT_INS = {
    "googleSearch",
    "googleSearchRetrieval",
    "codeExecution",
    "urlContext",
    "retrieval",
    "googleMaps",
    "enterpriseWebSearch",
}
"""Gemini's built-in tools (`{googleSearch: {}}` …): run by Google, no local function."""


def _json_schema(schema: JSON) -> JSON:
    """Gemini's OpenAPI-style schema (`type: OBJECT`, `STRING` …) as JSON Schema: the type
    names lower-cased, everywhere they occur."""
    if isinstance(schema, list):
        return [_json_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, JSON] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            out[key] = value.lower()
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: _json_schema(sub) for name, sub in value.items()}
        else:
            out[key] = _json_schema(value) if isinstance(value, dict | list) else value
    return out


def _function(spec: dict[str, JSON], tool: JSON) -> tuple[str, dict[str, JSON] | None]:
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"a tool declaration has no `name`: {truncate(tool)}")
    parameters = spec.get("parameters", {"type": "object"})
    if not isinstance(parameters, dict):
        raise ValueError(f"tool '{name}': `parameters` must be a JSON Schema object")
    return name, parameters


def _declarations(tool: dict[str, JSON]) -> list[tuple[str, dict[str, JSON] | None]]:
    """The (name, arguments schema) of every tool one declaration declares, as the provider it
    was written for reads it: an OpenAI-shaped or plain function is one; a Gemini tool's
    `functionDeclarations` list is N functions (their OpenAPI-style schemas, or
    `parametersJsonSchema`, read as JSON Schema); a provider-side tool (an MCP server
    `{type: mcp}`, a Gemini built-in such as `googleSearch`, a Responses built-in such as
    `web_search`) has no local schema (None): an MCP server's `allowed_tools` by name, or any
    name (`ANY_TOOL`) when it lists none; a built-in declares no function."""
    listed = tool.get("functionDeclarations", tool.get("function_declarations"))
    if isinstance(listed, list):
        out: list[tuple[str, dict[str, JSON] | None]] = []
        for item in listed:
            if not isinstance(item, dict):
                raise ValueError(
                    f"a `functionDeclarations` item is not a mapping: {truncate(item)}"
                )
            schema = item.get("parametersJsonSchema", item.get("parameters"))
            declared = {k: v for k, v in item.items() if k != "parameters"}
            if schema is not None:
                declared["parameters"] = _json_schema(schema)
            out.append(_function(declared, item))
        return out
    kind = tool.get("type")
    if kind == "mcp":
        allowed = tool.get("allowed_tools")
        names = allowed.get("tool_names") if isinstance(allowed, dict) else allowed
        if isinstance(names, list) and names and all(isinstance(n, str) for n in names):
            return [(str(n), None) for n in names]
        return [(ANY_TOOL, None)]
    if kind in _PROVIDER_SIDE or (not kind and len(tool) == 1 and set(tool) <= _GEMINI_BUILT_INS):
        return []
    spec = tool.get("function") if isinstance(tool.get("function"), dict) else tool
    assert isinstance(spec, dict)
    return [_function(spec, tool)]


class ValidToolCalls(Grader):
    """The output made at least one tool call, and every call is valid (score 1 or 0)."""

    type: Literal["valid-tool-calls"]
    tools: list[dict[str, JSON]]
    """The declared tools: `{type: function, function: {name, description, parameters}}` (the
    OpenAI request shape), `{name, parameters}`, Gemini's `{functionDeclarations: [...]}`, or a
    provider-side tool (`{type: mcp, server_label, allowed_tools}`, `{googleSearch: {}}`);
    the `parameters` schemas are checked when the suite loads."""
    require_call: bool = True
    """Fail when the output made no tool call (promptfoo's rule); false passes it."""

    @model_validator(mode="after")
    def _valid_tools(self) -> Self:
        for tool in self.tools:
            for name, parameters in _declarations(tool):
                if parameters is None:
                    continue
                try:
                    check_schema(parameters)
                except ValueError as exc:
                    raise ValueError(f"tool '{name}': {exc}") from None
        return self

    async def measure(self, ctx: GradingContext) -> Measurement:
        declared = {name: schema for t in self.tools for name, schema in _declarations(t)}
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
            schema = declared.get(call.tool, declared.get(ANY_TOOL))
            if call.tool not in declared and ANY_TOOL not in declared:
                problem = f"'{call.tool}' is not a declared tool ({', '.join(declared) or 'none'})"
            elif schema is None:  # a provider-side (MCP) tool: its schema is the server's
                problem = ""
            else:
                violations = schema_violations(call.args, schema)
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
