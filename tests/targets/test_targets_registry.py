from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from assay.targets import (
    BUILTIN_TARGETS,
    CommandTarget,
    FakeTarget,
    PythonTarget,
    TargetSpec,
)

SPEC: TypeAdapter[object] = TypeAdapter(TargetSpec)


ALL_TYPES = [
    "anthropic", "bedrock-agent", "command", "fake", "http", "openai", "python", "replay",
    "sagemaker",
]  # fmt: skip


def test_builtin_targets_are_registered_by_type() -> None:
    assert sorted(BUILTIN_TARGETS) == ALL_TYPES
    assert BUILTIN_TARGETS["fake"] is FakeTarget
    assert BUILTIN_TARGETS["python"] is PythonTarget
    assert BUILTIN_TARGETS["command"] is CommandTarget
    for name, cls in BUILTIN_TARGETS.items():
        assert cls.model_fields["type"].annotation.__args__[0] == name  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"type": "fake", "responses": {"hello": "hi there"}, "default": "I don't know"},
            FakeTarget(type="fake", responses={"hello": "hi there"}, default="I don't know"),
        ),
        (
            {"type": "python", "function": "my_pkg.agent:answer"},
            PythonTarget(type="python", function="my_pkg.agent:answer"),
        ),
        (
            {"type": "command", "command": ["python", "agent.py", "{PROMPT}"], "timeout_s": 60},
            CommandTarget(type="command", command=["python", "agent.py", "{PROMPT}"], timeout_s=60),
        ),
    ],
)
def test_the_spec_union_picks_the_class_by_type(spec: dict[str, object], expected: object) -> None:
    assert SPEC.validate_python(spec) == expected


def test_an_unknown_type_is_rejected() -> None:
    with pytest.raises(ValidationError) as caught:
        SPEC.validate_python({"type": "fak"})
    assert "Input tag 'fak' found using 'type' does not match any of the expected tags" in str(
        caught.value
    )


def test_the_spec_union_has_a_json_schema() -> None:
    schema = SPEC.json_schema()
    assert sorted(schema["discriminator"]["mapping"]) == ALL_TYPES
