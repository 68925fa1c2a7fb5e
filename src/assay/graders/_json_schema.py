"""JSON Schema in one place: checking a schema, validating against it, inferring one.

Used by the `json-schema` grader and `format.json_schema`. Validators are compiled once per
distinct schema (the schema text is the cache key), because a suite grades many outputs against
the same schema and building a jsonschema validator costs far more than running it.

`pattern`, `patternProperties` (and `additionalProperties` next to them) match with RE2, as
every other pattern in assay does (SPEC §4): jsonschema matches them with Python's
backtracking `re`, and 33 bytes of model output against `^(a+)+$` took 78 s. A schema
pattern RE2 cannot compile is refused when the suite loads. `format` is an annotation here
(no format checker), so `format: regex` compiles nothing.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from assay.graders.text import compile_re2
from assay.results import JSON

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["SchemaViolation", "check_schema", "infer_schema", "schema_violations"]

SchemaViolation = tuple[str, str]
"""(JSON path of the failing instance, e.g. `$.items[0].id`; the validator's message)."""


def check_schema(schema: JSON) -> None:
    """Raise ValueError naming the problem when `schema` is not a valid draft 2020-12 schema,
    or has a pattern RE2 cannot compile."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = exc.json_path if exc.path else "the schema root"
        raise ValueError(f"invalid JSON Schema at {where}: {exc.message}") from None
    keywords: set[str] = set()
    for where, pattern in _patterns(schema, "$", keywords):
        try:
            compile_re2(pattern)
        except ValueError as exc:
            raise ValueError(f"invalid JSON Schema at {where}: {exc}") from None
    if {"patternProperties", "unevaluatedProperties"} <= keywords:
        raise ValueError(
            "invalid JSON Schema: `unevaluatedProperties` together with `patternProperties` is "
            "not supported (jsonschema would match those patterns with a backtracking regex "
            "engine); use `additionalProperties`"
        )


_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
"""Keywords whose values are data, not schemas: a `pattern` key inside them is not one."""


def _patterns(node: JSON, where: str, keywords: set[str]) -> Iterator[tuple[str, str]]:
    """Every regex in a schema (`pattern` values, `patternProperties` keys) with its JSON
    path; records the keywords seen in `keywords`."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            yield from _patterns(item, f"{where}[{i}]", keywords)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        keywords.add(key)
        here = f"{where}.{key}"
        if key == "pattern" and isinstance(value, str):
            yield here, value
        elif key == "patternProperties" and isinstance(value, dict):
            for pattern, sub in value.items():
                yield f"{here}[{pattern!r}]", pattern
                yield from _patterns(sub, f"{here}[{pattern!r}]", keywords)
        elif key not in _DATA_KEYWORDS:
            yield from _patterns(value, here, keywords)


def _matches(pattern: str, text: str) -> bool:
    return compile_re2(pattern).find(text) is not None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not _matches(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _matches(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Any
) -> Iterator[Any]:
    """jsonschema's `additionalProperties`, with the `patternProperties` keys matched by RE2."""
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = {
        key
        for key in instance
        if key not in properties and not any(_matches(p, key) for p in patterns)
    }
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        joined = ", ".join(repr(each) for each in sorted(extras))
        if patterns:
            verb = "does" if len(extras) == 1 else "do"
            shown = ", ".join(repr(each) for each in sorted(patterns))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {shown}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({joined} {verb} unexpected)"
            )


@functools.cache
def _validator_class() -> Any:
    """Draft 2020-12 with RE2 for its three regex keywords."""
    from jsonschema import Draft202012Validator, validators

    return validators.extend(  # type: ignore[no-untyped-call]
        Draft202012Validator,
        {
            "pattern": _pattern,
            "patternProperties": _pattern_properties,
            "additionalProperties": _additional_properties,
        },
    )


@functools.lru_cache(maxsize=256)
def _validator(schema_text: str) -> Validator:
    return _validator_class()(json.loads(schema_text))  # type: ignore[no-any-return]


def schema_violations(instance: JSON, schema: JSON) -> list[SchemaViolation]:
    """Every violation of `schema` by `instance`, in document order."""
    validator = _validator(json.dumps(schema, sort_keys=True))
    errors = sorted(
        validator.iter_errors(instance),
        # document order: indexes numerically ($[2] before $[10]), keys by name
        key=lambda e: [(0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in e.path],
    )
    return [(e.json_path, e.message) for e in errors]


def infer_schema(value: JSON) -> JSON:
    """A schema that the example `value` satisfies: same types, same keys required.

    Arrays take the schema of their first item (an empty array allows any items); numbers accept
    any number, since 2 and 2.5 are equally plausible values of a field shown as 2.
    """
    if isinstance(value, dict):
        return {
            "type": "object",
            "properties": {k: infer_schema(v) for k, v in value.items()},
            "required": list(value),
        }
    if isinstance(value, list):
        return {"type": "array", "items": infer_schema(value[0])} if value else {"type": "array"}
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int | float):
        return {"type": "number"}
    if isinstance(value, str):
        return {"type": "string"}
    return {"type": "null"}
