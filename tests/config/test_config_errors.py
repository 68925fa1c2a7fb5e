"""Malformed suites: each problem is one located line (file:line path: message)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.config import load_suite
from assay.errors import ConfigError
from tests.conftest import write

HEADER = """name: demo
target: {type: fake, responses: ["ok"]}
tests:
"""


def _errors(tmp_path: Path, body: str, name: str = "s.eval.yaml") -> list[str]:
    write(tmp_path / name, body)
    with pytest.raises(ConfigError) as info:
        load_suite(tmp_path / name)
    return [str(issue) for issue in info.value.issues]


def test_bad_yaml_reports_line(tmp_path: Path) -> None:
    errors = _errors(tmp_path, HEADER + "  - id: a\n    input: [unclosed\n")
    assert len(errors) == 1
    assert errors[0].startswith("s.eval.yaml:")
    assert "invalid YAML" in errors[0]


def test_unknown_key_suggests_the_closest(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        HEADER + "  - id: a\n    input: hi\n    expected_ouput: x\n"
        "    assertions: [{type: contains, value: hi}]\n",
    )
    assert errors == [
        "s.eval.yaml:6 tests[0].expected_ouput: unknown key 'expected_ouput'. "
        "Did you mean 'expected_output'?"
    ]


def test_unknown_grader_type_suggests_the_closest(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        HEADER + "  - id: a\n    input: hi\n    assertions:\n      - {type: contain, value: x}\n",
    )
    assert len(errors) == 1
    assert errors[0].startswith(
        "s.eval.yaml:7 tests[0].assertions[0]: unknown grader type 'contain'. "
        "Did you mean 'contains'?"
    )


def test_unknown_inline_target_type_suggests_the_closest(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        "name: demo\ntarget: {type: fak}\ntests:\n"
        "  - {id: a, input: hi, assertions: [{type: contains, value: hi}]}\n",
    )
    # One line at `target` (not `target.str` and `target.tagged-union[...]`, the members of
    # `str | TargetSpec`, nor the string member's "should be a valid string").
    assert errors == [
        "s.eval.yaml:2 target: unknown target type 'fak'. Did you mean 'fake'? Known target "
        "types: anthropic, bedrock-agent, command, fake, http, openai, python, replay, sagemaker"
    ]


def test_wrong_type_names_the_field_and_value(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        HEADER + "  - id: a\n    input: hi\n    assertions:\n"
        "      - {type: contains, value: x, weight: heavy}\n",
    )
    assert errors == [
        "s.eval.yaml:7 tests[0].assertions[0].weight: Input should be a valid number, "
        "unable to parse string as a number (got 'heavy')"
    ]


def test_bad_regex_is_rejected_at_load(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        HEADER + "  - id: a\n    input: hi\n    assertions:\n"
        "      - type: regex\n        value: '(a)\\1'\n",
    )
    assert len(errors) == 1
    assert errors[0].startswith(
        "s.eval.yaml:8 tests[0].assertions[0].value: regex '(a)\\\\1' is not valid RE2"
    )
    assert "backreferences" in errors[0]


def test_duplicate_test_id_points_at_both(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        HEADER + "  - {id: a, input: hi, assertions: [{type: contains, value: x}]}\n"
        "  - {id: a, input: ho, assertions: [{type: contains, value: x}]}\n",
    )
    assert errors == [
        "s.eval.yaml:5 tests[1].id: duplicate test id 'a' (first used at s.eval.yaml:4); "
        "test ids must be unique within a suite"
    ]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_suite(tmp_path / "nope.eval.yaml")
    assert str(info.value) == "nope.eval.yaml: file not found"


def test_missing_tests_file(tmp_path: Path) -> None:
    errors = _errors(tmp_path, "name: demo\ntests: ./cases.jsonl\n")
    assert errors == ["s.eval.yaml:2 tests: tests file './cases.jsonl' not found"]


def test_missing_required_key(tmp_path: Path) -> None:
    errors = _errors(tmp_path, HEADER + "  - id: a\n    assertions: [{type: contains, value: x}]\n")
    assert errors == [
        "s.eval.yaml:4 tests[0]: give exactly one of `input`, `turns` (a scripted conversation) "
        "or `simulate` (a simulated user), got none"
    ]


def test_duplicate_yaml_key(tmp_path: Path) -> None:
    errors = _errors(tmp_path, "name: a\nname: b\ntests: []\n")
    assert errors == [
        "s.eval.yaml:2:1 name: duplicate key 'name' (first defined on line 1); remove one of them"
    ]


def test_bad_suite_name(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path, "name: Demo Suite\ntests:\n  - {id: a, input: x, assertions: [{type: is-json}]}\n"
    )
    assert errors == [
        "s.eval.yaml:1 name: String should match pattern '^[a-z0-9][a-z0-9-]*$' (got 'Demo Suite')"
    ]


def test_nothing_to_grade(tmp_path: Path) -> None:
    errors = _errors(tmp_path, HEADER + "  - {id: a, input: hi}\n")
    assert errors == [
        "s.eval.yaml:4 tests[0]: test 'a' has nothing to grade: add `assertions` with weight > 0, "
        "`expected_outcomes` (or suite-level `assertions`)"
    ]


def test_value_or_expected_output_needed(tmp_path: Path) -> None:
    errors = _errors(tmp_path, HEADER + "  - {id: a, input: hi, assertions: [{type: equals}]}\n")
    assert errors == [
        "s.eval.yaml:4 tests[0].assertions[0]: equals has no `value` and test 'a' has no "
        "`expected_output`; give one of them"
    ]


def test_unset_env_var(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSAY_TEST_UNSET", raising=False)
    errors = _errors(tmp_path, "name: ${ASSAY_TEST_UNSET}\ntests: []\n")
    assert errors == [
        "s.eval.yaml:1 name: environment variable ASSAY_TEST_UNSET is not set. Set it, or give "
        "a default: ${ASSAY_TEST_UNSET:-value}"
    ]


def test_several_problems_are_all_reported(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        HEADER + "  - {id: a, input: hi, assertions: [{type: contians, value: x}]}\n"
        "  - {id: b, input: 3, assertions: [{type: contains, value: x, wieght: 2}]}\n",
    )
    assert [e.split(":")[1].split(" ")[0] for e in errors] == ["4", "5", "5"]


def test_threshold_and_verdicts_pass_disagree(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        "name: demo\nexecution: {threshold: 0.8, verdicts: {pass: 0.9}}\n"
        "tests:\n  - {id: a, input: x, assertions: [{type: is-json}]}\n",
    )
    assert errors == [
        "s.eval.yaml:2 execution: threshold (0.8) and verdicts.pass (0.9) disagree; they are the "
        "same setting, keep one"
    ]


def test_safety_gate_names_must_exist(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        HEADER + "  - id: a\n    input: hi\n    assertions:\n      - type: composite\n"
        "        aggregator: {type: safety_gate, required: [no-pii]}\n"
        "        assertions: [{type: contains, value: x, name: other}]\n",
    )
    assert errors == [
        "s.eval.yaml:8 tests[0].assertions[0].aggregator.required: "
        "no member grader is named 'no-pii'"
    ]


def test_a_whole_grader_error_points_at_the_grader_not_its_type(tmp_path: Path) -> None:
    suite = write(
        tmp_path / "s.eval.yaml",
        """\
