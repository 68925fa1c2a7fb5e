"""Execute a run plan: a bounded pool of workers, each result streamed to the sink at once.

Workers pull cases from one iterator instead of one task per case, so memory stays flat in
the number of cases and at most `concurrency` cases are in flight. Target calls additionally
pass an adaptive limit that is lowered when the provider rate-limits.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import secrets
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from assay._version import __version__
from assay.cache import ResponseCache
from assay.providers import RetryPolicy
from assay.results import (
    JSON,
    CaseResult,
    RunResult,
    RunStatus,
    SchedulingStats,
    UsageTally,
    add_cost,
    now_iso,
)
from assay.runner._dispatch import Dispatcher, LocalDispatch, RayOptions
from assay.runner._plan import RunOptions, RunPlan, check_api_keys, iter_cases
from assay.runner._regression import RegressionTracker, track_new_run, track_resumed_run
from assay.runner._warm import warm_up_graders
from assay.runner._writer import GroupWriter, end_writer_process, start_writer_process
from assay.scoring import SummaryBuilder
from assay.store import (
    RawJSON,
    ResultSink,
    RunFinish,
    StoreUnavailableError,
    StoreWriter,
    StoreWriterEnded,
)

__all__ = ["Resume", "execute", "new_run_id", "redact_snapshot", "snapshot_of"]

CaseCallback = Callable[[CaseResult], None]


def new_run_id() -> str:
    """A sortable, unique run id: UTC time plus random suffix (`20261122T054312-3f9a1c`)."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3)


def _git_commit(directory: Path) -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],  # noqa: S607 — git from PATH, like every dev tool
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def snapshot_of(plan: RunPlan, *, redact: bool = True) -> dict[str, JSON]:
    """Everything needed to explain the run later and to check, at `--resume`, that the
    suite on disk is still the one it ran.

    Redacted (the default, for everything stored): `${VAR}` values are put back as written
    (`redact_snapshot`), so no secret from the environment reaches the store, an export or
    the API. Ray workers plan the run from the unredacted snapshot, which stays in memory."""
    snapshot = _snapshot(plan)
    return redact_snapshot(plan, snapshot) if redact else snapshot


def redact_snapshot(plan: RunPlan, snapshot: dict[str, JSON]) -> dict[str, JSON]:
    """`snapshot` (of `plan`) with the environment's `${VAR}` values as the suite and
    project files wrote them (`Expansions.redact`); parts come back as `RawJSON`."""
    expansions = plan.loaded.expansions.merged(plan.project.expansions)
    if not expansions.values:
        return snapshot
    return {
        key: RawJSON(expansions.redact(value if isinstance(value, RawJSON) else _encode(value)))
        for key, value in snapshot.items()
    }


_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _snapshot(plan: RunPlan) -> dict[str, JSON]:
    project = plan.project
    return {
        "suite_file": plan.loaded.display,
        "suite_dir": str(plan.loaded.base_dir),
        "suite": RawJSON(plan.loaded.document),
        "project": {
            "path": str(project.path) if project.path else None,
            "config": project.config.model_dump(mode="json", by_alias=True, exclude_unset=True),
        },
        "options": _effective_options(plan).snapshot(),
        "target": {"name": plan.target_name, "spec": plan.target.model_dump(mode="json")},
        "config": plan.config.model_dump(mode="json"),
        "judge": _judge_snapshot(plan),
        "assay_version": __version__,
        "git_commit": _git_commit(plan.loaded.base_dir),
    }


def _effective_options(plan: RunPlan) -> RunOptions:
    """The run's options with the judge the environment chose written in, so `--resume` asks
    the same judge even if `ASSAY_JUDGE_MODEL` changed since."""
    forced = plan.judge_forced
    if forced is None:
        return plan.options
    return dataclasses.replace(
        plan.options, judge_model=forced.model, judge_base_url=forced.base_url
    )


def _judge_snapshot(plan: RunPlan) -> JSON:
    """The default judge the run resolved (graders may override it), without secrets: keys
    stay in the environment and only the variable's name is recorded."""
    judge = plan.default_judge
    return judge.model_dump(mode="json", exclude_unset=True) if judge and judge.model else None


@dataclass(frozen=True)
class Resume:
    """An interrupted run to complete: the stored run and the results it already has."""

    run: RunResult
    done: Iterable[CaseResult]
    stored: Callable[[], Iterable[CaseResult]] | None = None
    """Every result the store holds for the run, read again when it finishes: the final
    summary and totals are counted from what is stored, whatever else wrote to the run."""


class _Totals:
    """Token usage, cost and cached cases summed over case results as they arrive."""

    def __init__(self) -> None:
        self.usage = UsageTally()
        self.cost: float | None = None
        self.cached = 0

    def add(self, case: CaseResult) -> None:
        self.usage.add(case.token_usage)
        self.cost = add_cost(self.cost, case.cost_usd)
        self.cached += case.cached


