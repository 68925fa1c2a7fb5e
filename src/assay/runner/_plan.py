"""Resolve a loaded suite into an executable plan: target, thresholds, graders per case."""

from __future__ import annotations

import bisect
import dataclasses
import fnmatch
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar, overload

from assay.config import (
    InputMessage,
    LoadedProject,
    LoadedSuite,
    SuiteTests,
    TestCase,
    TestExecution,
    Workspace,
    case_graders,
)
from assay.errors import ConfigError, ConfigIssue, UsageError
from assay.graders import ExpectedOutcomes, Grader
from assay.judge import JudgeSpec, judge_from_env, merge_judges
from assay.providers import DEFAULT_MAX_RETRIES
from assay.results import JSON, Message, RunConfigSnapshot
from assay.runner._regression import RegressionSettings, regression_settings
from assay.scoring import (
    DEFAULT_CASES_PASS_THRESHOLD,
    DEFAULT_METRICS_PASS_THRESHOLD,
    AggregatorSpec,
    BorderlineLevel,
    CaseBands,
    RepeatStrategy,
    WeightedAverage,
    resolve_borderline,
    resolve_threshold,
)
from assay.targets import Target, TargetRequest

__all__ = [
    "DEFAULT_CONCURRENCY",
    "CasePlan",
    "RunOptions",
    "RunPlan",
    "check_api_keys",
    "iter_cases",
    "missing_keys",
    "plan_run",
]

_T = TypeVar("_T")

_DEFAULT_AGGREGATOR = WeightedAverage()
"""Shared by every case without an aggregator of its own (models are immutable)."""

DEFAULT_CONCURRENCY = 8


@dataclass(frozen=True)
class RunOptions:
    """Per-run overrides from the CLI or `EvalConfig`; each wins over every config file."""

    threshold: float | None = None
    borderline: BorderlineLevel = None
    """The borderline bound over every config level (`EvalConfig.borderline`); "off" disables
    the band."""
    concurrency: int | None = None
    judge_concurrency: int | None = None
    """Judge calls at once (`--judge-concurrency`), over the suite's `judge_concurrency`."""
    target: str | None = None
    repeat: int | None = None
    tags: tuple[str, ...] = ()
    """Run only cases with at least one of these tags."""
    exclude_tags: tuple[str, ...] = ()
    """Skip cases with any of these tags."""
    cases: tuple[str, ...] = ()
    """Run only cases whose id matches one of these glob patterns."""
    judge_model: str | None = None
    """The judge model of every judged grader (`--judge-model`), over every config file."""
    judge_base_url: str | None = None
    """The judge endpoint (`--judge-base-url`), over every config file."""
    baseline: str | None = None
    """Measure the run against this baseline (`--baseline`): `last_passing`, `pinned` or a
    run id; over the suite's `regression.baseline`, and enables the metric without it."""
    keep_workspaces: Literal["never", "on_failure", "always"] | None = None
    """Which case workspaces outlive their case (`--keep-workspaces`), over every
    `workspace.keep` of the suite."""

    @property
    def selecting(self) -> bool:
        """Whether any selection flag is given (without one, every test runs)."""
        return bool(self.tags or self.exclude_tags or self.cases)

    def selects(self, test: TestCase) -> bool:
        """Whether the selection flags keep this test."""
        if self.tags and not set(self.tags) & set(test.tags):
            return False
        if self.exclude_tags and set(self.exclude_tags) & set(test.tags):
            return False
        return not self.cases or any(fnmatch.fnmatchcase(test.id, p) for p in self.cases)

    def snapshot(self) -> dict[str, JSON]:
        """The options as stored with the run, so `--resume` plans exactly the same run."""
        return dataclasses.asdict(self)


