"""The Python API: evaluate a suite and get its run result. The CLI calls the same code."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from assay.config import LoadedProject, LoadedSuite, load_project, load_suite, parse_suite
from assay.results import JSON, CaseResult, RunResult
from assay.runner import RunOptions, RunPlan, execute, plan_run
from assay.store import MemorySink, ResultSink, Store, open_store

__all__ = ["EvalConfig", "EvalSummary", "evaluate", "evaluate_async", "run_loaded", "run_plan"]

EvalSummary = RunResult
"""The result of `evaluate`: the SPEC §8 run result with every case result."""


class EvalConfig(BaseModel):
    """Per-run settings for `evaluate`; each wins over the suite and project config."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    threshold: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    """Case pass threshold; overrides every config level, exactly like `--threshold`."""
    concurrency: Annotated[int, Field(ge=1)] | None = None
    """How many cases run at once."""
    target: str | None = None
    """Target name to run against, overriding the suite's `target`."""
    store: str | Literal[False] | None = None
    """Where the run is stored: a path or URL, None for the project default, False for memory."""


async def run_loaded(
    loaded: LoadedSuite,
    project: LoadedProject,
    options: RunOptions,
    sink: ResultSink,
    *,
    on_case: Callable[[CaseResult], None] | None = None,
) -> RunResult:
    """Plan and execute one loaded suite into `sink` (results are not kept in memory)."""
    return await execute(plan_run(loaded, project, options), sink, on_case=on_case)


async def run_plan(
    plan: RunPlan,
    sink: ResultSink,
    *,
    on_case: Callable[[CaseResult], None] | None = None,
) -> RunResult:
    """Execute an already resolved plan into `sink` (the CLI resolves every plan first)."""
    return await execute(plan, sink, on_case=on_case)


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
        threshold=config.threshold, concurrency=config.concurrency, target=config.target
    )
    if config.store is False:
        memory = MemorySink()
        run = await run_loaded(loaded, project, options, memory)
        return run.model_copy(update={"results": list(memory.results)})
    store: Store = open_store(config.store or project.store)
    try:
        run = await run_loaded(loaded, project, options, store)
        return run.model_copy(update={"results": list(store.iter_case_results(run.id))})
    finally:
        store.close()


def evaluate(
    suite: str | Path | LoadedSuite | dict[str, JSON],
    *,
    config: EvalConfig | None = None,
) -> EvalSummary:
    """Synchronous `evaluate_async` (a thin wrapper: one async core, no second code path)."""
    return asyncio.run(evaluate_async(suite, config=config))
