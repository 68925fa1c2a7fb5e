"""Run and grade one case: target calls (limited, retried, cached), grading, samples, turns."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

from assay._concurrency import AdaptiveLimiter
from assay._content import abbreviated
from assay.cache import ResponseCache, cache_key
from assay.config import InputMessage
from assay.errors import TargetError
from assay.graders import ExpectedOutcomes, Grader, GradingContext, grade_all, outcome_results
from assay.judge import JudgePool, JudgeSpec
from assay.providers import RetryPolicy
from assay.results import (
    JSON,
    CaseResult,
    CaseResultFields,
    ErrorInfo,
    ExpectedOutcomeResult,
    GraderResult,
    Message,
    SampleResult,
    TargetOutput,
    TokenUsage,
    ToolCall,
    TurnResult,
    add_cost,
    add_usage,
)
from assay.runner._plan import CasePlan
from assay.runner._workspace import CaseWorkspace, WorkspaceError
from assay.scoring import (
    CaseOutcome,
    JudgeSpend,
    fold_turns,
    reduce_samples,
    score_case,
    score_to_verdict,
)
from assay.targets import Target, TargetRequest

__all__ = ["CaseRunner"]


_validated_case = CaseResult.__pydantic_validator__.validate_python
"""What `CaseResult(**fields)` runs, without the keyword unpacking and `__init__`'s frame."""


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000.0, 3)


@dataclass
class TargetCall:
    """The outcome of one (possibly retried) target call."""

    output: TargetOutput | None
    error: ErrorInfo | None
    duration_ms: float
    cached: bool = False
    """Answered from the response cache: `duration_ms` is the one recorded with the reply."""


@dataclass
class Graded:
    """One output's grading: the context, the graders (outcomes last) and their results."""

    ctx: GradingContext
    graders: tuple[Grader, ...]
    results: list[GraderResult]
    outcomes: list[ExpectedOutcomeResult] | None = None
    outcome_error: ErrorInfo | None = None


class _Plain:
    """One sample of a case that is not a conversation, read as a `SampleResult` is, without
    building one: a case that runs once stores no samples, and the
    model (validated, ~3% of a deterministic run) would only be read and dropped. `as_sample`
    makes the `SampleResult` where one is stored (repeats) or copied (workspaces)."""

    __slots__ = (
        "cached",
        "duration_ms",
        "error",
        "expected_outcome_results",
        "grader_results",
        "index",
        "output",
        "rejudged_scores",
        "score",
        "verdict",
    )
    turns: tuple[TurnResult, ...] = ()
    workspace: str | None = None

    def __init__(
        self,
        index: int,
        outcome: CaseOutcome,
        call: TargetCall,
        graded: Graded | None,
        rejudged: list[float | None],
    ) -> None:
        self.index = index
        self.score = outcome.score
        self.verdict = outcome.verdict
        self.output = call.output.output if call.output else None
        self.duration_ms = call.duration_ms
        self.error = outcome.error
        self.grader_results = graded.results if graded else []
        self.expected_outcome_results = (graded.outcomes or []) if graded else []
        self.cached = call.cached
        self.rejudged_scores = rejudged

    def sample(self) -> SampleResult:
        """The stored form, as the runner always built it."""
        sample = SampleResult(
            index=self.index,
            score=self.score,
            verdict=self.verdict,
            output=self.output,
            duration_ms=self.duration_ms,
            error=self.error,
            grader_results=self.grader_results,
            expected_outcome_results=self.expected_outcome_results,
            cached=self.cached,
        )
        if self.rejudged_scores:
            sample.rejudged_scores = self.rejudged_scores
        return sample


Sample = SampleResult | _Plain
"""One execution of a case, as `CaseRunner.run` reads it."""


def as_sample(sample: Sample) -> SampleResult:
    """A sample in its stored form."""
    return sample.sample() if isinstance(sample, _Plain) else sample


