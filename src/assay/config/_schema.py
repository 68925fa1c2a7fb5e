"""The JSON Schema of the suite format, generated from the models that validate it.

Field descriptions come from the attribute docstrings of the models. They are read here, when
a schema is generated, rather than by pydantic's `use_attribute_docstrings` at class creation:
that option re-reads and parses each model's source as its class is created, ~0.15 s of every
`assay` start-up for a schema that only `assay schema` and the docs need.
"""

from __future__ import annotations

import ast
import functools
import inspect
import json
import textwrap
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from assay.config._plugins import require_plugins
from assay.config._suite import Suite
from assay.results import JSON

__all__ = ["attribute_docstrings", "suite_json_schema", "suite_json_schema_text"]

SCHEMA_ID = "https://assay.dev/schema/suite.schema.json"


@functools.cache
def _own_docstrings(cls: type) -> dict[str, str]:
    """The docstrings written under the annotated attributes of `cls` itself (not its bases)."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):  # built in a REPL or by `create_model`: nothing to read
        return {}
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.ClassDef)  # the source of a class is its definition
    docs: dict[str, str] = {}
    for statement, following in zip(node.body, node.body[1:], strict=False):
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[statement.target.id] = inspect.cleandoc(following.value.value)
    return docs


def attribute_docstrings(model: type[BaseModel]) -> dict[str, str]:
    """Each field's attribute docstring, the nearest class in the MRO winning."""
    docs: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if issubclass(cls, BaseModel) and cls is not BaseModel:
            docs.update(_own_docstrings(cls))
    return {name: doc for name, doc in docs.items() if name in model.model_fields}


class _DocumentedSchema(GenerateJsonSchema):
    """Pydantic's generator, adding each field's attribute docstring as its description
    (an explicit `Field(description=...)` is kept)."""

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        json_schema = super().model_schema(schema)
        model: type[BaseModel] = schema["cls"]
        properties: dict[str, Any] = json_schema.get("properties", {})
        for name, doc in attribute_docstrings(model).items():
            field = model.model_fields[name]
            key = field.alias if self.by_alias and field.alias else name
            prop = properties.get(key)
            if isinstance(prop, dict) and "description" not in prop:
                prop["description"] = doc
        return json_schema


def suite_json_schema() -> dict[str, JSON]:
    """The suite JSON Schema (draft 2020-12) as a dict, plugin types included.

    Raises:
        PluginError: an installed grader or target plugin cannot be loaded.
    """
    require_plugins()
    schema = Suite.model_json_schema(
        by_alias=True, mode="validation", schema_generator=_DocumentedSchema
    )
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}


def suite_json_schema_text() -> str:
    """The suite JSON Schema as the text committed at `schema/suite.schema.json`."""
    return json.dumps(suite_json_schema(), indent=2, sort_keys=True) + "\n"
