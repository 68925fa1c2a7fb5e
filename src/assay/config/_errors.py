"""Turn pydantic validation errors into located, actionable config issues."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from assay._strict_model import suggest
from assay.config._yaml import LocPath, SourceMap, format_path
from assay.errors import ConfigIssue
from assay.results import JSON

__all__ = ["issues_from_validation"]


def _real_path(loc: tuple[int | str, ...], data: JSON, missing: bool = True) -> LocPath:
    """Keep the parts of a pydantic `loc` that exist in the data.

    Pydantic adds union member names and discriminator tags to `loc`; those are dropped.
    The last part of a `missing` error is kept even when absent (it names the missing key);
    that of another error is a union member's name (`str`, `tagged-union[...]`).
    """
    path: list[str | int] = []
    node = data
    for i, part in enumerate(loc):
        if part == "[key]":  # pydantic's marker of an error in a mapping's key, not its value
            break
        in_dict = isinstance(node, dict) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_dict or in_list:
            path.append(part)
            node = node[part]
        elif (
            missing
            and i == len(loc) - 1
            and isinstance(part, str)
            and isinstance(node, dict)
            and node.get("type") != part  # the union tag of a whole-model error, not a key
        ):
            path.append(part)
    return tuple(path)


def _kind(path: LocPath) -> str:
    names = [p for p in path if isinstance(p, str)]
    if names and names[-1] == "aggregator":
        return "aggregator"
    if "assertions" in names or "stop_when" in names:
        return "grader"
    if "target" in names or "targets" in names:
        return "target"
    return "value"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _message(err: Any, path: LocPath) -> str:
    kind, ctx = err["type"], err.get("ctx") or {}
    if kind == "union_tag_invalid":
        expected = [t.strip().strip("'") for t in str(ctx["expected_tags"]).split(",")]
        what = _kind(path)
        return (
            f"unknown {what} type '{ctx['tag']}'.{suggest(str(ctx['tag']), expected)} "
            f"Known {what} types: {', '.join(sorted(expected))}"
        )
    if kind == "union_tag_not_found":
        return f"missing 'type' (the {_kind(path)} type)"
    if kind == "missing":
        return f"missing required key '{path[-1]}'" if path else "missing required value"
    if kind == "unknown_key":
        return str(err["msg"])
    message = str(err["msg"])
    message = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    given = err.get("input")
    if isinstance(given, str | int | float | bool) and kind not in ("value_error",):
        message += f" (got {_shown(given)})"
    return message


def issues_from_validation(
    exc: ValidationError, data: JSON, source: SourceMap, prefix: LocPath = ()
) -> list[ConfigIssue]:
    """One issue per location; several errors at one place (union members) join with "or".

    `prefix` is where `data` sits in the document (`("tests", 3)` for a test validated on
    its own): the issues' paths start with it.
    """
    grouped: dict[LocPath, list[str]] = {}
    for err in exc.errors(include_url=False):
        path = (*prefix, *_real_path(tuple(err["loc"]), data, err["type"] == "missing"))
        if err["type"] == "unknown_key":
            path = (*path, str((err.get("ctx") or {})["key"]))
        message = _message(err, path)
        bucket = grouped.setdefault(path, [])
        if message not in bucket:
            bucket.append(message)
    # `str | list[...]` unions report both members; when the value is a list, the errors
    # inside it are the useful ones and "should be a valid string" is noise.
    for path in [p for p in grouped if any(len(q) > len(p) and q[: len(p)] == p for q in grouped)]:
        grouped[path] = [m for m in grouped[path] if not m.startswith("Input should be a valid")]
        if not grouped[path]:
            del grouped[path]
    # Likewise `str | TargetSpec` given a mapping of an unknown type: the tag's message is it.
    for path, messages in grouped.items():
        told = [m for m in messages if not m.startswith("Input should be a valid")]
        if told and any(m.startswith("unknown ") for m in told):
            grouped[path] = told
    issues = []
    for path, messages in grouped.items():
        where = source.locate(path)
        issues.append(
            ConfigIssue(where.file, where.line, format_path(path), "; or ".join(messages))
        )
    return issues