@dataclass
class CaseRunner:
    """Everything shared by the cases of one run: the target, its limit, retries, cache."""

    target: Target
    base_dir: Path
    limiter: AdaptiveLimiter
    retry: RetryPolicy
    cache: ResponseCache | None = None
    judges: JudgePool | None = None
    """The run's judges, for judged graders and expected outcomes."""
    suite_dir: Path | None = None
    """Where the suite file is: graders resolve relative paths against it."""
    simulator: JudgeSpec | None = None
    """The model playing the user of `simulate:` tests (SPEC §2.1)."""
    rng: random.Random = field(default_factory=random.Random)
    retries: int = 0
    """Target calls retried so far in this run."""
    run_id: str = ""
    """The run's id, for workspace hooks (`eval_run_id`)."""

    async def _attempt(self, plan: CasePlan, request: TargetRequest) -> TargetOutput:
        async with self.limiter:
            if plan.timeout_s is None:
                return await self.target.call(request)
            try:
                return await asyncio.wait_for(self.target.call(request), plan.timeout_s)
            except TimeoutError:
                raise TargetError(
                    f"target took longer than {plan.timeout_s}s", kind="TimeoutError"
                ) from None

    async def _call_live(self, plan: CasePlan, request: TargetRequest) -> TargetOutput:
        attempt = 0
        while True:
            try:
                output = await self._attempt(plan, request)
            except TargetError as exc:
                if exc.rate_limited:
                    self.limiter.on_rate_limited()
                if not exc.retryable or attempt >= self.retry.max_retries:
                    if attempt:
                        raise TargetError(
                            f"{exc} (after {attempt} retr{'y' if attempt == 1 else 'ies'})",
                            kind=exc.kind,
                        ) from exc
                    raise
                await asyncio.sleep(self.retry.delay(attempt, exc.retry_after_s, self.rng))
                attempt += 1
                self.retries += 1
                continue
            self.limiter.on_success()
            return output

    async def call(self, plan: CasePlan, request: TargetRequest) -> TargetCall:
        """Call the target (through the cache when it is cacheable); never raises for failures.

        Raises:
            assay.cache.CacheMiss: replay mode and the call is not cached (a run-level error).
        """
        started = time.perf_counter()
        try:  # the key holds the request body, so a request that cannot be built fails here
            identity = self.target.cache_key(request) if self.cache is not None else None
        except TargetError as exc:
            return TargetCall(None, ErrorInfo(type=exc.kind, message=str(exc)), _ms(started))
        key = None
        if self.cache is not None and identity is not None:
            key = cache_key("target", identity, repeat_index=request.repeat_index)
            cached = self.cache.get(key)
            if cached is not None:
                # The duration stored with the reply, not the lookup's (docs/running.md).
                output = TargetOutput.model_validate(cached)
                return TargetCall(output, None, output.duration_ms, cached=True)
        try:
            output = await self._call_live(plan, request)
        except TargetError as exc:
            return TargetCall(None, ErrorInfo(type=exc.kind, message=str(exc)), _ms(started))
        except Exception as exc:
            message = str(exc) or repr(exc)
            return TargetCall(
                None, ErrorInfo(type=type(exc).__name__, message=message), _ms(started)
            )
        # A target measures its own time (`TargetOutput.duration_ms`); the wall clock here
        # would also count waiting for the limiter and for the event loop.
        duration = output.duration_ms or _ms(started)
        if key is not None and self.cache is not None:
            value = output.model_dump(mode="json")
            value["duration_ms"] = duration  # what a later cache hit records
            self.cache.put(key, value, kind="target")
        return TargetCall(output, None, duration)

    async def grade(
        self,
        plan: CasePlan,
        graders: tuple[Grader, ...],
        given: JSON,
        output: TargetOutput,
        *,
        index: int,
        outcomes: ExpectedOutcomes | None,
        workspace: Path | None = None,
    ) -> Graded:
        """Grade one output; expected outcomes are judged alongside the graders."""
        test = plan.test
        ctx = GradingContext(
            case_id=test.id,
            output=output.output,
            threshold=plan.bands.threshold,
            input=given,
            expected_output=test.expected_output,
            context=tuple(test.context),
            metadata=dict(test.metadata),
            target_output=output,
            expected_tool_calls=tuple(
                c.model_dump(exclude_none=True) for c in test.expected_tool_calls
            ),
            expected_context_ids=tuple(test.expected_context_ids),
            base_dir=self.suite_dir,
            judges=self.judges,
            repeat_index=index,
            criteria=test.criteria,
            workspace=workspace,
        )
        everything = (*graders, outcomes) if outcomes is not None else graders
        results = await grade_all(everything, ctx)
        graded = Graded(ctx, everything, results)
        if outcomes is not None:
            graded.outcomes = outcome_results(outcomes, results[-1])
            if graded.outcomes is None:
                graded.outcome_error = results[-1].error
        return graded

    def score(self, plan: CasePlan, graded: Graded | None, call: TargetCall) -> CaseOutcome:
        if graded is None:
            return score_case(
                [], aggregator=plan.aggregator, bands=plan.bands, target_error=call.error
            )
        return score_case(
            graded.results,
            aggregator=plan.aggregator,
            bands=plan.bands,
            outcomes=graded.outcomes,
            outcome_error=graded.outcome_error,
        )

    async def _rejudge(
        self, plan: CasePlan, graded: Graded, first: CaseOutcome, spend: JudgeSpend
    ) -> tuple[CaseOutcome, list[float | None]]:
        """Borderline re-judging: ask the judged graders `plan.rejudge` more times and decide
        from the mean case score of every ask (re-asks that error are left out of the mean)."""
        if not plan.rejudge or first.verdict != "borderline":
            return first, []
        asked = [i for i, g in enumerate(graded.graders) if g.uses_judge]
        if not asked:
            return first, []
        scores: list[float | None] = [first.score]
        for round_ in range(1, plan.rejudge + 1):
            ctx = dataclasses.replace(graded.ctx, rejudge_round=round_)
            fresh = await asyncio.gather(*(graded.graders[i].grade(ctx) for i in asked))
            spend.add(fresh)
            again = list(graded.results)
            for i, result in zip(asked, fresh, strict=True):
                again[i] = result
            outcome = score_case(again, aggregator=plan.aggregator, bands=plan.bands)
            scores.append(outcome.score if outcome.verdict != "error" else None)
        valid = [s for s in scores if s is not None]
        mean = round(sum(valid) / len(valid), 6)
        verdict = score_to_verdict(mean, plan.bands.threshold, plan.bands.borderline)
        return CaseOutcome(mean, verdict, None, first.required_gate_failed), scores

    async def _single(
        self, plan: CasePlan, index: int, spend: JudgeSpend, workspace: Path | None
    ) -> tuple[Sample, TargetOutput | None]:
        request = plan.request(self.base_dir, index, workspace=workspace)
        call = await self.call(plan, request)
        graded: Graded | None = None
        if call.output is not None:
            graded = await self.grade(
                plan,
                plan.graders,
                request.input,
                call.output,
                index=index,
                outcomes=plan.outcomes,
                workspace=workspace,
            )
        outcome = self.score(plan, graded, call)
        rejudged: list[float | None] = []
        if graded is not None:
            outcome, rejudged = await self._rejudge(plan, graded, outcome, spend)
        return _Plain(index, outcome, call, graded, rejudged), call.output

    async def _conversation(
        self, plan: CasePlan, index: int, spend: JudgeSpend, workspace: Path | None
    ) -> tuple[SampleResult, TargetOutput | None]:
        test = plan.test
        assert test.turns is not None
        history: tuple[Message, ...] = ()
        turns: list[TurnResult] = []
        outcomes: list[CaseOutcome] = []
        last: TargetOutput | None = None
        usage: TokenUsage | None = None
        cost: float | None = None
        calls: list[ToolCall] = []
        duration = 0.0
        cached = True
        for turn_index, turn in enumerate(test.turns):
            request = plan.request(self.base_dir, index, turn.input, history, workspace)
            call = await self.call(plan, request)
            duration += call.duration_ms
            cached = cached and call.cached
            graded: Graded | None = None
            if call.output is not None:
                graders = plan.turn_graders[turn_index] + plan.graders
                turn_outcomes = plan.turn_outcomes[turn_index] if plan.turn_outcomes else None
                graded = await self.grade(
                    plan,
                    graders,
                    request.input,
                    call.output,
                    index=index,
                    outcomes=turn_outcomes,
                    workspace=workspace,
                )
                answer = call.output.messages[-1] if call.output.messages else None
                if answer is None or answer.role != "assistant":
                    answer = Message(role="assistant", content=call.output.output)
                history = (*request.messages, answer)
                last = call.output
                calls += call.output.tool_calls
                usage = add_usage(usage, call.output.token_usage)
                cost = add_cost(cost, call.output.cost_usd)
            outcome = self.score(plan, graded, call)
            outcomes.append(outcome)
            turns.append(
                TurnResult(
                    index=turn_index,
                    input=abbreviated(_turn_input(turn.input)),
                    output=call.output.output if call.output else None,
                    score=outcome.score,
                    verdict=outcome.verdict,
                    duration_ms=round(call.duration_ms, 3),
                    error=outcome.error,
                    grader_results=graded.results if graded else [],
                    expected_outcome_results=(graded.outcomes or []) if graded else [],
                )
            )
            if outcome.verdict in ("fail", "error") and test.on_turn_failure == "stop":
                break
        folded = fold_turns(outcomes, test.aggregation, plan.bands)
        transcript = TargetOutput(
            output=last.output if last else "",
            messages=list(history),
            tool_calls=calls,
            context=last.context if last else [],
            token_usage=usage,
            cost_usd=cost,
            duration_ms=duration,
            finish_reason=last.finish_reason if last else None,
        )
        sample = SampleResult(
            index=index,
            score=folded.score,
            verdict=folded.verdict,
            output=last.output if last else None,
            duration_ms=round(duration, 3),
            error=folded.error,
            grader_results=turns[-1].grader_results,
            turns=turns,
            cached=cached,
        )
        return sample, transcript

    async def _simulated(
        self, plan: CasePlan, index: int, spend: JudgeSpend, workspace: Path | None
    ) -> tuple[SampleResult, TargetOutput | None]:
        """A conversation with a simulated user (SPEC §2.1), graded on its whole transcript."""
        from assay.runner._simulated import SimulatedConversation

        return await SimulatedConversation(self, plan, index, spend, workspace).run()

    async def _sample_in_workspace(
        self, plan: CasePlan, index: int, spend: JudgeSpend
    ) -> tuple[Sample, TargetOutput | None]:
        """One sample, in a fresh workspace when the case has one (docs/suite-reference.md):
        a failed set-up or teardown hook is the sample's error, with the reason."""
        one = (
            self._simulated
            if plan.test.simulate is not None
            else self._conversation
            if plan.test.turns
            else self._single
        )
        if plan.workspace is None:
            return await one(plan, index, spend, None)
        test = plan.test
        space = CaseWorkspace(
            plan.workspace,
            self.suite_dir or self.base_dir,
            test.id,
            self.run_id,
            _case_input(plan),
            dict(test.metadata),
        )
        try:
            try:
                path = await space.create()
            except WorkspaceError as exc:
                failed = SampleResult(
                    index=index,
                    score=None,
                    verdict="error",
                    error=ErrorInfo(type="WorkspaceError", message=str(exc)),
                )
                kept = await space.finish(passed=False)
                return failed.model_copy(update={"workspace": kept}), None
            done, output = await one(plan, index, spend, path)
            sample = as_sample(done)
            reason = await space.teardown()
            if reason is not None and sample.error is None:
                error = ErrorInfo(type="WorkspaceError", message=reason)
                sample = sample.model_copy(
                    update={"score": None, "verdict": "error", "error": error}
                )
        except BaseException:
            space.discard()  # cancelled or crashed: nothing to show for it
            raise
        kept = await space.finish(passed=sample.verdict == "pass")
        return (sample.model_copy(update={"workspace": kept}) if kept else sample), output

    async def run(self, plan: CasePlan) -> CaseResult:
        """Run every sample of a case and fold them into its result."""
        spend = JudgeSpend()
        runs = [await self._sample_in_workspace(plan, i, spend) for i in range(plan.repeat)]
        samples = [s for s, _ in runs]
        for sample in samples:
            spend.add(sample.grader_results)
            for turn in sample.turns[:-1]:  # the last turn's results are the sample's
                spend.add(turn.grader_results)
        usage: TokenUsage | None = None
        cost: float | None = None
        for _, output in runs:
            if output is not None:
                usage = add_usage(usage, output.token_usage)
                cost = add_cost(cost, output.cost_usd)
        ci: tuple[float, float] | None = None
        chosen: Sample
        stored: list[SampleResult] | None = None
        if plan.repeat == 1:
            chosen = samples[0]
            score, verdict, error = chosen.score, chosen.verdict, chosen.error
        else:
            stored = [as_sample(s) for s in samples]
            reduction = reduce_samples(stored, plan.repeat_strategy, plan.bands)
            chosen = stored[reduction.representative]
            score, verdict, error = reduction.score, reduction.verdict, reduction.error
            ci = reduction.ci95
        output = runs[chosen.index][1]
        test = plan.test
        # Only what differs from the defaults is passed: each field given costs validation.
        fields: CaseResultFields = {
            "case_id": test.id,
            "score": score,
            "verdict": verdict,
            "threshold": plan.bands.threshold,
            "borderline": plan.bands.borderline,
            "output": chosen.output,
            "duration_ms": round(sum(s.duration_ms for s in samples) / len(samples), 3),
            "input": abbreviated(_case_input(plan)),
        }
        if error is not None:
            fields["error"] = error
        if ci is not None:
            fields["score_ci95"] = ci
        if test.tags:
            fields["tags"] = test.tags
        if stored is not None:
            fields["samples"] = stored
        if all(s.cached for s in samples):
            fields["cached"] = True
        kept = [s.workspace for s in samples if s.workspace is not None]
        if kept:
            fields["workspaces"] = kept
        _add_spend(fields, usage, cost, spend)
        _add_sample(fields, chosen, output)
        result: CaseResult = _validated_case(fields)
        return result


