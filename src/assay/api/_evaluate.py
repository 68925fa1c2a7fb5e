"""The Python API: evaluate a suite and get its run result. The CLI calls the same code."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from assay._strict_model import suggest
from assay.api._callables import GraderLike, TargetFunction, TargetLike, as_graders, as_target
from assay.cache import DEFAULT_CACHE_PATH, CacheMode, ResponseCache
from assay.config import (
    LoadedProject,
    LoadedSuite,
    SourceMap,
    TestCase,
    load_project,
    load_suite,
    parse_suite,
)
from assay.errors import UsageError
from assay.graders import Grader
from assay.results import JSON, CaseResult, RunResult
from assay.runner import (
    RayOptions,
    Resume,
    RunOptions,
    RunPlan,
    check_resumable,
    execute,
    plan_for_resume,
    plan_run,
    stored_suite_file,
    track_resumed_run,
)
from assay.store import MemorySink, ResultSink, Store
from assay.targets import Target

__all__ = [
    "CASES_SUITE_NAME",
    "EvalConfig",
    "EvalSummary",
    "SuiteLike",
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
_T = TypeVar("_T")


class EvalConfig(BaseModel):
    """Per-run settings for `evaluate`; each wins over the suite and project config.

    A wrong argument raises `assay.UsageError` (an unknown one with "did you mean"), as a
    wrong command-line option does, not pydantic's `ValidationError`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    def __init__(self, **settings: object) -> None:
        """Raises:
        UsageError: An unknown setting (with the closest known one), or a value out of range.
        """
        try:
            super().__init__(**settings)
        except ValidationError as exc:
            raise UsageError(_config_problems(exc)) from None

    threshold: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    """Case pass threshold; overrides every config level, exactly like `--threshold`."""
    borderline: Annotated[float, Field(ge=0.0, le=1.0)] | Literal["off"] | None = None
    """Lower bound of the borderline verdict band over every config level; "off" turns the
    band off (scores below the threshold fail)."""
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
    cases: tuple[str, ...] = ()
    """Run only cases whose id matches one of these glob patterns, like `--case`."""
    tags: tuple[str, ...] = ()
    """Run only cases with at least one of these tags, like `--tag`."""
    exclude_tags: tuple[str, ...] = ()
    """Skip cases with any of these tags, like `--exclude-tag`."""

    @model_validator(mode="after")
    def _bands_ordered(self) -> EvalConfig:
        if (
            isinstance(self.borderline, float)
            and self.threshold is not None
            and self.borderline > self.threshold
        ):
            raise ValueError(
                f"borderline ({self.borderline}) is above threshold ({self.threshold}); the "
                "borderline band lies below the pass threshold"
            )
        return self


def _config_problems(exc: ValidationError) -> str:
    """`EvalConfig`'s validation errors as one message, each naming its setting."""
    known = set(EvalConfig.model_fields)
    problems: list[str] = []
    for err in exc.errors(include_url=False):
        name = str(err["loc"][0]) if err["loc"] else ""
        if err["type"] == "extra_forbidden":
            problems.append(f"unknown setting '{name}'.{suggest(name, known)}")
            continue
        message = str(err["msg"]).removeprefix("Value error, ")
        given = err.get("input")
        shown = f" (got {given!r})" if isinstance(given, str | int | float) and name else ""
        problems.append(f"{name}: {message}{shown}" if name else message)
    unique = list(dict.fromkeys(problems))
    return f"EvalConfig: {'; '.join(unique)}"


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
    ray: RayOptions | None = None,
    run_id: str | None = None,
    on_set_up: Callable[[], None] | None = None,
) -> RunResult:
    """Execute an already resolved plan into `sink` (the CLI resolves every plan first);
    with `ray`, on a Ray cluster's workers (docs/ray.md). `run_id` names a new run in
    advance (the CLI prints it when the run is interrupted); `on_set_up` is called before
    the first case (see `assay.runner.execute`)."""
    return await execute(
        plan,
        sink,
        on_case=on_case,
        run_id=run_id,
        cache=cache,
        resume=resume,
        ray=ray,
        on_set_up=on_set_up,
    )


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


