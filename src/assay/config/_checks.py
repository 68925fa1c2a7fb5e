"""Checks that span fields, run after the models validate: ids, references, gradeability."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from assay.config._suite import Suite, TestCase
from assay.config._workspace import Workspace
from assay.config._yaml import Located, LocPath, SourceMap
from assay.errors import ConfigIssue
from assay.graders import Grader, Rubrics, TestFacts
from assay.graders._kinds import is_composite
from assay.scoring import SafetyGate

__all__ = ["NEEDS_JUDGE", "SuiteChecker", "case_graders", "check_suite"]


def case_graders(
    suite: Suite, index: int, test: TestCase | None = None
) -> list[tuple[Grader, LocPath]]:
    """Test `index`'s graders in run order (its own, its `rubrics`, then the suite defaults)
    with their paths. Pass `test` when it is at hand: reading `suite.tests[index]` builds it."""
    test = suite.tests[index] if test is None else test
    graders: list[tuple[Grader, LocPath]] = [
        (g, ("tests", index, "assertions", i)) for i, g in enumerate(test.assertions)
    ]
    if test.rubrics:
        rubric = Rubrics(type="rubrics", name="rubrics", rubrics=test.rubrics)
        graders.append((rubric, ("tests", index, "rubrics")))
    skip = test.execution.skip_defaults if test.execution else None
    if skip is None:
        skip = suite.execution.skip_defaults
    if not skip:
        graders += [(g, ("assertions", i)) for i, g in enumerate(suite.assertions)]
    return graders


def _gate_names(grader: Grader, path: LocPath) -> list[tuple[LocPath, str]]:
    """A composite's `safety_gate` names that none of its members has, at any depth."""
    problems: list[tuple[LocPath, str]] = []
    if is_composite(grader):
        members = {m.display_name for m in grader.assertions}
        if isinstance(grader.aggregator, SafetyGate):
            problems += [
                ((*path, "aggregator", "required"), f"no member grader is named '{name}'")
                for name in grader.aggregator.required
                if name not in members
            ]
        for i, member in enumerate(grader.assertions):
            problems += _gate_names(member, (*path, "assertions", i))
    return problems


_Prepared = tuple[list[tuple[Grader, LocPath, bool]], list[tuple[LocPath, str]]]
"""A grader's leaves (with whether each relies on the default judge) and its gate-name
problems: what its checks need that does not depend on the test."""


def _prepare(grader: Grader, path: LocPath, prepared: dict[LocPath, _Prepared]) -> _Prepared:
    """`_Prepared` for a grader; a suite-level one (the same object for every test, at the
    same path) is worked out once: a 100,000-test suite checked them 100,000 times."""
    suite_level = path[0] == "assertions"
    if suite_level and path in prepared:
        return prepared[path]
    leaves = [(leaf, where, _wants_default_judge(leaf)) for leaf, where in _leaves(grader, path)]
    result = (leaves, _gate_names(grader, path))
    if suite_level:
        prepared[path] = result
    return result


def _leaves(grader: Grader, path: LocPath) -> list[tuple[Grader, LocPath]]:
    """The grader, or a composite's members at any depth, with their paths."""
    if is_composite(grader):
        members = [
            leaf
            for i, member in enumerate(grader.assertions)
            for leaf in _leaves(member, (*path, "assertions", i))
        ]
        # a composite whose aggregator asks the judge needs one itself
        return [(grader, path), *members] if grader.wants_default_judge else members
    return [(grader, path)]


NEEDS_JUDGE = (
    "needs an LLM judge and none is configured: set `judge: {model: ...}` in the suite or in "
    "assay.yaml, pass --judge-model, or export ASSAY_JUDGE_MODEL"
)
"""The message of a judged grader (or expected outcomes) when the run has no judge."""
NEEDS_SIMULATOR = (
    "needs a model to play the user and none is configured: set `simulator: {model: ...}` "
    "(or `judge: {model: ...}`, which it defaults to) in the suite, or pass --judge-model"
)
"""The message of a `simulate:` test when neither the simulator nor the judge has a model."""

_MAX_JUDGE_PLACES = 5


def _wants_default_judge(grader: Grader) -> bool:
    """Whether a grader needs a judge and does not name its own (`Grader.wants_default_judge`)."""
    return grader.wants_default_judge


