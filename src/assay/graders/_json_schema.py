"""JSON Schema in one place: checking a schema, validating against it, inferring one.

Used by the `json-schema` grader and `format.json_schema`. Validators are compiled once per
distinct schema (the schema text is the cache key), because a suite grades many outputs against
the same schema and building a jsonschema validator costs far more than running it.
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING

from assay.results import JSON

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["SchemaViolation", "check_schema", "infer_schema", "schema_violations"]

SchemaViolation = tuple[str, str]
"""(JSON path of the failing instance, e.g. `$.items[0].id`; the validator's message)."""


def check_schema(schema: JSON) -> None:
    """Raise ValueError naming the problem when `schema` is not a valid draft 2020-12 schema."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = exc.json_path if exc.path else "the schema root"
        raise ValueError(f"invalid JSON Schema at {where}: {exc.message}") from None


@functools.lru_cache(maxsize=256)
def _validator(schema_text: str) -> Validator:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(json.loads(schema_text))


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