class _Execution:
    """The state of one run while it executes: what is done, the totals, the summary.

    A run that commits through a writer process is also created and finished by it
    (`records`), so its own process never needs to open the store; the sink finishes it only
    when that process has ended.
    """

    def __init__(
        self,
        plan: RunPlan,
        sink: ResultSink,
        regression: RegressionTracker | None,
        process: StoreWriter | None,
    ) -> None:
        self.plan = plan
        self.sink = sink
        self.records: ResultSink | StoreWriter = process or sink
        self.regression = regression
        self.summary = SummaryBuilder(
            plan.config.metrics_pass_threshold, plan.config.cases_pass_threshold
        )
        self.totals = _Totals()
        self.done_ids: set[str] = set()
        self.stored: Callable[[], Iterable[CaseResult]] | None = None
        self.previous_ms = 0.0
        self.started = time.perf_counter()

    def start(self, run_id: str, started_at: str, resume: Resume | None) -> RunResult:
        """Create the run (in `records`), or take over the run being resumed."""
        if resume is None:
            run = RunResult(
                id=run_id,
                suite=self.plan.suite_name,
                target=self.plan.target_name,
                status="running",
                started_at=started_at,
                config=self.plan.config,
                summary=self.summary.build(),
                assay_version=__version__,
            )
            snapshot = snapshot_of(self.plan)
            if self.regression is not None:  # so `--resume` keeps the same baseline
                snapshot["regression"] = self.regression.baseline.snapshot()
            self.records.create_run(run, snapshot)
            return run
        # Totals are recounted from the stored results: a killed process never wrote its own.
        for case in resume.done:
            self.count(case)
            self.done_ids.add(case.case_id)
        self.previous_ms = resume.run.duration_ms
        self.stored = resume.stored
        return resume.run

    def recount(self) -> None:
        """Count the summary and totals again from the stored results (a resumed run)."""
        if self.stored is None:
            return
        summary = SummaryBuilder(
            self.plan.config.metrics_pass_threshold, self.plan.config.cases_pass_threshold
        )
        totals = _Totals()
        for case in self.stored():
            summary.add(case)
            totals.add(case)
        self.summary, self.totals = summary, totals

    def count(self, case: CaseResult) -> None:
        """Add a finished case to the run's summary and totals."""
        self.summary.add(case)
        self.totals.add(case)
        if self.regression is not None:
            self.regression.add(case)

    def finish(self, run: RunResult, status: RunStatus, scheduling: SchedulingStats) -> RunResult:
        """Close the run (in `records`) with its final summary, totals and scheduling record."""
        self.recount()
        summary = self.summary.build()
        regression = None
        if self.regression is not None and status == "completed":  # partial runs are not measured
            tests = self.plan.loaded.suite.tests
            regression = self.regression.result(summary, (test.id for test in tests))
        finished = run.model_copy(
            update={
                "status": status,
                "finished_at": now_iso(),
                "summary": summary,
                "regression": regression,
                "duration_ms": round(
                    self.previous_ms + (time.perf_counter() - self.started) * 1000.0, 3
                ),
                "token_usage": self.totals.usage.total,
                "cost_usd": self.totals.cost,
                # Counted from the results, so a resumed run counts its earlier part too.
                "scheduling": scheduling.model_copy(update={"cached_cases": self.totals.cached}),
            }
        )
        try:
            _record_finish(self.records, finished)
        except StoreWriterEnded:  # the writer process is gone: finish the run from here
            _record_finish(self.sink, finished)
        return finished


def _record_finish(records: ResultSink | StoreWriter, finished: RunResult) -> None:
    records.finish_run(finished.id, RunFinish.of(finished))


def _root_cause(failure: BaseException) -> BaseException:
    """The first real exception inside TaskGroup wrappers."""
    cause = failure
    while isinstance(cause, BaseExceptionGroup) and cause.exceptions:
        cause = cause.exceptions[0]
    return cause


async def _dispatcher(
    plan: RunPlan, cache: ResponseCache | None, ray: RayOptions | None, run_id: str
) -> Dispatcher:
    if ray is None:
        return LocalDispatch(plan, cache, RetryPolicy(max_retries=plan.max_retries), run_id)
    from assay.runner._ray import start_ray_dispatch  # Ray loads only when asked for

    return await start_ray_dispatch(plan, cache, ray, snapshot_of(plan, redact=False), run_id)


async def _set_up(
    plan: RunPlan,
    sink: ResultSink,
    *,
    regression: RegressionTracker | None,
    process: StoreWriter | None,
    cache: ResponseCache | None,
    ray: RayOptions | None,
    run_id: str,
    started_at: str,
    resume: Resume | None,
) -> tuple[Dispatcher, _Execution, RunResult]:
    """Set the target up, warm the graders up, start the dispatcher, then create the run (or
    take over `resume`'s).

    Workers start before the run is created, so an unreachable cluster stores nothing; a
    store that cannot be opened (found out by the writer process when it creates the run)
    stops the run before its first case.
    """
    await plan.target.setup(plan.target_base_dir)
    if ray is None:  # Ray workers grade, and load what they need themselves
        # Grader resources load here, in a thread, never inside a case's timing.
        await asyncio.to_thread(warm_up_graders, plan.loaded.suite)
    dispatch: Dispatcher | None = None
    try:
        dispatch = await _dispatcher(plan, cache, ray, resume.run.id if resume else run_id)
        state = _Execution(plan, sink, regression, process)
        return dispatch, state, state.start(run_id, started_at, resume)
    except BaseException:  # torn down in the order a finished run uses
        with contextlib.suppress(Exception):
            await plan.target.teardown()
        if dispatch is not None:
            with contextlib.suppress(Exception):
                await dispatch.close()
        raise


