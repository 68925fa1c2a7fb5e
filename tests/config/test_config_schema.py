"""The committed JSON Schema matches the models, and it accepts what the loader accepts."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import yaml

from assay.config import suite_json_schema, suite_json_schema_text

REPO = Path(__file__).resolve().parents[2]


def test_committed_schema_has_not_drifted() -> None:
    committed = (REPO / "schema" / "suite.schema.json").read_text(encoding="utf-8")
    assert committed == suite_json_schema_text(), (
        "schema/suite.schema.json is stale: run `make schema` and commit the result"
    )


def test_quickstart_suite_validates_against_the_schema() -> None:
    data = yaml.safe_load((REPO / "examples" / "quickstart" / "support.eval.yaml").read_text())
    jsonschema.Draft202012Validator(suite_json_schema()).validate(data)


def test_schema_rejects_unknown_keys_and_documents_fields() -> None:
    schema = suite_json_schema()
    validator = jsonschema.Draft202012Validator(schema)
    bad = {"name": "x", "tests": [{"id": "a", "input": "x", "bogus": 1}]}
    assert not validator.is_valid(bad)
    test_case = schema["$defs"]["TestCase"]
    assert test_case["properties"]["expected_output"]["description"].startswith("Reference answer")
    assert json.dumps(schema).count('"additionalProperties": false') > 10
