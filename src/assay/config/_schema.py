"""The JSON Schema of the suite format, generated from the models that validate it."""

from __future__ import annotations

import json

from assay.config._suite import Suite
from assay.results import JSON

__all__ = ["suite_json_schema", "suite_json_schema_text"]

SCHEMA_ID = "https://assay.dev/schema/suite.schema.json"


def suite_json_schema() -> dict[str, JSON]:
    """The suite JSON Schema (draft 2020-12) as a dict."""
    schema = Suite.model_json_schema(by_alias=True, mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}


def suite_json_schema_text() -> str:
    """The suite JSON Schema as the text committed at `schema/suite.schema.json`."""
    return json.dumps(suite_json_schema(), indent=2, sort_keys=True) + "\n"
