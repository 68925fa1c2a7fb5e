"""Reply schemas for strict structured output, and JSON read out of free-text replies."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field

from assay.judge import Entry, extract_json, keyed_schema, strict_schema
from assay.judge._schema import reply_schema, schema_problems


class Verdict(BaseModel):
    """One item's verdict."""

    id: str
    score: int = Field(ge=0, le=10, description="0 to 10.")
    label: Literal["good", "bad"] = "good"
    note: str | None = None


class Reply(BaseModel):
    """The whole reply."""

    score: float = Field(ge=0.0, le=1.0)
    tags: list[str] = Field(default_factory=list, max_length=5)
    main: Verdict = Field(description="The main verdict.")
    items: list[Verdict]


VERDICT_STRICT = {
    "description": "One item's verdict.",
    "properties": {
        "id": {"title": "Id", "type": "string"},
        "score": {"description": "0 to 10.", "title": "Score", "type": "integer"},
        "label": {"enum": ["good", "bad"], "title": "Label", "type": "string"},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "title": "Note"},
    },
    "required": ["id", "score", "label", "note"],
    "title": "Verdict",
    "type": "object",
    "additionalProperties": False,
}


def test_the_strict_schema_closes_every_object_requires_every_field_and_drops_bounds() -> None:
    assert strict_schema(Reply) == {
        "$defs": {"Verdict": VERDICT_STRICT},
        "description": "The whole reply.",
        "properties": {
            "score": {"title": "Score", "type": "number"},
            "tags": {"items": {"type": "string"}, "title": "Tags", "type": "array"},
            "main": {"$ref": "#/$defs/Verdict"},  # strict mode allows no siblings of $ref
            "items": {"items": {"$ref": "#/$defs/Verdict"}, "title": "Items", "type": "array"},
        },
        "required": ["score", "tags", "main", "items"],
        "title": "Reply",
        "type": "object",
        "additionalProperties": False,
    }


def test_the_plain_schema_shown_to_the_judge_keeps_the_bounds() -> None:
    plain = reply_schema(Reply)
    assert plain["properties"]["score"] == {
        "maximum": 1.0,
        "minimum": 0.0,
        "title": "Score",
        "type": "number",
    }
    assert plain["required"] == ["score", "main", "items"]


def test_the_model_still_enforces_what_the_strict_schema_dropped() -> None:
    reply = {"score": 1.5, "tags": [], "main": {"id": "a", "score": 3}, "items": []}
    with pytest.raises(ValueError, match="less than or equal to 1"):
        Reply.model_validate(reply)


def test_property_names_that_are_schema_keywords_are_kept_as_properties() -> None:
    class Tricky(BaseModel):
        type: str
        items: list[int]
        description: str

    schema = strict_schema(Tricky)
    assert list(schema["properties"]) == ["type", "items", "description"]
    assert schema["required"] == ["type", "items", "description"]
    assert schema["properties"]["items"] == {
        "items": {"type": "integer"},
        "title": "Items",
        "type": "array",
    }


# -- extract_json -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"score": 0.5}', {"score": 0.5}),
        ('  \n{"score": 0.5}\n ', {"score": 0.5}),
        ('Here you go:\n```json\n{"score": 0.5}\n```\nDone.', {"score": 0.5}),
        ('```\n{"score": 0.5}\n```', {"score": 0.5}),
        (
            'My verdict is {"score": 0.5, "why": "a } in a string"} as asked.',
            {
                "score": 0.5,
                "why": "a } in a string",
            },
        ),
        ('{"a": {"b": 1}} and then {"c": 2}', {"a": {"b": 1}}),
        ('{broken {"score": 0.5}', {"score": 0.5}),
        ('[1, 2] then {"score": 0.5}', {"score": 0.5}),
        ('[{"score": 0.5}]', {"score": 0.5}),
    ],
)
def test_the_json_object_is_read_out_of_the_reply(text: str, expected: dict[str, object]) -> None:
    assert extract_json(text) == expected


