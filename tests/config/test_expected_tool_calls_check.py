"""A tool-trajectory grader with nothing to compare against is a located error at load time."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.config import load_suite
from assay.errors import ConfigError
from assay.graders import ToolTrajectory
from tests.conftest import write

HEADER = """name: demo
target: {type: fake, responses: ["ok"]}
"""


def _errors(tmp_path: Path, body: str) -> list[str]:
    write(tmp_path / "s.eval.yaml", HEADER + body)
    with pytest.raises(ConfigError) as info:
        load_suite(tmp_path / "s.eval.yaml")
    return [str(issue) for issue in info.value.issues]


def test_no_expected_and_no_expected_tool_calls(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        "tests:\n  - id: a\n    input: hi\n    assertions:\n      - {type: tool-trajectory}\n",
    )
    assert errors == [
        "s.eval.yaml:7 tests[0].assertions[0]: tool-trajectory has no `expected` calls and test "
        "'a' has no `expected_tool_calls`; give one of them"
    ]


def test_an_empty_expected_tool_calls_list_is_not_enough(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        "tests:\n  - id: a\n    input: hi\n    expected_tool_calls: []\n"
        "    assertions: [{type: tool_trajectory, mode: exact}]\n",
    )
    assert errors == [
        "s.eval.yaml:7 tests[0].assertions[0]: tool-trajectory has no `expected` calls and test "
        "'a' has no `expected_tool_calls`; give one of them"
    ]


def test_suite_default_is_reported_for_each_test_lacking_calls(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        "assertions:\n  - {type: tool-trajectory, mode: superset}\n"
        "tests:\n"
        "  - id: a\n    input: hi\n    expected_tool_calls: [{tool: lookup}]\n"
        "  - id: b\n    input: hi\n",
    )
    assert errors == [
        "s.eval.yaml:4 assertions[0]: tool-trajectory has no `expected` calls and test 'b' has "
        "no `expected_tool_calls`; give one of them"
    ]


def test_composite_members_are_checked(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        "tests:\n  - id: a\n    input: hi\n    assertions:\n"
        "      - type: composite\n"
        "        assertions:\n"
        "          - {type: contains, value: ok}\n"
        "          - {type: tool-trajectory}\n",
    )
    assert errors == [
        "s.eval.yaml:10 tests[0].assertions[0].assertions[1]: tool-trajectory has no `expected` "
        "calls and test 'a' has no `expected_tool_calls`; give one of them"
    ]


def test_turn_graders_are_checked(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        "tests:\n  - id: a\n    turns:\n      - input: hi\n"
        "        assertions: [{type: tool-trajectory}]\n",
    )
    assert errors == [
        "s.eval.yaml:7 tests[0].turns[0].assertions[0]: tool-trajectory has no `expected` calls "
        "and test 'a' has no `expected_tool_calls`; give one of them"
    ]


def test_either_source_of_calls_is_enough(tmp_path: Path) -> None:
    write(
        tmp_path / "s.eval.yaml",
        HEADER + "tests:\n"
        "  - id: from-test\n    input: hi\n    expected_tool_calls: [{tool: lookup}]\n"
        "    assertions: [{type: tool-trajectory}]\n"
        "  - id: own\n    input: hi\n"
        "    assertions: [{type: tool-trajectory, mode: exact, expected: []}]\n",
    )
    suite = load_suite(tmp_path / "s.eval.yaml").suite
    graders = [t.assertions[0] for t in suite.tests]
    assert all(isinstance(g, ToolTrajectory) for g in graders)
    assert [g.expected for g in graders if isinstance(g, ToolTrajectory)] == [None, []]
