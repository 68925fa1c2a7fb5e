"""A composite's program aggregator: the member results go to a command, which answers the
composite's score (AgentV's code-grader aggregator).

The command reads `{"results": {member name: {score, verdict, assertions: [{text, passed,
evidence}], reasoning}}}` on stdin and prints `{score, verdict?, assertions?}`, AgentV's
contract. It runs like a code-grader's command (its timeout, memory limit and working
directory); a crash, a timeout or a reply that is not an object is the composite's error,
never a 0.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import Field

from assay._strict_model import StrictModel
from assay.errors import GraderError
from assay.graders._base import GradingContext, Measurement
from assay.graders._details import truncate
from assay.graders.code import CodeGrader, measurement_from_reply
from assay.results import JSON, GraderResult

__all__ = ["CodeAggregator", "member_result"]


class CodeAggregator(StrictModel):
    """`aggregator: {type: code-grader, command: ...}`: a program folds the members."""

    type: Literal["code-grader"]
    command: list[str] | str
    """Program and arguments (a string is split like a shell would)."""
    cwd: str | None = None
    """Working directory, relative to the suite's directory (default: the suite's directory,
    or the case's workspace)."""
    timeout_s: Annotated[float, Field(gt=0)] = 30.0
    """Stop waiting after this many seconds."""
    memory_mb: Annotated[int, Field(gt=0)] | None = 512
    """The command's memory limit, as a code-grader's."""

    def runner(self) -> CodeGrader:
        """A code-grader that runs this command (it checks the program exists)."""
        return CodeGrader(
            type="code-grader",
            command=self.command,
            cwd=self.cwd,
            timeout_s=self.timeout_s,
            memory_mb=self.memory_mb,
            protocol="agentv",
        )

    async def fold(self, members: Sequence[GraderResult], ctx: GradingContext) -> Measurement:
        """The composite's measurement from the command's reply.

        Raises:
            GraderError: The command failed or its reply is not a result object.
        """
        runner = self.runner()
        payload: dict[str, JSON] = {"results": {m.name: member_result(m) for m in members}}
        source = f"aggregator '{truncate(' '.join(runner.argv), 60)}'"
        stdout = await runner.run_payload(payload, ctx, source)
        text = stdout.decode("utf-8", errors="replace").strip()
        try:
            reply = json.loads(text) if text else None
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            raise GraderError(f"{source} printed no JSON object: {truncate(text) or '(nothing)'}")
        verdict = reply.pop("verdict", None)
        measured = measurement_from_reply(reply, source, lenient=True)
        if verdict in ("pass", "fail"):
            measured.verdict = verdict
        return measured


def member_result(result: GraderResult) -> JSON:
    """A member's result in AgentV's shape (hits and misses as assertions)."""
    assertions: list[JSON] = [{"text": h, "passed": True} for h in result.hits]
    assertions += [{"text": m, "passed": False} for m in result.misses]
    return {
        "score": result.score,
        "verdict": result.verdict,
        "assertions": assertions,
        "reasoning": result.reasoning,
        "type": result.type,
        "weight": result.weight,
    }
