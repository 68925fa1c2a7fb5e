"""Deprecated spellings load with a located warning that names the replacement (SPEC §1.2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.config import load_project, load_suite
from assay.config._aliases import rewrite_suite
from assay.config._yaml import SourceMap
from assay.errors import ConfigError
from assay.graders import Contains
from tests.conftest import write


def test_aliases_are_rewritten_with_warnings(tmp_path: Path) -> None:
    write(
        tmp_path / "s.eval.yaml",
        """name: demo
execution: {pass_threshold: 75}
evaluators:
  - {type: contains_all, value: [a]}
tests:
  - id: a
    input: hi
    execution: {pass_threshold: 0.9}
    assert:
      - {type: contains, value: hi, required: 0.7}
""",
    )
    loaded = load_suite(tmp_path / "s.eval.yaml")
    suite = loaded.suite
    assert suite.execution.threshold == 0.75
    assert suite.assertions[0].type == "contains-all"
    test = suite.tests[0]
    assert test.execution is not None and test.execution.threshold == 0.9
    grader = test.assertions[0]
    assert isinstance(grader, Contains)
    assert (grader.required, grader.min_score) == (True, 0.7)
    assert [str(w) for w in loaded.warnings] == [
        "s.eval.yaml:3 evaluators: 'evaluators' is deprecated; use 'assertions'",
        "s.eval.yaml:2 execution.pass_threshold: 'pass_threshold' is deprecated; use 'threshold'",
        "s.eval.yaml:2 execution.threshold: read pass_threshold 75 as threshold 0.75",
        "s.eval.yaml:9 tests[0].assert: 'assert' is deprecated; use 'assertions'",
        "s.eval.yaml:10 tests[0].assertions[0].required: 'required: 0.7' is deprecated; use "
        "'required: true' with 'min_score: 0.7'",
        "s.eval.yaml:8 tests[0].execution.pass_threshold: 'pass_threshold' is deprecated; use "
        "'threshold'",
    ]


def test_deprecated_type_names_map_to_replacements() -> None:
    data = {
        "name": "x",
        "tests": [
            {"id": "a", "input": "x", "assertions": [{"type": "llm_judge"}, {"type": "code_judge"}]}
        ],
    }
    warnings, errors = rewrite_suite(data, SourceMap(default_file="f"))
    assert errors == []
    assert [a["type"] for a in data["tests"][0]["assertions"]] == ["llm-grader", "code-grader"]
    assert [w.message for w in warnings] == [
        "grader type 'llm_judge' is deprecated; use 'llm-grader'",
        "grader type 'code_judge' is deprecated; use 'code-grader'",
    ]


def test_rubric_required_min_score_reads_on_0_to_10() -> None:
    data = {"name": "x", "tests": [{"id": "a", "rubrics": [{"id": "r", "required_min_score": 7}]}]}
    warnings, _ = rewrite_suite(data, SourceMap(default_file="f"))
    assert data["tests"][0]["rubrics"][0] == {"id": "r", "min_score": 0.7}
    assert "use 'min_score: 0.7' (0–1)" in warnings[-1].message


def test_alias_and_canonical_together_is_an_error(tmp_path: Path) -> None:
    write(
        tmp_path / "s.eval.yaml",
        "name: demo\nassertions: []\nassert: []\ntests:\n  - {id: a, input: x}\n",
    )
    with pytest.raises(ConfigError) as info:
        load_suite(tmp_path / "s.eval.yaml")
    assert (
        str(info.value)
        == "s.eval.yaml:3 assert: 'assert' and 'assertions' are both set; keep 'assertions'"
    )


def test_numeric_required_with_min_score_is_an_error(tmp_path: Path) -> None:
    write(
        tmp_path / "s.eval.yaml",
        "name: demo\ntests:\n  - id: a\n    input: x\n    assertions:\n"
        "      - {type: is-json, required: 0.5, min_score: 0.7}\n",
    )
    with pytest.raises(ConfigError) as info:
        load_suite(tmp_path / "s.eval.yaml")
    assert "numeric 'required' conflicts with 'min_score'" in str(info.value)


def test_metadata_is_never_rewritten(tmp_path: Path) -> None:
    write(
        tmp_path / "s.eval.yaml",
        "name: demo\ntests:\n  - id: a\n    input: x\n"
        "    metadata: {pass_threshold: 90, assert: 1}\n"
        "    assertions: [{type: is-json}]\n",
    )
    loaded = load_suite(tmp_path / "s.eval.yaml")
    assert loaded.suite.tests[0].metadata == {"pass_threshold": 90, "assert": 1}
    assert loaded.warnings == []


def test_project_pass_threshold(tmp_path: Path) -> None:
    write(tmp_path / "assay.yaml", "pass_threshold: 0.7\n")
    project = load_project()
    assert project.config.threshold == 0.7
    assert [str(w) for w in project.warnings] == [
        "assay.yaml:1 pass_threshold: 'pass_threshold' is deprecated; use 'threshold'"
    ]
