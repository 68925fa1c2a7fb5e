"""Tests are read, validated and checked one at a time and kept as JSON text (`SuiteTests`).

The memory test measures what a loaded suite holds per test: a validated test model per test
cost ~2 KB held and ~3 KB at the load's peak; the JSON text ~100 bytes.
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from assay.config import SuiteTests, load_suite, parse_suite
from assay.config import TestCase as Case
from assay.errors import ConfigError
from tests.conftest import write

SUITE = "name: s\nassertions: [{type: contains, value: x}]\ntests: ./cases.jsonl\n"


def _jsonl(path: Path, tests: Sequence[Mapping[str, object]]) -> None:
    write(path, "".join(json.dumps(test) + "\n" for test in tests))


def test_loaded_tests_are_rebuilt_from_the_document(tmp_path: Path) -> None:
    raw = [{"id": f"t{i}", "input": f"q{i}", "tags": "x"} for i in range(3)]
    _jsonl(tmp_path / "cases.jsonl", raw)
    loaded = load_suite(write(tmp_path / "s.eval.yaml", SUITE))
    tests = loaded.suite.tests
    assert isinstance(tests, SuiteTests)
    assert json.loads(loaded.document)["tests"] == raw
    expected = [Case.model_validate(t) for t in raw]
    assert (len(tests), list(tests), tests[-1], tests[1:]) == (
        3,
        expected,
        expected[2],
        expected[1:],
    )
    assert tests == expected and tests[0] is not tests[0]  # each read builds a new model
    with pytest.raises(IndexError):
        tests[3]


def test_memory_held_per_test_is_its_json_text(tmp_path: Path) -> None:
    n = 10_000
    _jsonl(
        tmp_path / "cases.jsonl",
        [
            {
                "id": f"c{i}",
                "input": f"question {i}",
                "assertions": [{"type": "contains", "value": f"q{i}"}],
            }
            for i in range(n)
        ],
    )
    suite = write(tmp_path / "s.eval.yaml", SUITE)
    load_suite(suite)  # imports and caches are not what is measured
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        loaded = load_suite(suite)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(loaded.suite.tests) == n
    # Measured: ~110 bytes held and ~420 at the peak per test (was ~2,000 and ~3,100).
    assert (held - before) / n < 250
    assert (peak - before) / n < 1_000


def test_the_document_keeps_the_suite_key_order(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s.eval.yaml",
        "name: s\ntests:\n  - {id: a, input: 'ü', tags: t}\n  - {id: b, input: x}\n"
        "assertions: [{type: contains, value: x}]\ndescription: d\n",
    )
    assert load_suite(path).document == (
        '{"name":"s","tests":[{"id":"a","input":"ü","tags":"t"},{"id":"b","input":"x"}],'
        '"assertions":[{"type":"contains","value":"x"}],"description":"d"}'
    )


def test_a_test_with_its_own_execution_is_known_without_building_the_others() -> None:
    loaded = parse_suite(
        {
            "name": "s",
            "assertions": [{"type": "contains", "value": "x"}],
            "tests": [
                {"id": "a", "input": "x"},
                {"id": "b", "input": "x", "execution": {"threshold": 0.3}},
                {"id": "c", "input": "x"},
            ],
        }
    )
    assert isinstance(loaded.suite.tests, SuiteTests)
    assert list(loaded.suite.tests.with_execution) == [1]


def test_an_agentv_form_after_the_first_test_rewrites_every_test(tmp_path: Path) -> None:
    trajectory = {"type": "tool-trajectory", "mode": "any_order", "expected": [{"tool": "t"}]}
    _jsonl(
        tmp_path / "cases.jsonl",
        [
            {"id": "a", "input": "x", "assertions": [trajectory]},
            {"id": "b", "input": "y", "criteria": "Says y"},
        ],
    )
    loaded = load_suite(write(tmp_path / "s.eval.yaml", SUITE))
    assert str(loaded.warnings[0]) == (
        "cases.jsonl:2 [1].criteria: read as an AgentV eval file (`1.criteria` is AgentV's); "
        "AgentV's forms are rewritten to assay's, see docs/migrating-from-agentv.md"
    )
    # AgentV's any_order (other calls allowed) is assay's superset, in the first test too.
    first = loaded.suite.tests[0].assertions[0]
    assert (first.type, getattr(first, "mode", None)) == ("tool-trajectory", "superset")


def test_rewrite_errors_are_reported_alone(tmp_path: Path) -> None:
    write(
        tmp_path / "cases.jsonl",
        '{"id": "a", "inptu": "x"}\n{"id": "b", "input": "x", "assert": [], "assertions": []}\n',
    )
    with pytest.raises(ConfigError) as info:
        load_suite(write(tmp_path / "s.eval.yaml", SUITE))
    assert str(info.value) == (
        "cases.jsonl:2 [1].assert: 'assert' and 'assertions' are both set; keep 'assertions'"
    )


def test_suite_and_test_validation_errors_are_reported_together(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s.eval.yaml",
        "name: Bad Name\nexecution: {threshold: 2}\ntests:\n"
        "  - {id: a, input: x, bogus: 1}\n  - {id: b, inptu: y}\n",
    )
    with pytest.raises(ConfigError) as info:
        load_suite(path)
    assert str(info.value).splitlines() == [
        "s.eval.yaml:1 name: String should match pattern '^[a-z0-9][a-z0-9-]*$' (got 'Bad Name')",
        "s.eval.yaml:2 execution.threshold: Input should be less than or equal to 1 (got 2)",
        "s.eval.yaml:4 tests[0].bogus: unknown key 'bogus'.",
        "s.eval.yaml:5 tests[1].inptu: unknown key 'inptu'. Did you mean 'input'?",
    ]


def test_an_unknown_suite_key_is_reported_alone(tmp_path: Path) -> None:
    path = write(tmp_path / "s.eval.yaml", "name: s\nbogus: 1\ntests:\n  - {id: a, bogus: 1}\n")
    with pytest.raises(ConfigError) as info:
        load_suite(path)
    assert str(info.value) == "s.eval.yaml:2 bogus: unknown key 'bogus'."


def test_dataset_checks_locate_suite_paths_in_the_suite_file(tmp_path: Path) -> None:
    write(
        tmp_path / "s.eval.yaml",
        "name: s\nexecution: {aggregator: {type: safety_gate, required: [nope]}}\n"
        "assertions: [{type: contains, value: x}]\ntests: ./cases.jsonl\n",
    )
    write(tmp_path / "cases.jsonl", '{"id": "a", "input": "x"}\n{"id": "a", "input": "y"}\n')
    with pytest.raises(ConfigError) as info:
        load_suite(tmp_path / "s.eval.yaml")
    assert str(info.value).splitlines() == [
        "s.eval.yaml:2 execution.aggregator.required: test 'a' has no grader named 'nope'",
        "cases.jsonl:2 tests[1].id: duplicate test id 'a' (first used at cases.jsonl:1); test "
        "ids must be unique within a suite",
        "s.eval.yaml:2 execution.aggregator.required: test 'a' has no grader named 'nope'",
    ]


def test_every_bad_json_line_is_reported(tmp_path: Path) -> None:
    write(tmp_path / "cases.jsonl", '{"id": "a", "inptu": "x"}\n{"id": \n\n{bad\n')
    with pytest.raises(ConfigError) as info:
        load_suite(write(tmp_path / "s.eval.yaml", SUITE))
    assert str(info.value).splitlines() == [
        "cases.jsonl:2: invalid JSON: Expecting value (column 1)",
        "cases.jsonl:4: invalid JSON: Expecting property name enclosed in double quotes (column 2)",
    ]


def test_a_loaded_suite_dumps_its_tests() -> None:
    test = {"id": "a", "input": "x", "assertions": [{"type": "is-json"}]}
    loaded = parse_suite({"name": "s", "tests": [test]})
    dumped = loaded.suite.model_dump(mode="json", exclude_defaults=True)
    assert dumped["tests"] == [test]