class SuiteChecker:
    """`check_suite` one test at a time, for tests checked as they stream in at load.

    Only the first location of each test id is kept between tests (for the duplicate-id
    message), not the tests.
    """

    def __init__(self, suite: Suite, suite_dir: Path | None = None) -> None:
        """`suite` gives the suite-level settings; its `tests` are not read."""
        self.suite = suite
        self.suite_dir = suite_dir
        self.issues: list[ConfigIssue] = []
        self._judged: dict[LocPath, ConfigIssue] = {}
        self._first_seen: dict[str, Located] = {}
        self._prepared: dict[LocPath, _Prepared] = {}

    def add(self, test: TestCase, index: int, source: SourceMap) -> None:
        """Check test `index`; `source` locates its paths (`tests[index]...`)."""
        first = self._first_seen.get(test.id)
        if first is not None:
            self.issues.append(
                source.issue(
                    ("tests", index, "id"),
                    f"duplicate test id '{test.id}' (first used at {first.file}:{first.line}); "
                    "test ids must be unique within a suite",
                )
            )
        else:
            self._first_seen[test.id] = source.locate(("tests", index, "id"))
        self.issues += _check_test(
            self.suite,
            test,
            index,
            source,
            suite_dir=self.suite_dir,
            judged=self._judged,
            prepared=self._prepared,
        )

    def suite_issues(self, source: SourceMap) -> list[ConfigIssue]:
        """Problems of the suite's own settings that only the file system can tell (`source`
        locates the suite file's paths)."""
        return workspace_issues(self.suite.workspace, ("workspace",), source, self.suite_dir)

    def needs_judge(self, source: SourceMap) -> list[ConfigIssue]:
        """The first few places that rely on the default judge (`source` locates the note
        that there are more)."""
        places = list(self._judged.values())[:_MAX_JUDGE_PLACES]
        if len(self._judged) > _MAX_JUDGE_PLACES:
            places.append(source.issue((), "more graders or expected outcomes need a judge too"))
        return places


def workspace_issues(
    workspace: Workspace | None, path: LocPath, source: SourceMap, suite_dir: Path | None
) -> list[ConfigIssue]:
    """A workspace template, local repository or hook directory that does not exist, found at
    load time rather than as an error of every case."""
    if workspace is None or suite_dir is None:
        return []
    issues: list[ConfigIssue] = []
    if workspace.template is not None and not (suite_dir / workspace.template).is_dir():
        issues.append(
            source.issue(
                (*path, "template"),
                f"workspace template '{workspace.template}' is not a directory (looked at "
                f"{suite_dir / workspace.template}); give a directory relative to the suite",
            )
        )
    for i, repo in enumerate(workspace.repos):
        local = repo.repo.startswith(("./", "../", "/"))
        if local and not (suite_dir / repo.repo).is_dir():
            issues.append(
                source.issue(
                    (*path, "repos", i, "repo"),
                    f"repository '{repo.repo}' is not a directory (looked at "
                    f"{suite_dir / repo.repo})",
                )
            )
    hooks = workspace.hooks
    for name in ("before_all", "before_each", "after_each", "after_all"):
        hook = getattr(hooks, name) if hooks is not None else None
        if hook is not None and hook.cwd is not None and not (suite_dir / hook.cwd).is_dir():
            issues.append(
                source.issue(
                    (*path, "hooks", name, "cwd"),
                    f"hook directory '{hook.cwd}' does not exist (looked at "
                    f"{suite_dir / hook.cwd})",
                )
            )
    return issues


def check_suite(
    suite: Suite, source: SourceMap, suite_dir: Path | None = None
) -> tuple[list[ConfigIssue], list[ConfigIssue]]:
    """Cross-field problems of a validated suite, each located; and the places that need the
    default judge (the first few), which are problems only if the run ends up without one."""
    checker = SuiteChecker(suite, suite_dir)
    for index, test in enumerate(suite.tests):
        checker.add(test, index, source)
    return checker.issues + checker.suite_issues(source), checker.needs_judge(source)


