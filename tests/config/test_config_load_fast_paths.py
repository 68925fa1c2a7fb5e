"""The fast paths of loading a dataset (issue 23 item 3) give what the full checks give.

Each fast path skips work a test cannot need; these tests put the fast and the full path side
by side on inputs at the boundary (an alias key, an AgentV form after native lines, a grader
whose `problem_with_test` fires, a duplicate id deep in a dataset), and check that the fast
path is the one taken for a plain test.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

import assay.config._checks as checks
import assay.config._stream as stream
from assay.config import load_suite
from assay.config._aliases import _may_rewrite, _Rewriter, rewrite_test
from assay.config._yaml import SourceMap
from assay.errors import ConfigError
from assay.interop.agentv import AgentVTests
from assay.interop.agentv._detect import one_test_marker
from assay.results import JSON
from tests.conftest import write

SUITE = "name: s\ntests: ./cases.jsonl\n"
JUDGED_SUITE = "name: s\njudge: {model: m}\ntests: ./cases.jsonl\n"


def _jsonl(path: Path, tests: Sequence[Mapping[str, object]]) -> None:
    write(path, "".join(json.dumps(test) + "\n" for test in tests))


def _plain(i: int) -> dict[str, JSON]:
    return {"id": f"p{i}", "input": f"q {i}", "assertions": [{"type": "contains", "value": "q"}]}


# Tests at the boundary of the fast paths: plain ones, and one step away from plain.
BOUNDARY: list[JSON] = [
    _plain(0),
    {"id": "a", "input": "x", "assertions": [{"type": "llm-grader", "prompt": "ok"}]},
    {"id": "a", "input": "x", "assertions": [{"type": "contains", "value": "x", "required": True}]},
    {"id": "a", "input": "x", "expected_output": {"k": 1}, "tags": ["t"], "metadata": {"m": 1}},
    {"id": "a", "input": "x", "expected_output": [{"role": "assistant", "content": "x"}]},
    {"id": "a", "input": "x", "expected_output": ["not", "messages"]},
    {"id": "a", "input": [{"role": "user", "content": "x"}]},
    {"id": "a", "input": {"role": "user", "content": "x"}},
    {"id": "a", "input": "x", "criteria": "says x"},
    {"id": "a", "input": "x", "vars": {"a": 1}},
    {"id": "a", "input": "x", "workspace": "./ws"},
    {"id": "a", "input": "x", "workspace": {"template": "./t"}},
    {"id": "a", "input": "x", "execution": {"target": "t"}},
    {"id": "a", "input": "x", "execution": {"pass_threshold": 70}},
    {"id": "a", "input": "x", "execution": {"threshold": 0.5}},
    {"id": "a", "input": "x", "rubrics": ["is nice"]},
    {"id": "a", "input": "x", "rubrics": [{"id": "r", "outcome": "o", "required_min_score": 7}]},
    {"id": "a", "input": "x", "evaluators": [{"type": "contains", "value": "x"}]},
    {"id": "a", "input": "x", "assert": [{"type": "contains", "value": "x"}]},
    {"id": "a", "input": "x", "assertions": ["a string grader"]},
    {"id": "a", "input": "x", "assertions": [{"type": "contains_all", "value": ["x"]}]},
    {"id": "a", "input": "x", "assertions": [{"type": "llm-judge", "prompt": "ok"}]},
    {"id": "a", "input": "x", "assertions": [{"type": "llm-grader"}]},
    {"id": "a", "input": "x", "assertions": [{"type": "llm-grader", "prompt": "p", "rubrics": []}]},
    {"id": "a", "input": "x", "assertions": [{"type": "icontains-any", "value": ["x"]}]},
    {"id": "a", "input": "x", "assertions": [{"type": "contains", "value": "x", "required": 0.5}]},
    {"id": "a", "input": "x", "assertions": [{"type": "contains", "script": "s.py"}]},
    {"id": "a", "input": "x", "assertions": [{"type": "rubrics", "rubrics": []}]},
    {"id": "a", "input": "x", "assertions": [{"type": 3}]},
    {
        "id": "a",
        "input": "x",
        "assertions": [{"type": "composite", "assertions": [{"type": "x", "criteria": "c"}]}],
    },
    {"id": "a", "simulate": {"user": "u", "stop_when": [{"type": "contains_any", "value": ["x"]}]}},
    {"id": "a", "turns": [{"input": "x"}]},
    ["not", "a", "mapping"],
]


def _full_rewrite(test: JSON) -> tuple[JSON, list[str], list[str]]:
    """The alias rewriter's walk, without its fast path."""
    test = copy.deepcopy(test)
    rewriter = _Rewriter(SourceMap())
    rewriter.test(test, (0,))
    return test, [str(w) for w in rewriter.warnings], [str(e) for e in rewriter.errors]


