"""Execute a run plan: a bounded pool of workers, each result streamed to the sink at once.

Workers pull cases from one iterator instead of one task per case, so memory stays flat in
the number of cases and at most `concurrency` cases are in flight.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import subprocess
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

from assay._version import __version__
from assay.results import JSON, CaseResult, RunResult, RunStatus, TokenUsage
from assay.runner._case import run_case
from assay.runner._plan import CasePlan, RunPlan, iter_cases
from assay.scoring import SummaryBuilder
from assay.store import ResultSink

__all__ = ["execute", "new_run_id", "now_iso"]

CaseCallback = Callable[[CaseResult], None]


def new_run_id() -> str:
    """A sortable, unique run id: UTC time plus random suffix (`20261122T054312-3f9a1c`)."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3)


def now_iso() -> str:
    """Current UTC time in ISO 8601."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _git_commit(plan: RunPlan) -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],  # noqa: S607 — git from PATH, like every dev tool
            cwd=plan.loaded.base_dir,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def _snapshot(plan: RunPlan) -> dict[str, JSON]:
    return {
        "suite_file": plan.loaded.display,
        "suite": plan.loaded.data,
        "target": {"name": plan.target_name, "spec": plan.target.model_dump(mode="json")},
        "config": plan.config.model_dump(mode="json"),
        "assay_version": __version__,
        "git_commit": _git_commit(plan),
    }


class _Totals:
    def __init__(self) -> None:
        self.usage: TokenUsage | None = None
        self.cost: float | None = None

    def add(self, case: CaseResult) -> None:
        if case.token_usage is not None:
            self.usage = case.token_usage if self.usage is None else self.usage + case.token_usage
        if case.cost_usd is not None:
            self.cost = (self.cost or 0.0) + case.cost_usd


async def execute(
    plan: RunPlan,
    sink: ResultSink,
    *,
    on_case: CaseCallback | None = None,
    run_id: str | None = None,
) -> RunResult:
    """Run every case of the plan, streaming each graded result to `sink`.

    On cancellation (Ctrl-C) the run is finished as `interrupted` with every result so far
    kept, and the cancellation propagates.
    """
    await plan.target.setup(plan.target_base_dir)
    run = RunResult(
        id=run_id or new_run_id(),
        suite=plan.suite_name,
        target=plan.target_name,
        status="running",
        started_at=now_iso(),
        config=plan.config,
        summary=SummaryBuilder(
            plan.config.metrics_pass_threshold, plan.config.cases_pass_threshold
        ).build(),
        assay_version=__version__,
    )
    sink.create_run(run, _snapshot(plan))
    started = time.perf_counter()
    summary = SummaryBuilder(plan.config.metrics_pass_threshold, plan.config.cases_pass_threshold)
    totals = _Totals()
    cases: Iterator[CasePlan] = iter_cases(plan)

    async def worker() -> None:
        for case in cases:
            result = await run_case(plan.target, case, plan.target_base_dir)
            sink.add_case_result(run.id, result)
            summary.add(result)
            totals.add(result)
            if on_case is not None:
                on_case(result)

    def finish(status: RunStatus) -> RunResult:
        finished = run.model_copy(
            update={
                "status": status,
                "finished_at": now_iso(),
                "summary": summary.build(),
                "duration_ms": round((time.perf_counter() - started) * 1000.0, 3),
                "token_usage": totals.usage,
                "cost_usd": totals.cost,
            }
        )
        sink.finish_run(
            run.id,
            status=status,
            finished_at=finished.finished_at or "",
            summary=finished.summary,
            duration_ms=finished.duration_ms,
            token_usage=finished.token_usage,
            cost_usd=finished.cost_usd,
        )
        return finished

    try:
        workers = min(plan.concurrency, max(1, len(plan.cases)))
        async with asyncio.TaskGroup() as group:
            for _ in range(workers):
                group.create_task(worker())
    except BaseException as exc:
        # Keep what finished: the run is closed as interrupted (Ctrl-C) or failed (a bug),
        # and the original exception is what the caller sees, not the TaskGroup's wrapper.
        cause = _first_leaf(exc)
        with contextlib.suppress(Exception):
            finish(
                "interrupted"
                if isinstance(cause, asyncio.CancelledError | KeyboardInterrupt)
                else "failed"
            )
        if cause is not exc:
            raise cause from None
        raise
    return finish("completed")


def _first_leaf(exc: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups; `exc` itself if not a group."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