async def execute(
    plan: RunPlan,
    sink: ResultSink,
    *,
    on_case: CaseCallback | None = None,
    run_id: str | None = None,
    cache: ResponseCache | None = None,
    resume: Resume | None = None,
    ray: RayOptions | None = None,
    on_set_up: Callable[[], None] | None = None,
) -> RunResult:
    """Run every case of the plan, streaming each graded result to `sink`.

    With `resume`, only the cases the stored run lacks are run, into the same run. On
    cancellation (Ctrl-C) the run is finished as `interrupted` with every result so far kept;
    on any other failure as `failed`; the original exception propagates either way.

    When the plan has regression settings, the baseline is found in `sink` (a store) before
    the target is set up, and a completed run carries its `RegressionResult`.

    With `ray`, the cases run on a Ray cluster's workers instead of in this process; the
    store, summary and resume bookkeeping stay here (docs/ray.md).

    `on_set_up` is called once the target is set up and the run created, before the first
    case (the `assay` executable freezes what the set-up loaded there).

    Raises:
        UsageError: A named baseline is unknown or unusable, or one was requested explicitly
            and `sink` is not a store; with `ray`, Ray is not installed or the cluster cannot
            be reached.
    """
    check_api_keys(plan)
    # The baseline is found before the target is set up: an unknown one stops the run at once.
    run_id, started_at = run_id or new_run_id(), now_iso()
    if resume is None:
        regression = track_new_run(plan, sink, run_id=run_id, started_at=started_at)
    else:
        regression = track_resumed_run(sink, resume.run.id)
    # A resumed run counts what its stored summary counts (a killed run's may be behind: at
    # worst a process starts that a short remainder did not need).
    to_run = len(plan.cases) - (resume.run.summary.total if resume else 0)
    process = start_writer_process(sink, to_run)  # before the set-up, to overlap it
    try:
        dispatch, state, run = await _set_up(
            plan,
            sink,
            regression=regression,
            process=process,
            cache=cache,
            ray=ray,
            run_id=run_id,
            started_at=started_at,
            resume=resume,
        )
    except BaseException:
        if process is not None:
            process.close()
        raise
    if on_set_up is not None:
        on_set_up()
    done = state.done_ids
    cases = iter_cases(plan, done)

    def committed(results: list[CaseResult]) -> None:
        # The summary and progress count what is stored, never a result the sink refused.
        for result in results:
            state.count(result)
            if on_case is not None:
                on_case(result)

    writer = GroupWriter(sink, run.id, committed, process=process)
    failure: BaseException | None = None
    try:
        await dispatch.run(cases, len(plan.cases) - len(done), writer.write)
    except BaseException as exc:
        failure = exc
    try:
        await writer.close()  # whatever happened, what finished is committed first
    except Exception as exc:
        failure = failure or exc
    finally:
        with contextlib.suppress(Exception):
            await plan.target.teardown()
        with contextlib.suppress(Exception):
            await dispatch.close()
    try:
        return _conclude(state, run, dispatch.scheduling(), failure)
    finally:
        if process is not None:  # the run was finished through it: done with it
            end_writer_process(sink, process)


def _conclude(
    state: _Execution, run: RunResult, scheduling: SchedulingStats, failure: BaseException | None
) -> RunResult:
    """Finish the run: completed, or closed as interrupted (Ctrl-C) or failed (a bug), in
    which case the caller sees the original exception (a store failure with how to resume)."""
    if failure is None:
        try:
            return state.finish(run, "completed", scheduling)
        except StoreUnavailableError as exc:
            raise _resumable(exc, run.id, closed=False) from None
    cause = _root_cause(failure)
    interrupted = isinstance(cause, asyncio.CancelledError | KeyboardInterrupt)
    closed = False
    with contextlib.suppress(Exception):
        state.finish(run, "interrupted" if interrupted else "failed", scheduling)
        closed = True
    if isinstance(cause, StoreUnavailableError):
        raise _resumable(cause, run.id, closed=closed) from None
    if cause is failure:
        raise failure
    raise cause from None


def _resumable(
    failure: StoreUnavailableError, run_id: str, *, closed: bool
) -> StoreUnavailableError:
    """The store failure with how to complete the run. One the store could not close stays
    marked running, owned by this process: once it has exited, a resume on this machine
    claims it; one elsewhere cannot see that process, so it takes the run over."""
    elsewhere = "" if closed else " (on another host, add --takeover)"
    return StoreUnavailableError(
        f"{failure}; the results committed before it are kept: once the store works again, "
        f"complete the run with: assay run --resume {run_id}{elsewhere}"
    )