@pytest.mark.parametrize("test", BOUNDARY)
def test_i23_3_plain_test_fast_path_agrees_with_agentv_detection_and_the_rewrites(
    test: JSON,
) -> None:
    plain = stream._plain_test(test)
    marker = AgentVTests.marker(test, 0)
    rewritten = _full_rewrite(test)
    if plain:  # the checks the fast path skips would have found nothing
        assert marker is None
        assert rewritten == (test, [], [])
    if marker is not None or rewritten != (test, [], []):
        assert not plain


def test_i23_3_the_plain_tests_of_the_boundary_are_those_expected() -> None:
    # The fast path is taken for the plain shapes (else it would be correct but useless).
    assert [stream._plain_test(t) for t in BOUNDARY[:6]] == [True, True, True, True, False, False]


@pytest.mark.parametrize("test", BOUNDARY)
def test_i23_3_alias_fast_path_agrees_with_the_full_rewrite(test: JSON) -> None:
    given = copy.deepcopy(test)
    warnings, errors = rewrite_test(given, SourceMap(), (0,))
    assert (given, [str(w) for w in warnings], [str(e) for e in errors]) == _full_rewrite(test)
    if not _may_rewrite(test):
        assert _full_rewrite(test) == (test, [], [])


def test_i23_3_agentv_marker_reports_the_first_key_in_the_order_it_always_had() -> None:
    both = {"id": "a", "input": {"x": 1}, "workspace": "w", "criteria": "c", "rubrics": ["r"]}
    assert AgentVTests.marker(both, 4) == (4, "criteria")
    del both["criteria"]
    assert AgentVTests.marker(both, 4) == (4, "workspace")
    del both["workspace"]
    assert AgentVTests.marker(both, 4) == (4, "input")
    assert one_test_marker({"id": "a", "assert": ["s"], "evaluators": ["s"]}) == "evaluators"