def prepare_resume(
    store: Store,
    run_id: str,
    *,
    suite: SuiteLike | None = None,
    project: LoadedProject | None = None,
    judge_base_url: str | None = None,
    takeover: bool = False,
    target: Target | TargetFunction | None = None,
    graders: Sequence[GraderLike] = (),
) -> tuple[RunPlan, Resume]:
    """Plan an interrupted run again from the suite on disk, then claim it for this process.

    Nothing that runs code comes from the stored run (it may have been imported): the suite
    is `suite`, else the suite file the run names if it lies under the working directory;
    the project config is `project`, else `assay.yaml` found from the working directory;
    a run `evaluate` was given a target object or function and graders in Python is resumed
    with the same `target` and `graders` again. All must be what the run started with
    (`${VAR}` values compared as written; functions by their `module:qualname`). The claim
    is one atomic status change, so two resumes of one run cannot both run it.

    Args:
        store: Where the run is.
        run_id: The run's id or a unique prefix.
        suite: The run's suite (anything `evaluate` takes).
        project: The project config the run used.
        judge_base_url: The judge endpoint (`--judge-base-url`); must be the run's.
        takeover: Also claim a run still marked running whose process cannot be looked up
            from here (another host, or a run stored without its process); a run whose
            process on this machine is gone is claimed without it.
        target: The target object or function `evaluate(target=...)` was given.
        graders: The graders `evaluate(graders=...)` was given, in the same order.

    Raises:
        UsageError: the run does not exist, completed already, is running in another process
            (without `takeover`), or the suite, project config, target, graders or judge
            endpoint differ from the run's.
    """
    if isinstance(target, str):
        raise UsageError(
            "a resume runs the target the run chose; target= takes only the target object or "
            "function the run was given in Python"
        )
    run = store.get_run(run_id)
    check_resumable(run, owner=store.run_owner(run.id), takeover=takeover)
    snapshot = store.get_snapshot(run.id)
    if suite is None:
        suite = stored_suite_file(run.id, snapshot)
    loaded, _ = _prepare(suite, target, graders, EvalConfig())
    plan = plan_for_resume(
        run.id,
        snapshot,
        loaded,
        project if project is not None else load_project(),
        judge_base_url=judge_base_url,
    )
    track_resumed_run(store, run.id)  # its baseline must still be usable: checked before the claim
    claimed = store.reopen_run(run.id, takeover=takeover)
    return plan, Resume(
        claimed, store.iter_case_results(run.id), lambda: store.iter_case_results(run.id)
    )


async def resume_run(
    store: Store,
    run_id: str,
    *,
    suite: SuiteLike | None = None,
    target: Target | TargetFunction | None = None,
    graders: Sequence[GraderLike] = (),
    on_case: CaseCallback | None = None,
    cache: ResponseCache | None = None,
) -> RunResult:
    """Complete an interrupted run from its suite on disk (see `prepare_resume`): only its
    missing cases run, into the same stored run. A run `evaluate` was given a target or
    graders in Python needs them again: `resume_run(store, run_id, suite=..., graders=[fn])`.
    """
    plan, resume = prepare_resume(store, run_id, suite=suite, target=target, graders=graders)
    return await execute(plan, store, on_case=on_case, cache=cache, resume=resume)


SuiteLike = str | Path | LoadedSuite | dict[str, JSON] | Sequence[dict[str, JSON] | TestCase]
"""What `evaluate` runs: a suite file, a loaded suite, suite data, or a list of test cases."""

CASES_SUITE_NAME = "python-api"
"""The suite name of a run given as a list of test cases."""


def _load(suite: SuiteLike, assertions: Sequence[Grader]) -> LoadedSuite:
    """The suite to run, with `graders=` appended to its default assertions."""
    if isinstance(suite, LoadedSuite):
        if not assertions:
            return suite
        # Re-validated from its canonical document, as `--resume` does, so the added graders
        # are checked against every test like those written in the file.
        again = parse_suite(
            json.loads(suite.document),
            source=SourceMap(default_file=suite.display),
            base_dir=suite.base_dir,
            assertions=assertions,
        )
        return dataclasses.replace(again, warnings=suite.warnings, expansions=suite.expansions)
    if isinstance(suite, dict):
        return parse_suite(_plain(suite), assertions=assertions)
    if isinstance(suite, str | Path):
        return load_suite(suite, assertions=assertions)
    if isinstance(suite, Sequence):
        tests = _plain(list(suite))
        return parse_suite({"name": CASES_SUITE_NAME, "tests": tests}, assertions=assertions)
    raise UsageError(
        f"cannot evaluate {type(suite).__name__}: pass a suite file path, a loaded suite "
        "(assay.load_suite), suite data as a dict, or a list of test cases"
    )


def _plain(value: object) -> JSON:
    """Suite data with the models built in Python (`TestCase`s, grader objects, targets)
    written out as the mappings YAML would give, so one validation path checks everything."""
    if isinstance(value, BaseModel):
        dumped = value.model_dump(mode="json", by_alias=True, exclude_unset=True)
        kind = getattr(value, "type", None)
        return {"type": kind, **dumped} if isinstance(kind, str) else dumped
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _with_target(loaded: LoadedSuite, target: Target) -> LoadedSuite:
    """The suite run against `target`; the snapshot records it as the suite's target."""
    document = json.loads(loaded.document)
    document["target"] = target.model_dump(mode="json", exclude_defaults=True)
    document["target"]["type"] = target.type
    return dataclasses.replace(
        loaded,
        suite=loaded.suite.model_copy(update={"target": target}),
        document=json.dumps(document, ensure_ascii=False, separators=(",", ":")),
    )