name: s
target: {type: fake, default: "x"}
tests:
  - id: t1
    input: q
    assertions:
      - {type: contains, value: x}
      - type: code-grader
        function: "os:getcwd"
        command: ["true"]
""",
    )
    with pytest.raises(ConfigError) as info:
        load_suite(suite)
    (issue,) = info.value.issues
    assert (issue.line, issue.path) == (8, "tests[0].assertions[1]")


def test_what_a_composite_member_needs_from_the_test_is_checked_at_load(tmp_path: Path) -> None:
    suite = write(
        tmp_path / "s.eval.yaml",
        """\
name: s
target: {type: fake, default: "x"}
tests:
  - id: t1
    input: q
    assertions:
      - type: composite
        assertions:
          - {type: is-json}
          - {type: contains}
          - {type: format, checks: {length: {tolerance: 0.1}}}
""",
    )
    with pytest.raises(ConfigError) as info:
        load_suite(suite)
    assert [(i.line, i.path) for i in info.value.issues] == [
        (10, "tests[0].assertions[0].assertions[1]"),
        (11, "tests[0].assertions[0].assertions[2]"),
    ]
    assert "contains has no `value` and test 't1' has no `expected_output`" in str(info.value)


LONG_PROMPT = "Rate whether the answer is polite, accurate, and complete. " * 6


def test_i21_6_a_long_one_line_prompt_loads_as_text(tmp_path: Path) -> None:
    body = (
        "name: demo\ntarget: {type: fake, responses: [ok]}\njudge: {model: m}\ntests:\n"
        "  - id: a\n    input: hi\n"
        f"    assertions: [{{type: llm-grader, prompt: '{LONG_PROMPT}'}}]\n"
        f"    rubrics: [{{id: r, outcome: '{LONG_PROMPT}'}}]\n"
    )
    loaded = load_suite(write(tmp_path / "s.eval.yaml", body))
    assert loaded.suite.tests[0].assertions[0].prompt == LONG_PROMPT  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        (
            "tests: " + "x" * 300 + ".jsonl\n",
            f"s.eval.yaml:2 tests: tests file '{'x' * 300}.jsonl' not found",
        ),
        (
            "target: {type: fake, responses: [ok]}\ntests:\n  - id: a\n    input: hi\n"
            f"    assertions: [{{type: code-grader, command: ['/{'x' * 300}']}}]\n",
            f"s.eval.yaml:6 tests[0].assertions[0]: program '/{'x' * 300}' not found",
        ),
    ],
)
def test_i21_6_paths_too_long_for_the_os_are_located_errors(
    tmp_path: Path, field: str, expected: str
) -> None:
    assert _errors(tmp_path, "name: demo\n" + field) == [expected]


NUL_MESSAGE = (
    "contains a NUL character (\\0), which no id, tag or name may hold (PostgreSQL cannot "
    "store it); remove it"
)


def test_i22_9_nul_in_ids_tags_and_names_is_refused_at_load(tmp_path: Path) -> None:
    body = (
        "name: demo\ntarget: {type: fake, responses: [ok]}\n"
        'targets: {"b\\0t": {type: fake, responses: [x]}}\n'
        "tests:\n"
        '  - id: "a\\0b"\n'
        "    input: hi\n"
        '    tags: [ok, "t\\0"]\n'
        '    assertions: [{type: contains, value: hi, name: "g\\0"}]\n'
        '    rubrics: [{id: "r\\0", outcome: ok}]\n'
    )
    assert sorted(_errors(tmp_path, body)) == sorted(
        [
            f"s.eval.yaml:3 targets.b\\x00t: {NUL_MESSAGE}",
            f"s.eval.yaml:5 tests[0].id: {NUL_MESSAGE}",
            f"s.eval.yaml:7 tests[0].tags[1]: {NUL_MESSAGE}",
            f"s.eval.yaml:8 tests[0].assertions[0].name: {NUL_MESSAGE}",
            f"s.eval.yaml:9 tests[0].rubrics[0].id: {NUL_MESSAGE}",
        ]
    )


def test_i22_9_nul_in_a_dataset_test_id_is_refused_at_load(tmp_path: Path) -> None:
    write(
        tmp_path / "cases.jsonl",
        '{"id": "ok", "input": "hi"}\n{"id": "x\\u0000y", "input": "hi"}\n',
    )
    body = (
        "name: demo\ntarget: {type: fake, responses: [ok]}\n"
        "assertions: [{type: contains, value: ok}]\ntests: cases.jsonl\n"
    )
    assert _errors(tmp_path, body) == [f"cases.jsonl:2 tests[1].id: {NUL_MESSAGE}"]