def _add_spend(
    fields: CaseResultFields, usage: TokenUsage | None, cost: float | None, spend: JudgeSpend
) -> None:
    """The target's and the judges' tokens and costs, where there are any."""
    if usage is not None:
        fields["token_usage"] = usage
    if cost is not None:
        fields["cost_usd"] = cost
    if spend.token_usage is not None:
        fields["judge_token_usage"] = spend.token_usage
    if spend.cost_usd is not None:
        fields["judge_cost_usd"] = spend.cost_usd
    if spend.calls:
        fields["judge_calls"] = spend.calls
    if spend.errors:
        fields["judge_errors"] = spend.errors


def _add_sample(fields: CaseResultFields, chosen: Sample, output: TargetOutput | None) -> None:
    """What the representative sample holds, where it is not empty."""
    if chosen.grader_results:
        fields["grader_results"] = results = chosen.grader_results
        if not chosen.turns:
            # What `CaseResult` would gather itself (`results._gathered`), given here: its
            # validator then assigns neither list (two model assignments, ~2% of a
            # deterministic run). A conversation's, gathered turn by turn, stay its own.
            fields["hits"] = [h for r in results for h in r.hits]
            fields["misses"] = [m for r in results for m in r.misses]
    if chosen.expected_outcome_results:
        fields["expected_outcome_results"] = chosen.expected_outcome_results
    if output is not None and output.messages:
        fields["messages"] = _stored(output.messages)
    if output is not None and output.tool_calls:
        fields["tool_calls"] = output.tool_calls
    if output is not None and output.context:
        fields["context"] = output.context
    if chosen.turns:
        fields["turns"] = list(chosen.turns)
    if chosen.rejudged_scores:
        fields["rejudged_scores"] = chosen.rejudged_scores


def _stored(messages: list[Message] | tuple[Message, ...]) -> list[Message]:
    """Messages as a result stores them: media in content parts abbreviated (the suite has
    them; a result does not repeat megabytes of base64 per case)."""
    return [
        m.model_copy(update={"content": abbreviated(m.content)})
        if isinstance(m.content, list)
        else m
        for m in messages
    ]


def _turn_input(given: str | list[InputMessage] | None) -> JSON:
    """An input as written in the suite: the text, or the messages as mappings."""
    if given is None or isinstance(given, str):
        return given
    return [{"role": m.role, "content": m.wire_content()} for m in given]


def _case_input(plan: CasePlan) -> JSON:
    test = plan.test
    if test.turns is not None:
        return [_turn_input(t.input) for t in test.turns]
    return _turn_input(test.input)