@dataclass(frozen=True, slots=True)
class CasePlan:
    """Everything needed to run and grade one test case."""

    test: TestCase
    graders: tuple[Grader, ...]
    """The test's graders then the suite defaults; for conversations, applied to every turn."""
    turn_graders: tuple[tuple[Grader, ...], ...]
    """Per turn of a conversation: the turn's own graders (run before `graders`)."""
    bands: CaseBands
    aggregator: AggregatorSpec
    repeat: int
    repeat_strategy: RepeatStrategy
    timeout_s: float | None
    outcomes: ExpectedOutcomes | None = None
    """The test's expected outcomes, judged with every sample (SPEC §5.4)."""
    turn_outcomes: tuple[ExpectedOutcomes | None, ...] = ()
    """Per turn of a conversation: that turn's expected outcomes."""
    rejudge: int = 0
    """Re-asks of the judge when a sample scores in the borderline band."""
    stop_when: tuple[Grader, ...] = ()
    """A simulated conversation's `stop_when` graders, run on every agent reply."""
    workspace: Workspace | None = None
    """The case's workspace settings (the test's keys over the suite's), or None."""

    def request(
        self,
        base_dir: Path,
        repeat_index: int,
        turn_input: str | list[InputMessage] | None = None,
        history: tuple[Message, ...] = (),
        workspace: Path | None = None,
    ) -> TargetRequest:
        """The target call for one sample (and, in a conversation, one turn) of this case."""
        test = self.test
        given = turn_input if turn_input is not None else test.input
        if isinstance(given, str):
            new: tuple[Message, ...] = (Message(role="user", content=given),)
        else:
            new = tuple(Message(role=m.role, content=m.wire_content()) for m in given or [])
        messages = history + new
        raw_input: JSON = (
            given
            if isinstance(given, str) and not history
            else [m.model_dump(exclude_defaults=True) for m in messages]
        )
        return TargetRequest(
            case_id=test.id,
            input=raw_input,
            messages=messages,
            metadata=dict(test.metadata),
            repeat_index=repeat_index,
            base_dir=base_dir,
            workspace=workspace,
        )


@dataclass(frozen=True)
class RunPlan:
    """A suite resolved against the project config and the run options."""

    loaded: LoadedSuite
    project: LoadedProject
    options: RunOptions
    target: Target
    target_name: str
    target_base_dir: Path
    concurrency: int
    """The configured target concurrency (the adaptive limit starts here)."""
    judge_concurrency: int
    max_retries: int
    config: RunConfigSnapshot
    judge_base: JudgeSpec | None = None
    """The project's and the suite's `judge:` merged (graders' own settings go over it)."""
    judge_forced: JudgeSpec | None = None
    """The environment's and the command line's judge settings (over everything)."""
    cases: Sequence[CasePlan] = field(default=())
    """The selected cases in suite order; each plan is built when it is read."""
    regression: RegressionSettings | None = None
    """The regression metric's settings; None when the run is not measured against a
    baseline."""
    target_at: TargetAt = ("", None, "target")
    """Where the target is defined, for messages about it."""

    @property
    def default_judge(self) -> JudgeSpec | None:
        """The judge of graders without their own settings (None: no level sets any)."""
        return merge_judges(self.judge_base, self.judge_forced)

    @property
    def simulator(self) -> JudgeSpec | None:
        """The model playing the user of `simulate:` tests: the suite's `simulator:` over
        the default judge's settings (None: no level sets a model)."""
        spec = merge_judges(self.judge_base, self.judge_forced, self.loaded.suite.simulator)
        return spec if spec is not None and spec.model else None

    @property
    def suite_name(self) -> str:
        """The suite's name."""
        return self.loaded.suite.name


TargetAt = tuple[str, int | None, str]
"""Where the run's target is defined: file, line, YAML path (`targets.bot`)."""


def _resolve_target(
    loaded: LoadedSuite, project: LoadedProject, override: str | None
) -> tuple[str, Target, Path, TargetAt]:
    suite = loaded.suite
    choice = override if override is not None else suite.target
    if choice is None:
        choice = project.config.target
    lookup = loaded.agentv_targets
    if choice is None and lookup is not None:
        raise lookup.unknown("default", loaded.display, loaded.key_lines.get("target"))
    if choice is None:
        raise UsageError(
            f"{loaded.display}: no target. Set `target:` in the suite or in assay.yaml, "
            "or pass --target NAME"
        )
    if isinstance(choice, Target):
        at = (loaded.display, loaded.key_lines.get("target"), "target")
        return choice.describe(), choice, loaded.base_dir, at
    if choice in suite.targets:
        path = f"targets.{choice}"
        at = (loaded.display, loaded.key_lines.get(path), path)
        if lookup is not None:  # a target of an AgentV targets file is located there
            at = lookup.defined.get(choice, at)
        return choice, suite.targets[choice], loaded.base_dir, at
    if choice in project.config.targets:
        path = f"targets.{choice}"
        at = (project.display, project.key_lines.get(path), path)
        return choice, project.config.targets[choice], project.base_dir, at
    if lookup is not None:
        raise lookup.unknown(choice, loaded.display, loaded.key_lines.get("target"))
    known = sorted({*suite.targets, *project.config.targets})
    hint = f" Known targets: {', '.join(known)}." if known else " Define it under `targets:`."
    raise UsageError(f"{loaded.display}: unknown target '{choice}'.{hint}")


