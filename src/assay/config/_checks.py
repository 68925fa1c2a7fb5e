"""Checks that span fields, run after the models validate: ids, references, gradeability."""

from __future__ import annotations

from assay.config._suite import Suite
from assay.config._yaml import LocPath, SourceMap
from assay.errors import ConfigIssue
from assay.graders import Composite, Grader, TestFacts
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


def _leaves(grader: Grader, path: LocPath) -> list[tuple[Grader, LocPath]]:
    """The grader, or a composite's members at any depth, with their paths."""
    if isinstance(grader, Composite):
        return [
            leaf
            for i, member in enumerate(grader.assertions)
            for leaf in _leaves(member, (*path, "assertions", i))
        ]
    return [(grader, path)]


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
        facts = TestFacts(
            test_id=test.id,
            expected_output=test.expected_output,
            context=tuple(test.context),
            has_expected_tool_calls=bool(test.expected_tool_calls),
        )
        for grader, grader_path in graders:
            issues += [
                source.issue(where, problem)
                for leaf, where in _leaves(grader, grader_path)
                if (problem := leaf.problem_with_test(facts)) is not None
            ]
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
