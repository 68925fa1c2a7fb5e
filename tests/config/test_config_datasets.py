"""Tests from JSONL, CSV and globbed YAML files, with errors located in those files."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.config import load_suite
from assay.errors import ConfigError
from tests.conftest import write

SUITE = "name: demo\nassertions: [{type: contains, value: x}]\ntests: {spec}\n"


def test_jsonl(tmp_path: Path) -> None:
    write(tmp_path / "s.eval.yaml", SUITE.replace("{spec}", "./cases.jsonl"))
    write(
        tmp_path / "cases.jsonl",
        (
            '{"id": "a", "input": "hi", "tags": ["t"]}\n\n'
            '{"id": "b", "input": "ho", "expected_output": {"k": 1}}\n'
        ),
    )
    suite = load_suite(tmp_path / "s.eval.yaml").suite
    assert [(t.id, t.input, t.tags, t.expected_output) for t in suite.tests] == [
        ("a", "hi", ["t"], None),
        ("b", "ho", [], {"k": 1}),
    ]


def test_jsonl_errors_are_located_in_the_jsonl_file(tmp_path: Path) -> None:
    write(tmp_path / "s.eval.yaml", SUITE.replace("{spec}", "./cases.jsonl"))
    write(tmp_path / "cases.jsonl", '{"id": "a", "input": "hi"}\n{"id": "b", "inptu": "ho"}\n')
    with pytest.raises(ConfigError) as info:
        load_suite(tmp_path / "s.eval.yaml")
    assert (
        str(info.value)
        == "cases.jsonl:2 tests[1].inptu: unknown key 'inptu'. Did you mean 'input'?"
    )


def test_jsonl_bad_json(tmp_path: Path) -> None:
    write(tmp_path / "s.eval.yaml", SUITE.replace("{spec}", "./cases.jsonl"))
    write(tmp_path / "cases.jsonl", '{"id": "a", "input": "hi"}\n{"id": \n')
    with pytest.raises(ConfigError) as info:
        load_suite(tmp_path / "s.eval.yaml")
    assert str(info.value).startswith("cases.jsonl:2: invalid JSON: Expecting value")


def test_csv(tmp_path: Path) -> None:
    write(tmp_path / "s.eval.yaml", SUITE.replace("{spec}", "./cases.csv"))
    write(
        tmp_path / "cases.csv",
        "id,input,expected_output,context,tags,metadata.lang,assertions\n"
        'a,"Hello, world",hi,doc one;doc two,x;y,en,'
        '"[{""type"": ""icontains"", ""value"": ""h""}]"\n'
        "b,second,,,,,\n",
    )
    suite = load_suite(tmp_path / "s.eval.yaml").suite
    a, b = suite.tests
    assert (a.id, a.input, a.expected_output, a.context, a.tags, a.metadata) == (
        "a",
        "Hello, world",
        "hi",
        ["doc one", "doc two"],
        ["x", "y"],
        {"lang": "en"},
    )
    assert a.assertions[0].type == "icontains"
    assert (b.input, b.context, b.metadata) == ("second", [], {})


def test_csv_errors_are_located_by_row(tmp_path: Path) -> None:
    write(tmp_path / "s.eval.yaml", SUITE.replace("{spec}", "./cases.csv"))
    write(tmp_path / "cases.csv", 'id,input\na,hi\nb,"multi\nline"\nc with space,x\n')
    with pytest.raises(ConfigError) as info:
        load_suite(tmp_path / "s.eval.yaml")
    assert str(info.value) == (
        "cases.csv:5 tests[2].id: String should match pattern '^\\S+$' (got 'c with space')"
    )


def test_glob_of_yaml_files(tmp_path: Path) -> None:
    write(tmp_path / "s.eval.yaml", SUITE.replace("{spec}", "cases/*.yaml"))
    write(tmp_path / "cases" / "b.yaml", "- {id: b1, input: x}\n")
    write(tmp_path / "cases" / "a.yaml", "tests:\n  - {id: a1, input: x}\n  - {id: a2, input: y}\n")
    suite = load_suite(tmp_path / "s.eval.yaml").suite
    assert [t.id for t in suite.tests] == ["a1", "a2", "b1"]


def test_glob_errors_point_into_the_right_file(tmp_path: Path) -> None:
    write(tmp_path / "s.eval.yaml", SUITE.replace("{spec}", "cases/*.yaml"))
    write(tmp_path / "cases" / "a.yaml", "- {id: a1, input: x}\n")
    write(tmp_path / "cases" / "b.yaml", "- {id: b1, input: x}\n- {id: b2, input: [1]}\n")
    with pytest.raises(ConfigError) as info:
        load_suite(tmp_path / "s.eval.yaml")
    assert str(info.value).startswith("cases/b.yaml:2 tests[2].input[0]:")


def test_glob_without_matches(tmp_path: Path) -> None:
    write(tmp_path / "s.eval.yaml", SUITE.replace("{spec}", "cases/*.yaml"))
    with pytest.raises(ConfigError) as info:
        load_suite(tmp_path / "s.eval.yaml")
    assert str(info.value) == "s.eval.yaml:3 tests: no files match 'cases/*.yaml'"


def test_unsupported_extension(tmp_path: Path) -> None:
    write(tmp_path / "s.eval.yaml", SUITE.replace("{spec}", "cases.txt"))
    write(tmp_path / "cases.txt", "x")
    with pytest.raises(ConfigError) as info:
        load_suite(tmp_path / "s.eval.yaml")
    assert "use .jsonl, .csv, .yaml or .yml" in str(info.value)


def test_env_interpolation_and_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_TEST_SUITE", "from-env")
    monkeypatch.delenv("ASSAY_TEST_MISSING", raising=False)
    write(
        tmp_path / "s.eval.yaml",
        "name: ${ASSAY_TEST_SUITE}\ntests:\n"
        "  - {id: a, input: '${ASSAY_TEST_MISSING:-fallback} ok', assertions: [{type: is-json}]}\n",
    )
    suite = load_suite(tmp_path / "s.eval.yaml").suite
    assert (suite.name, suite.tests[0].input) == ("from-env", "fallback ok")


@pytest.mark.parametrize("depth", [150, 100_000])
def test_i22_13_deeply_nested_json_in_a_dataset_is_a_located_error(
    tmp_path: Path, depth: int
) -> None:
    nested = "[" * depth + "]" * depth
    write(
        tmp_path / "cases.jsonl",
        '{"id": "ok", "input": "x"}\n'
        f'{{"id": "deep", "input": "x", "metadata": {{"v": {nested}}}}}\n',
    )
    write(tmp_path / "s.eval.yaml", SUITE.replace("{spec}", "cases.jsonl"))
    with pytest.raises(ConfigError) as info:
        load_suite(tmp_path / "s.eval.yaml")
    assert [str(i) for i in info.value.issues] == [
        "cases.jsonl:2: JSON nested deeper than 100 levels"
    ]


def test_i22_13_deeply_nested_json_in_a_csv_cell_is_a_located_error(tmp_path: Path) -> None:
    nested = "[" * 5000 + "]" * 5000
    write(tmp_path / "cases.csv", f'id,input,expected_tool_calls\na,x,"{nested}"\n')
    write(tmp_path / "s.eval.yaml", SUITE.replace("{spec}", "cases.csv"))
    with pytest.raises(ConfigError) as info:
        load_suite(tmp_path / "s.eval.yaml")
    assert [str(i) for i in info.value.issues] == [
        "cases.csv:2 expected_tool_calls: JSON nested deeper than 100 levels"
    ]


def test_i22_13_brackets_inside_strings_are_not_nesting(tmp_path: Path) -> None:
    write(tmp_path / "cases.jsonl", '{"id": "a", "input": "' + "[{" * 300 + '"}\n')
    write(tmp_path / "s.eval.yaml", SUITE.replace("{spec}", "cases.jsonl"))
    assert load_suite(tmp_path / "s.eval.yaml").suite.tests[0].input == "[{" * 300