def _check_target(target: Target, base_dir: Path, at: TargetAt) -> None:
    """Refuse now, located where the target is defined, what its set-up would refuse (a
    python target's missing function, a missing replay file): planning is what `assay run`
    does for every suite before running any, and what `assay validate` does."""
    try:
        target.check(base_dir)
    except UsageError as exc:
        raise ConfigError([ConfigIssue(*at, str(exc))]) from None


def _case_bands(
    loaded: LoadedSuite,
    project: LoadedProject,
    options: RunOptions,
    test_exec: TestExecution | None,
) -> CaseBands:
    """The threshold and borderline bound in force for one test (SPEC §1 resolution order)."""
    suite_exec = loaded.suite.execution
    project_cfg = project.config
    threshold = resolve_threshold(
        cli=options.threshold,
        test=test_exec.threshold_level() if test_exec else None,
        suite=suite_exec.threshold_level(),
        project=project_cfg.threshold_level(),
    )
    borderline = resolve_borderline(
        cli=options.borderline,
        test=test_exec.borderline_level() if test_exec else None,
        suite=suite_exec.borderline_level(),
        project=project_cfg.borderline_level(),
    )
    return CaseBands(threshold, borderline)


@dataclass(frozen=True, slots=True)
class _CaseSettings:
    """What a case takes from its test's `execution`, the suite's, the project and the run
    options. Worked out once for every test without its own `execution` (most of them)."""

    bands: CaseBands
    aggregator: AggregatorSpec
    repeat: int
    repeat_strategy: RepeatStrategy
    timeout_s: float | None
    rejudge: int


def _case_settings(
    loaded: LoadedSuite,
    project: LoadedProject,
    options: RunOptions,
    test_exec: TestExecution | None,
) -> _CaseSettings:
    suite_exec = loaded.suite.execution

    def pick(name: str, default: _T) -> _T:
        for level in (test_exec, suite_exec):
            value = getattr(level, name, None) if level is not None else None
            if value is not None:
                return value  # type: ignore[no-any-return]
        return default

    return _CaseSettings(
        bands=_case_bands(loaded, project, options, test_exec),
        aggregator=pick("aggregator", _DEFAULT_AGGREGATOR),
        repeat=options.repeat or pick("repeat", 1),
        repeat_strategy=pick("repeat_strategy", "mean"),
        timeout_s=pick("timeout_s", None),
        rejudge=pick("rejudge_borderline", 0),
    )


def _plan_case(
    loaded: LoadedSuite,
    project: LoadedProject,
    options: RunOptions,
    index: int,
    suite_settings: _CaseSettings,
) -> CasePlan:
    test = loaded.suite.tests[index]
    settings = (
        suite_settings
        if test.execution is None
        else _case_settings(loaded, project, options, test.execution)
    )
    return CasePlan(
        test=test,
        graders=tuple(g for g, _ in case_graders(loaded.suite, index, test)),
        turn_graders=tuple(tuple(turn.assertions) for turn in test.turns or ()),
        bands=settings.bands,
        aggregator=settings.aggregator,
        repeat=settings.repeat,
        repeat_strategy=settings.repeat_strategy,
        timeout_s=settings.timeout_s,
        outcomes=_outcomes(test.expected_outcomes),
        turn_outcomes=tuple(_outcomes(turn.expected_outcomes) for turn in test.turns or ()),
        rejudge=settings.rejudge,
        stop_when=tuple(test.simulate.stop_when) if test.simulate else (),
        workspace=_workspace(loaded.suite.workspace, test.workspace, options.keep_workspaces),
    )


def _workspace(
    suite: Workspace | None, test: Workspace | None, keep: str | None
) -> Workspace | None:
    """The test's workspace keys over the suite's (AgentV's rule: a test's key replaces the
    suite's, `hooks` as a whole); `keep` (the command line's) over both."""
    if suite is None or test is None:
        merged = test or suite
    else:
        merged = suite.model_copy(update={k: getattr(test, k) for k in test.model_fields_set})
    if merged is None or keep is None:
        return merged
    return merged.model_copy(update={"keep": keep})


