"""The shared JSON Schema helper: violations in document order, inference, schema checks."""

from __future__ import annotations

import pytest

from assay.graders._json_schema import check_schema, infer_schema, schema_violations


def test_violations_come_in_document_order() -> None:
    items = [0, 0, "a", *([0] * 8), "b"]
    schema = {"type": "array", "items": {"type": "integer"}}
    assert [path for path, _ in schema_violations(items, schema)] == ["$[2]", "$[11]"]


def test_inferred_schema_requires_the_example_shape() -> None:
    schema = infer_schema({"id": 7, "tags": ["a"], "ok": True, "note": None})
    assert (
        schema_violations({"id": 7.5, "tags": ["b", "c"], "ok": False, "note": None}, schema) == []
    )
    assert schema_violations({"id": "7", "tags": [1], "ok": True}, schema) == [
        ("$", "'note' is a required property"),
        ("$.id", "'7' is not of type 'number'"),
        ("$.tags[0]", "1 is not of type 'string'"),
    ]


def test_an_invalid_schema_names_where() -> None:
    with pytest.raises(ValueError, match=r"invalid JSON Schema at \$.properties.a.type"):
        check_schema({"properties": {"a": {"type": 5}}})
