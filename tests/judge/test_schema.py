"""Reply schemas for strict structured output, and JSON read out of free-text replies."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field

from assay.judge import extract_json, strict_schema
from assay.judge._schema import reply_schema


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
