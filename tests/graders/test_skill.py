"""The skill-trigger grader (issue 24 item 5): AgentV's three signs of a skill being used."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from tests.graders._grading import SPEC
from tests.graders._grading import grade as grade_spec

from assay.results import JSON, GraderResult, TargetOutput, ToolCall


def grade(spec: dict[str, JSON], calls: list[ToolCall]) -> GraderResult:
    return grade_spec(
        {"type": "skill-trigger", **spec},
        "done",
        target_output=TargetOutput(output="done", tool_calls=calls),
    )


@pytest.mark.parametrize(
    ("call", "hit"),
    [
        (
            ToolCall(tool="Skill", args={"skill": "acme:csv-analyzer"}),
            "Skill tool called with skill='acme:csv-analyzer'",
        ),
        (
            ToolCall(tool="read", args={"file_path": "/r/.claude/skills/csv-analyzer/SKILL.md"}),
            "read tool read the skill file /r/.claude/skills/csv-analyzer/SKILL.md",
        ),
        (
            ToolCall(tool="Read", args={"path": "skills/csv-analyzer/ref.md"}),
            "Read tool read the skill file skills/csv-analyzer/ref.md",
        ),
        (
            ToolCall(tool="bash", args={"cmd": "ls"}, output={"files": ["skills/csv-analyzer/"]}),
            "the output of bash mentions skills/csv-analyzer/",
        ),
    ],
)
def test_i24_5_skill_trigger_sees_each_way_a_skill_is_used(call: ToolCall, hit: str) -> None:
    noise = ToolCall(tool="Read", args={"file_path": "skills/other/SKILL.md"})
    result = grade({"skill": "csv-analyzer"}, [noise, call])
    assert (result.score, result.verdict, result.hits) == (1.0, "pass", [hit])


def test_i24_5_skill_trigger_fails_when_the_skill_is_not_used() -> None:
    calls = [ToolCall(tool="Skill", args={"skill": "other"}), ToolCall(tool="Write", args={})]
    result = grade({"skill": "csv-analyzer"}, calls)
    assert (result.score, result.verdict) == (0.0, "fail")
    assert result.misses == ["skill 'csv-analyzer' was not used (2 tool calls looked at)"]


def test_i24_5_skill_trigger_negative_cases() -> None:
    used = [ToolCall(tool="skill", args={"skill": "csv-analyzer"})]
    assert grade({"skill": "csv-analyzer", "should_trigger": False}, []).verdict == "pass"
    result = grade({"skill": "csv-analyzer", "should_trigger": False}, used)
    assert result.verdict == "fail"
    assert result.misses == [
        "skill 'csv-analyzer' was used, and should not have been: skill tool called with "
        "skill='csv-analyzer'"
    ]


def test_i24_5_skill_trigger_needs_a_skill_name() -> None:
    with pytest.raises(ValidationError) as caught:
        SPEC.validate_python({"type": "skill-trigger", "skill": ""})
    assert [(e["loc"], e["type"]) for e in caught.value.errors()] == [
        (("skill-trigger", "skill"), "too_short")
    ]