def _outcomes(statements: list[str]) -> ExpectedOutcomes | None:
    return ExpectedOutcomes(statements=statements) if statements else None


def _judges(
    loaded: LoadedSuite, project: LoadedProject, options: RunOptions, target_name: str
) -> tuple[JudgeSpec | None, JudgeSpec | None]:
    """(base, forced) judge settings; a configuration error when the suite relies on the
    default judge and no level gives it a model, unless the suite is an AgentV file whose
    target AgentV itself has no grader for until run time (its graders then error there)."""
    lookup = loaded.agentv_targets
    suite_judge = loaded.suite.judge
    other = lookup.judge_for(target_name) if lookup is not None else None
    if other is not None:  # another target of an AgentV file: AgentV grades it with its grader
        suite_judge = JudgeSpec.model_validate(other) if other else None
    base = merge_judges(project.config.judge, suite_judge)
    given = {"model": options.judge_model, "base_url": options.judge_base_url}
    flags = {k: v for k, v in given.items() if v}
    forced = merge_judges(judge_from_env(), JudgeSpec.model_validate(flags) if flags else None)
    resolved = merge_judges(base, forced)
    deferred = lookup is not None and lookup.judge_deferred(target_name)
    if loaded.needs_judge and (resolved is None or resolved.model is None) and not deferred:
        raise ConfigError(list(loaded.needs_judge))
    return base, forced


def missing_keys(plan: RunPlan) -> list[str]:
    """The API keys the run needs and the environment lacks, one message each: the default
    judge's (when it talks to the provider's own endpoint; one with its own `base_url` may
    need none) and the target's. `run` stops on them, `validate` warns."""
    problems: list[str] = []
    judge = plan.default_judge
    variable = judge.resolved_api_key_env if judge else None
    if (
        plan.loaded.needs_judge
        and judge is not None
        and not judge.base_url
        and variable
        and not os.environ.get(variable)
    ):
        problems.append(
            str(
                ConfigIssue(
                    *_judge_at(plan),
                    f"the judge {judge.model} reads its API key from {variable}, which is not "
                    "set; export it, or name another variable in the judge's `api_key_env`",
                )
            )
        )
    target = plan.target.missing_key()
    if target is not None:
        problems.append(str(ConfigIssue(*plan.target_at, target)))
    return problems


def _judge_at(plan: RunPlan) -> TargetAt:
    """Where the default judge's key variable is set (the suite's, then assay.yaml's
    `judge.api_key_env`), else where the judge is (`judge`); the suite file when neither sets
    it (the judge comes from flags or the environment)."""
    files = (
        (plan.loaded.display, plan.loaded.key_lines),
        (plan.project.display, plan.project.key_lines),
    )
    for path in ("judge.api_key_env", "judge"):
        for display, lines in files:
            if path in lines:
                return (display, lines[path], path)
    return (plan.loaded.display, None, "")


def check_api_keys(plan: RunPlan) -> None:
    """Stop a run before any case when the judge or the target lacks its API key.

    Raises:
        UsageError: A key's environment variable is not set (every missing one named).
    """
    problems = missing_keys(plan)
    if problems:
        raise UsageError("\n".join(problems))


