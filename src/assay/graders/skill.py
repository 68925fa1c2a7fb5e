"""The skill-trigger grader: whether an agent used a named skill (AgentV's `skill-trigger`).

Coding agents load a skill by calling a `Skill` tool with the skill's name, or by reading a
file under `skills/<name>/`; some report only a tool output mentioning that path. The grader
looks through every tool call the target made, in order, for one of the three, exactly as
AgentV 4.x does, so AgentV suites keep their verdicts:

1. a call of a tool named `skill` (any case) whose `skill` argument contains the name;
2. a call of a tool named `read` (any case) whose `file_path` (or `path`) argument contains
   `skills/<name>/`;
3. a call of any tool whose output contains `skills/<name>/`.

Score 1 when the skill was used and `should_trigger` is true (the default), or when it was not
and `should_trigger` is false; 0 otherwise.
"""

from __future__ import annotations

import json
from typing import Annotated, Literal

from pydantic import Field

from assay._strict_model import NO_NUL
from assay.graders._base import Grader, GradingContext, Measurement
from assay.results import ToolCall

__all__ = ["SkillTrigger"]


def _evidence(call: ToolCall, skill: str) -> str | None:
    """How `call` shows the skill was used, or None."""
    tool = call.tool.lower()
    if tool == "skill" and skill in str(call.args.get("skill", "")):
        return f"{call.tool} tool called with skill={call.args.get('skill')!r}"
    folder = f"skills/{skill}/"
    if tool == "read":
        path = call.args.get("file_path", call.args.get("path", ""))
        if folder in str(path):
            return f"{call.tool} tool read the skill file {path}"
    if call.output is not None:
        shown = call.output if isinstance(call.output, str) else json.dumps(call.output)
        if folder in shown:
            return f"the output of {call.tool} mentions {folder}"
    return None


class SkillTrigger(Grader):
    """Whether the target's tool calls show it used a named skill; score 1 or 0."""

    type: Literal["skill-trigger"]
    skill: Annotated[str, NO_NUL, Field(min_length=1)]
    """The skill's name, e.g. `csv-analyzer`."""
    should_trigger: bool = True
    """False for a negative case: the grader passes when the skill was not used."""

    async def measure(self, ctx: GradingContext) -> Measurement:
        """Look through the tool calls for the first sign of the skill."""
        evidence = next(
            (found for call in ctx.tool_calls if (found := _evidence(call, self.skill))), None
        )
        used = evidence is not None
        if used == self.should_trigger:
            what = evidence if used else f"skill '{self.skill}' was not used, as expected"
            return Measurement(score=1.0, hits=[str(what)], reasoning=str(what))
        what = (
            f"skill '{self.skill}' was used, and should not have been: {evidence}"
            if used
            else f"skill '{self.skill}' was not used ({len(ctx.tool_calls)} tool calls looked at)"
        )
        return Measurement(score=0.0, misses=[what], reasoning=what)
