"""Checks that span fields, run after the models validate: ids, references, gradeability."""

from __future__ import annotations

from assay.config._suite import Suite
from assay.config._yaml import LocPath, SourceMap
from assay.errors import ConfigIssue
from assay.graders import Composite, Grader
from assay.scoring import SafetyGate

__all__ = ["case_graders", "check_suite"]


def case_graders(suite: Suite, index: int) -> list[tuple[Grader, LocPath]]:
    """Test `index`'s graders in run order (its own, then the suite defaults) with their paths."""
    test = suite.tests[index]
    graders: list[tuple[Grader, LocPath]] = [
        (g, ("tests", index, "assertions", i)) for i, g in enumerate(test.assertions)
    ]
    skip = test.execution.skip_defaults if test.execution else None
    if skip is None:
        skip = suite.execution.skip_defaults
    if not skip:
        graders += [(g, ("assertions", i)) for i, g in enumerate(suite.assertions)]
    return graders


def _gate_names(grader: Grader, names: set[str], path: LocPath) -> list[tuple[LocPath, str]]:
    problems: list[tuple[LocPath, str]] = []
    if isinstance(grader, Composite):
        members = {m.display_name for m in grader.assertions}
        if isinstance(grader.aggregator, SafetyGate):
            problems += [
                ((*path, "aggregator", "required"), f"no member grader is named '{name}'")
                for name in grader.aggregator.required
                if name not in members
            ]
        for i, member in enumerate(grader.assertions):
            problems += _gate_names(member, members, (*path, "assertions", i))
    return problems


def _without_expected_calls(grader: Grader, path: LocPath) -> list[tuple[LocPath, str]]:
    """Graders (composite members included) that default to the test's expected_tool_calls
    and give no `expected` of their own, with their paths and types."""
    if isinstance(grader, Composite):
        return [
            found
            for i, member in enumerate(grader.assertions)
            for found in _without_expected_calls(member, (*path, "assertions", i))
        ]
    if getattr(grader, "uses_expected_tool_calls", False) and (
        getattr(grader, "expected", None) is None
    ):
        return [(path, grader.type)]
    return []


def check_suite(suite: Suite, source: SourceMap) -> list[ConfigIssue]:
    """Cross-field problems of a validated suite, each located."""
    issues: list[ConfigIssue] = []
    first_seen: dict[str, int] = {}
    for index, test in enumerate(suite.tests):
        path: LocPath = ("tests", index)
        if test.id in first_seen:
            first = source.locate(("tests", first_seen[test.id], "id"))
            issues.append(
                source.issue(
                    (*path, "id"),
                    f"duplicate test id '{test.id}' (first used at {first.file}:{first.line}); "
                    "test ids must be unique within a suite",
                )
            )
        else:
            first_seen[test.id] = index

        graders = case_graders(suite, index)
        every_turn = graders  # a turn is graded by its own graders and these, not other turns'
        for turn_index, turn in enumerate(test.turns or []):
            turn_graders: list[tuple[Grader, LocPath]] = [
                (g, (*path, "turns", turn_index, "assertions", i))
                for i, g in enumerate(turn.assertions)
            ]
            if not any(g.weight > 0 for g, _ in turn_graders + every_turn):
                issues.append(
                    source.issue(
                        (*path, "turns", turn_index),
                        f"turn {turn_index} of test '{test.id}' has nothing to grade: add "
                        "`assertions` with weight > 0 to the turn, the test or the suite",
                    )
                )
            graders = graders + turn_graders
        if test.turns is None and not any(g.weight > 0 for g, _ in graders):
            issues.append(
                source.issue(
                    path,
                    f"test '{test.id}' has nothing to grade: add `assertions` with weight > 0 "
                    "(or suite-level `assertions`)",
                )
            )
        names = {g.display_name for g, _ in graders}
        for grader, grader_path in graders:
            if (
                getattr(grader, "uses_expected_output", False)
                and getattr(grader, "value", None) is None
                and test.expected_output is None
            ):
                issues.append(
                    source.issue(
                        grader_path,
                        f"{grader.type} has no `value` and test '{test.id}' has no "
                        "`expected_output`; give one of them",
                    )
                )
            if not test.expected_tool_calls:
                issues += [
                    source.issue(
                        where,
                        f"{kind} has no `expected` calls and test '{test.id}' has no "
                        "`expected_tool_calls`; give one of them",
                    )
                    for where, kind in _without_expected_calls(grader, grader_path)
                ]
            # graders whose needs depend on their options (format, factuality) say what is missing
            problem_with_test = getattr(grader, "problem_with_test", None)
            problem = problem_with_test and problem_with_test(
                test_id=test.id, expected_output=test.expected_output, context=test.context
            )
            if problem:
                issues.append(source.issue(grader_path, problem))
            for problem_path, message in _gate_names(grader, names, grader_path):
                issues.append(source.issue(problem_path, message))
        aggregator = test.execution.aggregator if test.execution else None
        aggregator = aggregator or suite.execution.aggregator
        if isinstance(aggregator, SafetyGate):
            where = (
                (*path, "execution")
                if test.execution and test.execution.aggregator
                else ("execution",)
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