def _prepare(
    suite: SuiteLike,
    target: TargetLike | None,
    graders: Sequence[GraderLike],
    config: EvalConfig,
) -> tuple[LoadedSuite, str | None]:
    """The loaded suite with `target=` and `graders=` applied, and the target name to pick."""
    if isinstance(graders, str | bytes | Mapping) or not isinstance(graders, Sequence):
        raise UsageError("graders= takes a list of graders, e.g. graders=[my_check]")
    loaded = _load(suite, as_graders(graders))
    if target is None:
        return loaded, config.target
    if config.target is not None:
        raise UsageError(
            f"target= and EvalConfig(target={config.target!r}) both choose the target; keep one"
        )
    if isinstance(target, str):
        return loaded, target
    return _with_target(loaded, as_target(target)), None


def _options(config: EvalConfig, target: str | None) -> RunOptions:
    return RunOptions(
        threshold=config.threshold,
        borderline=config.borderline,
        concurrency=config.concurrency,
        target=target,
        repeat=config.repeat,
        tags=config.tags,
        exclude_tags=config.exclude_tags,
        cases=config.cases,
        judge_model=config.judge_model,
        judge_base_url=config.judge_base_url,
        baseline=config.baseline,
    )


async def evaluate_async(
    suite: SuiteLike,
    *,
    target: TargetLike | None = None,
    graders: Sequence[GraderLike] = (),
    config: EvalConfig | None = None,
    on_case: CaseCallback | None = None,
) -> EvalSummary:
    """Run a suite and return its full result (the SPEC §8 document, with every case).

    Args:
        suite: A suite file path, a loaded suite (`assay.load_suite`), suite data as a dict,
            or a list of test cases (dicts in the suite's `tests:` format, or `TestCase`s).
        target: The system under test, over the suite's `target`: a target name, a `Target`
            object, or a function called like a `python` target's (`fn(case)`, sync or async,
            returning a string or the structured output mapping).
        graders: Graders appended to the suite-level `assertions` (every test gets them unless
            it sets `execution.skip_defaults`): grader objects (`assay.graders.Contains(...)`),
            mappings written like YAML assertions, or functions called like an in-process
            `code-grader` (`fn(context)`, returning a number, a boolean or a result mapping).
        config: Per-run settings; each wins over the suite and project config.
        on_case: Called with each case result as it finishes.

    Raises:
        assay.errors.ConfigError: the suite or project config is invalid.
        assay.errors.UsageError: the target cannot be resolved or set up, or an argument is
            not one of the accepted kinds.
    """
    config = config or EvalConfig()
    loaded, target_name = _prepare(suite, target, graders, config)
    project = load_project()
    options = _options(config, target_name)
    cache = open_cache(config.cache_mode)
    try:
        if config.store is False:
            memory = MemorySink()
            run = await run_loaded(loaded, project, options, memory, on_case=on_case, cache=cache)
            return run.model_copy(update={"results": list(memory.results)})
        from assay.store import open_store  # SQLAlchemy loads when a store is opened

        store: Store = open_store(config.store, fallback=project.store)
        try:
            run = await run_loaded(loaded, project, options, store, on_case=on_case, cache=cache)
            return run.model_copy(update={"results": list(store.iter_case_results(run.id))})
        finally:
            store.close()
    finally:
        if cache is not None:
            cache.close()


def evaluate(
    suite: SuiteLike,
    *,
    target: TargetLike | None = None,
    graders: Sequence[GraderLike] = (),
    config: EvalConfig | None = None,
    on_case: CaseCallback | None = None,
) -> EvalSummary:
    """Synchronous `evaluate_async` (a thin wrapper: one async core, no second code path).

    Call `evaluate_async` instead from code already running an event loop (a notebook, an
    async web handler): this wrapper starts its own loop.

    Raises:
        assay.errors.UsageError: called while an event loop is running in this thread.
    """
    return run_sync(
        lambda: evaluate_async(
            suite, target=target, graders=graders, config=config, on_case=on_case
        ),
        "evaluate",
    )


def run_sync(start: Callable[[], Coroutine[object, object, _T]], name: str) -> _T:
    """Run the coroutine `start` makes in a new event loop: the sync face of `assay.<name>`.

    Raises:
        UsageError: an event loop is already running in this thread (use the async form).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(start())
    raise UsageError(
        f"assay.{name}() was called inside a running event loop; "
        f"use `await assay.{name}_async(...)` there"
    )