def test_i23_3_a_plain_dataset_takes_neither_agentv_detection_nor_the_rewrites(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("a plain test took the full checks")

    monkeypatch.setattr(AgentVTests, "marker", staticmethod(refuse))
    monkeypatch.setattr(stream, "rewrite_test", refuse)
    tests = [_plain(i) for i in range(50)]
    _jsonl(tmp_path / "cases.jsonl", tests)
    loaded = load_suite(write(tmp_path / "s.eval.yaml", SUITE))
    assert json.loads(loaded.document)["tests"] == tests and loaded.warnings == []


def test_i23_3_an_agentv_line_after_native_lines_is_found_and_every_test_rewritten(
    tmp_path: Path,
) -> None:
    tests: list[dict[str, JSON]] = [_plain(i) for i in range(300)]
    tests.append({"id": "v", "input": "x", "criteria": "says x"})
    _jsonl(tmp_path / "cases.jsonl", tests)
    loaded = load_suite(write(tmp_path / "s.eval.yaml", JUDGED_SUITE))
    assert [str(w) for w in loaded.warnings] == [
        "cases.jsonl:301 [300].criteria: read as an AgentV eval file (`300.criteria` is "
        "AgentV's); AgentV's forms are rewritten to assay's, see docs/migrating-from-agentv.md"
    ]
    assert loaded.suite.tests[300].criteria == "says x"
    assert len(loaded.suite.tests) == 301


def test_i23_3_alias_keys_in_a_dataset_are_rewritten_and_located_at_their_lines(
    tmp_path: Path,
) -> None:
    write(
        tmp_path / "cases.yaml",
        "- {id: p0, input: q, assertions: [{type: contains, value: q}]}\n"
        "- id: a1\n"
        "  input: x\n"
        "  evaluators:\n"
        "    - type: contains_all\n"
        "      value: [x]\n"
        "    - type: contains\n"
        "      value: x\n"
        "      required: 0.5\n"
        "- id: a2\n"
        "  input: x\n"
        "  assert:\n"
        "    - type: contains\n"
        "      valeu: x\n",
    )
    suite = write(tmp_path / "s.eval.yaml", "name: s\ntests: ./cases.yaml\n")
    with pytest.raises(ConfigError) as info:
        load_suite(suite)
    # the error inside a renamed key is located where the key was written
    assert str(info.value) == (
        "cases.yaml:14 tests[2].assertions[0].valeu: unknown key 'valeu'. Did you mean 'value'?"
    )
    write(tmp_path / "cases.yaml", (tmp_path / "cases.yaml").read_text().replace("valeu", "value"))
    loaded = load_suite(suite)
    # what the loader said before the fast paths; `required` is found under its renamed key
    assert [str(w) for w in loaded.warnings] == [
        "cases.yaml:4 [1].evaluators: 'evaluators' is deprecated; use 'assertions'",
        "cases.yaml:9 [1].assertions[1].required: 'required: 0.5' is deprecated; use "
        "'required: true' with 'min_score: 0.5'",
        "cases.yaml:12 [2].assert: 'assert' is deprecated; use 'assertions'",
    ]
    assert [g.type for g in loaded.suite.tests[1].assertions] == ["contains-all", "contains"]


def test_i23_3_a_duplicate_id_deep_in_a_large_dataset_keeps_its_file_and_line(
    tmp_path: Path,
) -> None:
    tests = [_plain(i) for i in range(5000)]
    tests.append(_plain(17))
    _jsonl(tmp_path / "cases.jsonl", tests)
    with pytest.raises(ConfigError) as info:
        load_suite(write(tmp_path / "s.eval.yaml", SUITE))
    assert str(info.value) == (
        "cases.jsonl:5001 tests[5000].id: duplicate test id 'p17' (first used at "
        "cases.jsonl:18); test ids must be unique within a suite"
    )


PROBLEMS: list[dict[str, JSON]] = [
    {"id": "e1", "input": "x", "assertions": [{"type": "contains"}]},
    {"id": "e2", "input": "x", "assertions": [{"type": "llm-grader", "prompt": "./missing.md"}]},
    {"id": "e3", "input": "x", "assertions": [{"type": "contains", "value": "x", "weight": 0}]},
    {
        "id": "e4",
        "input": "x",
        "assertions": [
            {
                "type": "composite",
                "assertions": [{"type": "is-json", "name": "a"}],
                "aggregator": {"type": "safety_gate", "required": ["b"]},
            }
        ],
    },
    {
        "id": "e5",
        "input": "x",
        "assertions": [{"type": "is-json"}],
        "execution": {"aggregator": {"type": "safety_gate", "required": ["zz"]}},
    },
]


def test_i23_3_grader_problems_of_a_dataset_are_those_of_the_same_tests_inline(
    tmp_path: Path,
) -> None:
    _jsonl(tmp_path / "cases.jsonl", PROBLEMS)
    with pytest.raises(ConfigError) as streamed:
        load_suite(write(tmp_path / "s.eval.yaml", SUITE))
    inline = json.dumps({"name": "s", "tests": PROBLEMS})
    with pytest.raises(ConfigError) as whole:
        load_suite(write(tmp_path / "inline.eval.yaml", inline))
    assert [(i.path, i.message) for i in streamed.value.issues] == [
        (i.path, i.message) for i in whole.value.issues
    ]
    assert [(i.file, i.line, i.path) for i in streamed.value.issues] == [
        ("cases.jsonl", 1, "tests[0].assertions[0]"),
        ("cases.jsonl", 2, "tests[1].assertions[0]"),
        ("cases.jsonl", 3, "tests[2]"),
        ("cases.jsonl", 4, "tests[3].assertions[0].aggregator.required"),
        ("cases.jsonl", 5, "tests[4].execution.aggregator.required"),
    ]
    assert streamed.value.issues[0].message == (
        "contains has no `value` and test 'e1' has no `expected_output`; give one of them"
    )


def test_i23_3_judge_places_of_a_dataset_are_those_of_the_same_tests_inline(
    tmp_path: Path,
) -> None:
    tests: list[dict[str, JSON]] = [
        {"id": f"j{i}", "input": "x", "assertions": [{"type": "llm-grader", "prompt": "ok"}]}
        for i in range(8)
    ]
    tests[1]["assertions"] = [{"type": "llm-grader", "prompt": "ok", "judge": {"model": "m"}}]
    _jsonl(tmp_path / "cases.jsonl", tests)
    streamed = load_suite(write(tmp_path / "s.eval.yaml", SUITE)).needs_judge
    whole = load_suite(
        write(tmp_path / "inline.eval.yaml", json.dumps({"name": "s", "tests": tests}))
    ).needs_judge
    assert [(i.path, i.message) for i in streamed] == [(i.path, i.message) for i in whole]
    assert [(i.line, i.path) for i in streamed][:3] == [
        (1, "tests[0].assertions[0]"),
        (3, "tests[2].assertions[0]"),
        (4, "tests[3].assertions[0]"),
    ]
    assert len(streamed) == 6 and streamed[-1].message.startswith("more graders")


def test_i23_3_graders_that_check_no_tests_are_checked_without_the_test_facts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("facts built for graders that do not read them")

    monkeypatch.setattr(checks, "_facts", refuse)
    tests = [{"id": f"t{i}", "input": "x", "assertions": [{"type": "is-json"}]} for i in range(3)]
    _jsonl(tmp_path / "cases.jsonl", tests)
    assert len(load_suite(write(tmp_path / "s.eval.yaml", SUITE)).suite.tests) == 3


@pytest.mark.parametrize(
    "value",
    [
        'é\u2028"\\',
        1,
        -2.5,
        1e300,
        None,
        True,
        [],
        {},
        {"a": [None, "ü", 2.0, {"b": False}], "1": [1, 2]},
    ],
)
def test_i23_3_the_suite_document_encoder_writes_what_json_dumps_writes(value: JSON) -> None:
    assert stream._compact(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
