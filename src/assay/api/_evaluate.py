"""The Python API: evaluate a suite and get its run result. The CLI calls the same code."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from assay.cache import DEFAULT_CACHE_PATH, CacheMode, ResponseCache
from assay.config import LoadedProject, LoadedSuite, load_project, load_suite, parse_suite
from assay.results import JSON, CaseResult, RunResult
from assay.runner import Resume, RunOptions, RunPlan, execute, plan_from_snapshot, plan_run
from assay.store import MemorySink, ResultSink, Store, open_store

__all__ = [
    "EvalConfig",
    "EvalSummary",
    "evaluate",
    "evaluate_async",
    "open_cache",
    "prepare_resume",
    "resume_run",
    "run_loaded",
    "run_plan",
]

EvalSummary = RunResult
"""The result of `evaluate`: the SPEC §8 run result with every case result."""

CaseCallback = Callable[[CaseResult], None]


class EvalConfig(BaseModel):
    """Per-run settings for `evaluate`; each wins over the suite and project config."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    threshold: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    """Case pass threshold; overrides every config level, exactly like `--threshold`."""
    concurrency: Annotated[int, Field(ge=1)] | None = None
    """How many target calls run at once."""
    target: str | None = None
    """Target name to run against, overriding the suite's `target`."""
    repeat: Annotated[int, Field(ge=1)] | None = None
    """Samples per case, overriding `execution.repeat`."""
    store: str | Literal[False] | None = None
    """Where the run is stored: a path or URL, None for the project default, False for memory."""
    cache_mode: CacheMode = CacheMode.USE
    """Response cache mode for model-backed targets and judges: use, off, record or replay."""
    judge_model: str | None = None
    """Judge model of every judged grader, exactly like `--judge-model`."""
    judge_base_url: str | None = None
    """Judge endpoint, exactly like `--judge-base-url`."""
    baseline: Annotated[str, Field(pattern=r"^\S+$")] | None = None
    """Measure the run against a baseline, exactly like `--baseline`: `last_passing`,
    `pinned` or a run id. Needs a stored run (not `store=False`)."""


def open_cache(mode: CacheMode, path: Path = DEFAULT_CACHE_PATH) -> ResponseCache | None:
    """The response cache for a run, or None when caching is off."""
    return None if mode == CacheMode.OFF else ResponseCache(path, mode)


async def run_plan(
    plan: RunPlan,
    sink: ResultSink,
    *,
    on_case: CaseCallback | None = None,
    cache: ResponseCache | None = None,
    resume: Resume | None = None,
) -> RunResult:
    """Execute an already resolved plan into `sink` (the CLI resolves every plan first)."""
    return await execute(plan, sink, on_case=on_case, cache=cache, resume=resume)


async def run_loaded(
    loaded: LoadedSuite,
    project: LoadedProject,
    options: RunOptions,
    sink: ResultSink,
    *,
    on_case: CaseCallback | None = None,
    cache: ResponseCache | None = None,
) -> RunResult:
    """Plan and execute one loaded suite into `sink` (results are not kept in memory)."""
    return await execute(plan_run(loaded, project, options), sink, on_case=on_case, cache=cache)


def prepare_resume(store: Store, run_id: str) -> tuple[RunPlan, Resume]:
    """Reopen an interrupted run and rebuild its plan from the run's snapshot.

    The snapshot holds the suite, project config and options as they were, so edits made to
    the files since then do not change the resumed run.

    Raises:
        UsageError: the run does not exist, completed already, or cannot be replanned.
    """
    run = store.get_run(run_id)
    plan = plan_from_snapshot(run.id, store.get_snapshot(run.id))
    reopened = store.reopen_run(run.id)
    return plan, Resume(reopened, store.iter_case_results(run.id))


async def resume_run(
    store: Store,
    run_id: str,
    *,
    on_case: CaseCallback | None = None,
    cache: ResponseCache | None = None,
) -> RunResult:
    """Complete an interrupted run: only its missing cases run, into the same stored run."""
    plan, resume = prepare_resume(store, run_id)
    return await execute(plan, store, on_case=on_case, cache=cache, resume=resume)


def _load(suite: str | Path | LoadedSuite | dict[str, JSON]) -> LoadedSuite:
    if isinstance(suite, LoadedSuite):
        return suite
    if isinstance(suite, dict):
        return parse_suite(suite)
    return load_suite(suite)


async def evaluate_async(
    suite: str | Path | LoadedSuite | dict[str, JSON],
    *,
    config: EvalConfig | None = None,
) -> EvalSummary:
    """Run a suite (a path, a loaded suite, or suite data) and return its full result.

    Raises:
        assay.errors.ConfigError: the suite or project config is invalid.
        assay.errors.UsageError: the target cannot be resolved or set up.
    """
    config = config or EvalConfig()
    loaded = _load(suite)
    project = load_project()
    options = RunOptions(
        threshold=config.threshold,
        concurrency=config.concurrency,
        target=config.target,
        repeat=config.repeat,
        judge_model=config.judge_model,
        judge_base_url=config.judge_base_url,
        baseline=config.baseline,
    )
    cache = open_cache(config.cache_mode)
    try:
        if config.store is False:
            memory = MemorySink()
            run = await run_loaded(loaded, project, options, memory, cache=cache)
            return run.model_copy(update={"results": list(memory.results)})
        store: Store = open_store(config.store, fallback=project.store)
        try:
            run = await run_loaded(loaded, project, options, store, cache=cache)
            return run.model_copy(update={"results": list(store.iter_case_results(run.id))})
        finally:
            store.close()
    finally:
        if cache is not None:
            cache.close()


def evaluate(
    suite: str | Path | LoadedSuite | dict[str, JSON],
    *,
    config: EvalConfig | None = None,
) -> EvalSummary:
    """Synchronous `evaluate_async` (a thin wrapper: one async core, no second code path)."""
    return asyncio.run(evaluate_async(suite, config=config))