def plan_run(loaded: LoadedSuite, project: LoadedProject, options: RunOptions) -> RunPlan:
    """Resolve the target, the thresholds in force and every case's plan.

    Raises:
        UsageError: no target, or an unknown target name.
        ConfigError: judged graders or expected outcomes and no judge configured anywhere.
    """
    target_name, target, base_dir, target_at = _resolve_target(loaded, project, options.target)
    _check_target(target, base_dir, target_at)
    suite_exec = loaded.suite.execution
    project_cfg = project.config
    tests = loaded.suite.tests
    suite_settings = _case_settings(loaded, project, options, None)
    cases = _CasePlans(
        lambda index: _plan_case(loaded, project, options, index, suite_settings),
        tuple(i for i, t in enumerate(tests) if options.selects(t))
        if options.selecting
        else range(len(tests)),  # every test, without building one
    )
    if not cases:
        raise UsageError(
            f"{loaded.display}: no test matches the selection (--tag / --exclude-tag / --case)"
        )
    suite_bands = suite_settings.bands
    config = RunConfigSnapshot(
        threshold=suite_bands.threshold,
        borderline=suite_bands.borderline,
        metrics_pass_threshold=_first(
            suite_exec.metrics_pass_threshold,
            project_cfg.metrics_pass_threshold,
            DEFAULT_METRICS_PASS_THRESHOLD,
        ),
        cases_pass_threshold=_first(
            suite_exec.cases_pass_threshold,
            project_cfg.cases_pass_threshold,
            DEFAULT_CASES_PASS_THRESHOLD,
        ),
        threshold_override=options.threshold,
        case_thresholds={
            test.id: bands.threshold
            for test in _with_execution(tests, cases.indices)
            if (bands := _case_bands(loaded, project, options, test.execution)).threshold
            != suite_bands.threshold
        },
    )
    concurrency = options.concurrency or suite_exec.concurrency or DEFAULT_CONCURRENCY
    judge_base, judge_forced = _judges(loaded, project, options, target_name)
    return RunPlan(
        loaded=loaded,
        project=project,
        options=options,
        target=target,
        target_name=target_name,
        target_base_dir=base_dir,
        target_at=target_at,
        concurrency=concurrency,
        judge_concurrency=options.judge_concurrency
        or suite_exec.judge_concurrency
        or DEFAULT_CONCURRENCY,
        max_retries=_first_int(suite_exec.max_retries, DEFAULT_MAX_RETRIES),
        config=config,
        cases=cases,
        judge_base=judge_base,
        judge_forced=judge_forced,
        regression=regression_settings(loaded, options.baseline),
    )


def _with_execution(tests: Sequence[TestCase], selected: Sequence[int]) -> Iterator[TestCase]:
    """The selected tests with their own `execution` settings, in suite order: the only ones
    whose threshold can differ from the suite's. A loaded suite knows which they are, so the
    others are not built."""
    if not isinstance(tests, SuiteTests):
        yield from (tests[i] for i in selected)
        return
    for index in tests.with_execution:
        position = bisect.bisect_left(selected, index)
        if position < len(selected) and selected[position] == index:
            yield tests[index]


PLAN_AHEAD = 64
"""Cases planned together when a run takes its next case. Planning rebuilds each test from
its JSON text; one at a time, between the replies the event loop handles, that cost ~52 µs a
case (the validators' code and data gone cold), 64 in a row ~25 µs (5,000 judged cases: 0.13 s
less CPU). The plans wait in a list: a run holds at most this many more than it has in
flight."""


class _CasePlans(Sequence[CasePlan]):
    """The cases of a run, each `CasePlan` built when read and not kept.

    A run holds one plan per case in flight instead of one per case of the suite, so memory
    does not grow with the number of cases.
    """

    def __init__(self, build: Callable[[int], CasePlan], indices: Sequence[int]) -> None:
        self._build = build
        self.indices = indices
        """Positions in the suite's `tests` of the selected cases, in order (a `range` when
        every test is selected: no int per case)."""

    def __len__(self) -> int:
        return len(self.indices)

    @overload
    def __getitem__(self, position: int) -> CasePlan: ...

    @overload
    def __getitem__(self, position: slice) -> Sequence[CasePlan]: ...

    def __getitem__(self, position: int | slice) -> CasePlan | Sequence[CasePlan]:
        if isinstance(position, slice):
            return _CasePlans(self._build, self.indices[position])
        return self._build(self.indices[position])

    def __iter__(self) -> Iterator[CasePlan]:
        indices = self.indices
        for start in range(0, len(indices), PLAN_AHEAD):
            yield from [self._build(index) for index in indices[start : start + PLAN_AHEAD]]


def _first_int(value: int | None, default: int) -> int:
    return default if value is None else value


def _first(*values: float | None) -> float:
    for value in values:
        if value is not None:
            return value
    raise ValueError("no value")  # pragma: no cover — callers end with a default


def iter_cases(plan: RunPlan, skip: set[str] | None = None) -> Iterator[tuple[int, CasePlan]]:
    """The cases to run with their positions in the plan, in suite order, without those
    already done (for resume); the Ray executor names cases to its workers by position."""
    for index, case in enumerate(plan.cases):
        if skip is None or case.test.id not in skip:
            yield index, case
