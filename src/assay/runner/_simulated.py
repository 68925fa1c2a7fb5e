"""One simulated conversation (SPEC §2.1): a model plays the user, the target answers.

It ends when a `stop_when` grader passes on an agent reply, when the simulator says `done`,
after `max_turns` agent replies, or at the first error (the agent's or the simulator's, which
makes the sample an error); the last turn records why. The case's graders and expected
outcomes then judge the whole transcript once. Every call goes through the runner: the target's
limiter, retries and cache (keyed by the conversation so far, so a resumed or repeated run
finds each turn again), and the judge pool's limit and cache for the simulator.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from assay.judge import Exchange, JudgeError, SimulatedUser
from assay.results import (
    JSON,
    ErrorInfo,
    GraderResult,
    Message,
    SampleResult,
    StopReason,
    TargetOutput,
    TokenUsage,
    TurnResult,
    add_cost,
    add_usage,
)
from assay.runner._case import Graded, TargetCall

if TYPE_CHECKING:
    from assay.config import Simulate
    from assay.runner._case import CaseRunner
    from assay.runner._plan import CasePlan
    from assay.scoring import JudgeSpend

__all__ = ["SimulatedConversation"]


class SimulatedConversation:
    """The state of one sample's conversation while it runs."""

    def __init__(
        self,
        runner: CaseRunner,
        plan: CasePlan,
        index: int,
        spend: JudgeSpend,
        workspace: Path | None = None,
    ) -> None:
        assert plan.test.simulate is not None
        self.workspace = workspace
        """The sample's workspace directory (`workspace:`), where the target and graders run."""
        self.runner = runner
        self.plan = plan
        self.index = index
        self.spend = spend
        self.sim: Simulate = plan.test.simulate
        self.history: tuple[Message, ...] = ()
        self.exchanges: list[Exchange] = []
        self.turns: list[TurnResult] = []
        self.replies: list[TargetOutput] = []
        self.stop: tuple[StopReason, str] = ("max_turns", f"{self.sim.max_turns} agent replies")
        self.error: ErrorInfo | None = None
        self.duration = 0.0
        self.cached = True

    async def run(self) -> tuple[SampleResult, TargetOutput | None]:
        """Hold the conversation, then grade its transcript."""
        runner = self.runner
        if runner.simulator is None or runner.judges is None:
            self.error = ErrorInfo(
                type="SimulatorError", message="no simulator model is configured"
            )
        else:
            user = SimulatedUser(
                runner.judges.simulator(runner.simulator),
                self.sim.user,
                self.sim.goal,
                self.plan.test.metadata,
                repeat_index=self.index,
            )
            await self._converse(user)
        if self.turns:
            last = self.turns[-1]
            update = {"stop_reason": self.stop[0], "stop_detail": self.stop[1]}
            self.turns[-1] = last.model_copy(update=update)
        elif self.error is None:  # the simulator was done before saying anything
            self.error = ErrorInfo(
                type="SimulatorError",
                message="the simulated user ended the conversation before it began: "
                + (self.stop[1] or "done"),
            )
        return await self._graded()

    async def _converse(self, user: SimulatedUser) -> None:
        message = self.sim.first_message
        for turn_index in range(self.sim.max_turns):
            if message is None:
                message = await self._user_says(user)
                if message is None:
                    return
            if not await self._agent_turn(turn_index, message):
                return
            message = None

    async def _user_says(self, user: SimulatedUser) -> str | None:
        """The simulator's next message; None when it is done or failed (`stop` says which)."""
        try:
            said = await user.next(self.exchanges)
        except JudgeError as exc:
            self.error = ErrorInfo(type="SimulatorError", message=str(exc))
            self.stop = ("error", str(exc))
            return None
        self.spend.add_call(said.token_usage, said.cost_usd)
        if said.answer.done:
            self.stop = ("done", said.answer.reason)
            return None
        return said.answer.message

    async def _agent_turn(self, turn_index: int, message: str) -> bool:
        """Send `message` with the conversation so far; False when the conversation ends."""
        runner, plan = self.runner, self.plan
        request = plan.request(runner.base_dir, self.index, message, self.history, self.workspace)
        call = await runner.call(plan, request)
        self.duration += call.duration_ms
        self.cached = self.cached and call.cached
        if call.output is None:
            self.error = call.error or ErrorInfo(type="TargetError", message="no reply")
            self.stop = ("error", self.error.message)
            self.turns.append(
                _turn(
                    turn_index,
                    message,
                    reply=None,
                    checks=[],
                    error=self.error,
                    duration_ms=call.duration_ms,
                )
            )
            return False
        reply = call.output
        self.replies.append(reply)
        answer = reply.messages[-1] if reply.messages else None
        if answer is None or answer.role != "assistant":
            answer = Message(role="assistant", content=reply.output)
        self.history = (*request.messages, answer)
        checks: list[GraderResult] = []
        if plan.stop_when:
            checked = await runner.grade(
                plan,
                plan.stop_when,
                request.input,
                reply,
                index=self.index,
                outcomes=None,
                workspace=self.workspace,
            )
            checks = checked.results
            self.spend.add(checks)
        self.turns.append(
            _turn(
                turn_index,
                message,
                reply=reply.output,
                checks=checks,
                error=None,
                duration_ms=call.duration_ms,
            )
        )
        scripted = turn_index == 0 and self.sim.first_message is not None
        self.exchanges.append(Exchange(message, reply.output, scripted=scripted))
        passed = next((r for r in checks if r.verdict == "pass"), None)
        if passed is not None:
            self.stop = ("stop_when", passed.name)
            return False
        return True

    async def _graded(self) -> tuple[SampleResult, TargetOutput | None]:
        """The sample: the case's graders and outcomes on the whole transcript."""
        replies = self.replies
        usage, cost = _spent(replies)
        transcript = TargetOutput(
            output=replies[-1].output if replies else "",
            messages=list(self.history),
            tool_calls=[c for r in replies for c in r.tool_calls],
            token_usage=usage,
            cost_usd=cost,
            duration_ms=self.duration,
        )
        graded: Graded | None = None
        if self.error is None:
            opening: JSON = self.exchanges[0].user if self.exchanges else None
            graded = await self.runner.grade(
                self.plan,
                self.plan.graders,
                opening,
                transcript,
                index=self.index,
                outcomes=self.plan.outcomes,
                workspace=self.workspace,
            )
        outcome = self.runner.score(self.plan, graded, TargetCall(None, self.error, self.duration))
        sample = SampleResult(
            index=self.index,
            score=outcome.score,
            verdict=outcome.verdict,
            output=transcript.output if replies else None,
            duration_ms=round(self.duration, 3),
            error=outcome.error,
            grader_results=graded.results if graded else [],
            expected_outcome_results=(graded.outcomes or []) if graded else [],
            turns=self.turns,
            cached=self.cached and bool(replies),
        )
        return sample, transcript if replies else None


def _turn(
    index: int,
    said: str,
    *,
    reply: str | None,
    checks: list[GraderResult],
    error: ErrorInfo | None,
    duration_ms: float,
) -> TurnResult:
    """One turn: its verdict says whether the agent answered (the conversation is graded as a
    whole); `checks` are the `stop_when` graders' results on the reply."""
    return TurnResult(
        index=index,
        input=said,
        output=reply,
        score=None,
        verdict="error" if error is not None else "pass",
        duration_ms=round(duration_ms, 3),
        error=error,
        grader_results=checks,
    )


def _spent(outputs: list[TargetOutput]) -> tuple[TokenUsage | None, float | None]:
    """The target's tokens and cost over every turn (None where no turn reported any)."""
    usage: TokenUsage | None = None
    cost: float | None = None
    for output in outputs:
        usage = add_usage(usage, output.token_usage)
        cost = add_cost(cost, output.cost_usd)
    return usage, cost
