"""Run and grade one case: call the target for each sample, grade, score, reduce."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from assay.errors import TargetError
from assay.graders import GradingContext
from assay.results import CaseResult, ErrorInfo, SampleResult, TargetOutput, TokenUsage
from assay.runner._plan import CasePlan
from assay.scoring import reduce_samples, score_case
from assay.targets import Target

__all__ = ["run_case"]


async def _call_target(
    target: Target, plan: CasePlan, base_dir: Path, index: int
) -> tuple[TargetOutput | None, ErrorInfo | None, float]:
    started = time.perf_counter()
    request = plan.request(base_dir, index)
    try:
        if plan.timeout_s is None:
            output = await target.call(request)
        else:
            output = await asyncio.wait_for(target.call(request), plan.timeout_s)
    except TimeoutError:
        error = ErrorInfo(type="TimeoutError", message=f"target took longer than {plan.timeout_s}s")
        return None, error, _ms(started)
    except TargetError as exc:
        return None, ErrorInfo(type=exc.kind, message=str(exc)), _ms(started)
    except Exception as exc:
        return None, ErrorInfo(type=type(exc).__name__, message=str(exc) or repr(exc)), _ms(started)
    return output, None, output.duration_ms or _ms(started)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000.0, 3)


async def _sample(
    target: Target, plan: CasePlan, base_dir: Path, index: int
) -> tuple[SampleResult, TargetOutput | None]:
    output, error, duration = await _call_target(target, plan, base_dir, index)
    grader_results = []
    if output is not None:
        test = plan.test
        ctx = GradingContext(
            case_id=test.id,
            output=output.output,
            threshold=plan.bands.threshold,
            input=test.input
            if isinstance(test.input, str)
            else [m.model_dump() for m in test.input],
            expected_output=test.expected_output,
            context=tuple(test.context),
            metadata=dict(test.metadata),
            target_output=output,
            expected_tool_calls=tuple(
                c.model_dump(exclude_none=True) for c in test.expected_tool_calls
            ),
        )
        grader_results = list(await asyncio.gather(*(g.grade(ctx) for g in plan.graders)))
    outcome = score_case(
        grader_results, aggregator=plan.aggregator, bands=plan.bands, target_error=error
    )
    sample = SampleResult(
        index=index,
        score=outcome.score,
        verdict=outcome.verdict,
        output=output.output if output else None,
        duration_ms=duration,
        error=outcome.error,
        grader_results=grader_results,
    )
    return sample, output


async def run_case(target: Target, plan: CasePlan, base_dir: Path) -> CaseResult:
    """Run every sample of a case and fold them into its result."""
    runs = [await _sample(target, plan, base_dir, i) for i in range(plan.repeat)]
    samples = [s for s, _ in runs]
    test = plan.test
    usage: TokenUsage | None = None
    cost: float | None = None
    for _, output in runs:
        if output is not None and output.token_usage is not None:
            usage = output.token_usage if usage is None else usage + output.token_usage
        if output is not None and output.cost_usd is not None:
            cost = (cost or 0.0) + output.cost_usd
    if plan.repeat == 1:
        chosen, score, verdict, error, ci = (
            samples[0],
            samples[0].score,
            samples[0].verdict,
            samples[0].error,
            None,
        )
    else:
        reduction = reduce_samples(samples, plan.repeat_strategy, plan.bands)
        chosen = samples[reduction.representative]
        score, verdict, error, ci = (
            reduction.score,
            reduction.verdict,
            reduction.error,
            reduction.ci95,
        )
    output = runs[chosen.index][1]
    return CaseResult(
        case_id=test.id,
        score=score,
        verdict=verdict,
        threshold=plan.bands.threshold,
        borderline=plan.bands.borderline,
        output=chosen.output,
        duration_ms=round(sum(s.duration_ms for s in samples) / len(samples), 3),
        token_usage=usage,
        cost_usd=cost,
        error=error,
        grader_results=chosen.grader_results,
        input=test.input if isinstance(test.input, str) else [m.model_dump() for m in test.input],
        messages=output.messages if output else [],
        tool_calls=output.tool_calls if output else [],
        tags=list(test.tags),
        samples=samples if plan.repeat > 1 else [],
        score_ci95=ci,
    )