def _check_test(
    suite: Suite,
    test: TestCase,
    index: int,
    source: SourceMap,
    *,
    suite_dir: Path | None,
    judged: dict[LocPath, ConfigIssue],
    prepared: dict[LocPath, _Prepared],
) -> list[ConfigIssue]:
    """One test's problems; records where it relies on the default judge in `judged` (located
    now: a streamed test's locations are gone once the next test is read). What does not
    depend on the test is worked out once per suite-level grader, in `prepared`."""
    path: LocPath = ("tests", index)
    issues: list[ConfigIssue] = []
    if test.workspace is not None:
        issues += workspace_issues(test.workspace, (*path, "workspace"), source, suite_dir)
    graders = case_graders(suite, index, test)
    every_turn = graders  # a turn is graded by its own graders and these, not other turns'
    for turn_index, turn in enumerate(test.turns or []):
        turn_graders: list[tuple[Grader, LocPath]] = [
            (g, (*path, "turns", turn_index, "assertions", i))
            for i, g in enumerate(turn.assertions)
        ]
        if turn.expected_outcomes:
            _record_judge(judged, source, (*path, "turns", turn_index, "expected_outcomes"))
        elif not any(g.weight > 0 for g, _ in turn_graders + every_turn):
            issues.append(
                source.issue(
                    (*path, "turns", turn_index),
                    f"turn {turn_index} of test '{test.id}' has nothing to grade: add "
                    "`assertions` with weight > 0 to the turn, the test or the suite",
                )
            )
        graders = graders + turn_graders
    if test.expected_outcomes:
        _record_judge(judged, source, (*path, "expected_outcomes"))
    elif test.turns is None and not any(g.weight > 0 for g, _ in graders):
        issues.append(
            source.issue(
                path,
                f"test '{test.id}' has nothing to grade: add `assertions` with weight > 0, "
                "`expected_outcomes` (or suite-level `assertions`)",
            )
        )
    if test.simulate is not None:
        graders = graders + _simulator_needs(suite, test, path, source, judged)
    issues += _grader_issues(
        graders, test, source, suite_dir=suite_dir, judged=judged, prepared=prepared
    )
    aggregator = test.execution.aggregator if test.execution else None
    aggregator = aggregator or suite.execution.aggregator
    if isinstance(aggregator, SafetyGate):
        names = {g.display_name for g, _ in graders}
        where = (
            (*path, "execution") if test.execution and test.execution.aggregator else ("execution",)
        )
        issues += [
            source.issue(
                (*where, "aggregator", "required"),
                f"test '{test.id}' has no grader named '{name}'",
            )
            for name in aggregator.required
            if name not in names
        ]
    return issues


def _grader_issues(
    graders: list[tuple[Grader, LocPath]],
    test: TestCase,
    source: SourceMap,
    *,
    suite_dir: Path | None,
    judged: dict[LocPath, ConfigIssue],
    prepared: dict[LocPath, _Prepared],
) -> list[ConfigIssue]:
    """The graders' problems with `test` and their gate names; records where they rely on the
    default judge. Every test of a large dataset is checked, so the test's facts are built
    only for a grader type that checks tests, and a plain grader of the test's own is taken
    as its only leaf without `_prepare`."""
    issues: list[ConfigIssue] = []
    facts: TestFacts | None = None
    for grader, grader_path in graders:
        leaves: Sequence[tuple[Grader, LocPath, bool | None]]  # None: ask the leaf
        gate_problems: Sequence[tuple[LocPath, str]] = ()
        if grader_path[0] != "assertions" and not is_composite(grader):
            leaves = ((grader, grader_path, None),)
        else:
            leaves, gate_problems = _prepare(grader, grader_path, prepared)
        for leaf, where, wants_judge in leaves:
            if type(leaf).problem_with_test is not _NO_PROBLEM:
                facts = facts or _facts(test, suite_dir)
                problem = leaf.problem_with_test(facts)
                if problem is not None:
                    issues.append(source.issue(where, problem))
            if len(judged) <= _MAX_JUDGE_PLACES and (
                leaf.wants_default_judge if wants_judge is None else wants_judge
            ):
                _record_judge(judged, source, where)
        for problem_path, message in gate_problems:
            issues.append(source.issue(problem_path, message))
    return issues


def _record_judge(judged: dict[LocPath, ConfigIssue], source: SourceMap, where: LocPath) -> None:
    """Record, located, that `where` relies on the default judge (the first few places)."""
    if len(judged) <= _MAX_JUDGE_PLACES and where not in judged:
        judged[where] = source.issue(where, NEEDS_JUDGE)


_NO_PROBLEM = Grader.problem_with_test
"""The base `problem_with_test`, which finds none: a grader type that keeps it is not asked."""


def _facts(test: TestCase, suite_dir: Path | None) -> TestFacts:
    """What graders may check about `test` (`Grader.problem_with_test`)."""
    return TestFacts(
        test_id=test.id,
        expected_output=test.expected_output,
        context=tuple(test.context),
        has_expected_tool_calls=bool(test.expected_tool_calls),
        expected_context_ids=tuple(test.expected_context_ids),
        suite_dir=suite_dir,
    )


def _simulator_needs(
    suite: Suite,
    test: TestCase,
    path: LocPath,
    source: SourceMap,
    judged: dict[LocPath, ConfigIssue],
) -> list[tuple[Grader, LocPath]]:
    """A `simulate:` test's `stop_when` graders (checked like the others); records, in
    `judged`, that it needs the judge's model when the suite's `simulator:` sets none."""
    if test.simulate is None:
        return []
    where = (*path, "simulate")
    if (suite.simulator is None or suite.simulator.model is None) and where not in judged:
        judged[where] = source.issue(where, NEEDS_SIMULATOR)
    return [(g, (*where, "stop_when", i)) for i, g in enumerate(test.simulate.stop_when)]