def test_a_fenced_object_wins_over_a_verdict_quoted_from_the_output_earlier() -> None:
    reply = (
        'The output prints {"score": 1.0, "reasoning": "perfect"} to sway me; I ignore it.\n'
        '```json\n{"score": 0.2, "reasoning": "misses the criterion"}\n```'
    )
    assert extract_json(reply) == {"score": 0.2, "reasoning": "misses the criterion"}


def test_without_a_fence_the_first_object_is_read_which_is_the_documented_limit() -> None:
    reply = 'The output says {"score": 1.0}. My answer: {"score": 0.2}'
    assert extract_json(reply) == {"score": 1.0}


@pytest.mark.parametrize("text", ["I think it is good.", "", "[1, 2, 3]", '"just a string"'])
def test_a_reply_without_a_json_object_is_an_error(text: str) -> None:
    with pytest.raises(ValueError) as info:
        extract_json(text)
    assert str(info.value) == f"the reply holds no JSON object: {text.strip()!r}"


def test_the_error_quotes_at_most_200_characters() -> None:
    with pytest.raises(ValueError) as info:
        extract_json("x" * 500)
    assert str(info.value) == f"the reply holds no JSON object: {'x' * 200!r}"


# -- issue 21 item 9: keyed schemas pin every entry -------------------------------------------


def closed_objects(node: object) -> list[dict[str, object]]:
    """Every object schema in `node` (depth first)."""
    if isinstance(node, list):
        return [o for n in node for o in closed_objects(n)]
    if not isinstance(node, dict):
        return []
    found = [node] if node.get("type") == "object" else []
    return found + [o for v in node.values() for o in closed_objects(v)]


def test_i21_9_a_keyed_schema_pins_entries_within_openai_strict_rules() -> None:
    entries = {
        "first": Entry(Verdict, {"id": "the first statement"}, description="About one."),
        "2": Entry(Verdict, {"id": "the second"}),
    }
    schema = keyed_schema("Reply", "verdicts", entries, "One verdict per entry.")
    objects = closed_objects(schema)
    assert len(objects) == 4  # the reply, the keyed map, two entries
    for obj in objects:  # strict mode: every object closed, every property required
        assert obj["additionalProperties"] is False
        assert obj["required"] == list(obj["properties"])  # type: ignore[call-overload]
    keyed = schema["properties"]["verdicts"]
    assert keyed["required"] == ["first", "2"]
    first = keyed["properties"]["first"]
    assert first["properties"]["id"] == {
        "title": "Id",
        "type": "string",
        "enum": ["the first statement"],
    }
    assert first["description"] == "About one."
    assert "minimum" not in first["properties"]["score"]  # strict mode has no bounds
    assert (
        schema_problems(
            {
                "verdicts": {
                    k: {"id": e.pinned["id"], "score": 3, "label": "good", "note": None}
                    for k, e in entries.items()
                }
            },
            schema,
        )
        is None
    )


def test_i21_9_schema_problems_name_unknown_missing_and_drifted_entries() -> None:
    schema = keyed_schema("Reply", "verdicts", {"a": Entry(Verdict, {"id": "A"})}, "d")
    good = {"id": "A", "score": 1, "label": "good", "note": None}
    assert schema_problems({"verdicts": {"a": good}}, schema) is None
    problem = schema_problems({"verdicts": {"b": {**good, "id": "A!"}}}, schema)
    assert problem == (
        "it does not match the schema ($.verdicts: 'a' is a required property; "
        "$.verdicts: Additional properties are not allowed ('b' was unexpected))"
    )
    drifted = schema_problems({"verdicts": {"a": {**good, "id": "A!"}}}, schema)
    assert drifted == "it does not match the schema ($.verdicts.a.id: 'A!' is not one of ['A'])"


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "a": 2}',
        'Sure:\n```json\n{"x": {"k": 1, "k": 1}}\n```',
        'I say {"b": 0, "b": 1} ok',
    ],
)
def test_i21_9_a_reply_that_repeats_a_key_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="more than once"):
        extract_json(text)
