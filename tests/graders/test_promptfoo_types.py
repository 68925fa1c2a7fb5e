"""The deterministic graders promptfoo has and assay lacked (issue 25 item 3): is-xml,
contains-xml, is-sql, bleu, levenshtein, valid-tool-calls, and the transform grader."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from tests.conftest import write
from tests.graders._grading import error_of, grade, load_errors

from assay.graders.bleu import bleu_score
from assay.graders.embedded_json import embedded_json
from assay.results import TargetOutput, ToolCall

# --- xml ----------------------------------------------------------------------------------------


def test_i25_3_is_xml_checks_the_whole_output_and_required_paths() -> None:
    doc = "<analysis><classification>T-shirt</classification><color>Red</color></analysis>"
    assert grade({"type": "is-xml"}, f"\n{doc}\n").score == 1.0
    required = {"type": "is-xml", "required_elements": ["analysis.color", "analysis.size"]}
    result = grade(required, doc)
    assert (result.score, result.misses) == (0.0, ["XML lacks required element(s): analysis.size"])
    assert [d.passed for d in result.details] == [True, False]
    broken = grade({"type": "is-xml"}, "<root><child>Content</child></root")
    assert broken.score == 0.0
    assert broken.details[0].message == "line 1 column 29: unclosed token"
    assert grade({"type": "is-xml"}, f"Sure: {doc}").score == 0.0


def test_i25_3_is_xml_refuses_an_internal_dtd_subset() -> None:
    bomb = (
        '<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>'
        "<lolz>&lol2;</lolz>"
    )
    result = grade({"type": "is-xml"}, bomb)
    assert result.score == 0.0
    assert "a DOCTYPE with an internal subset is not accepted" in result.misses[0]


def test_i25_3_contains_xml_finds_a_fragment_in_prose() -> None:
    spec = {"type": "contains-xml", "required_elements": ["root.child"]}
    assert grade(spec, "Here: <root><child>x</child></root>, anything else?").score == 1.0
    assert grade(spec, "Here: <root><other/></root>").score == 0.0
    assert grade({"type": "contains-xml"}, "if a < b and c > d then").score == 0.0


def test_i25_3_contains_json_finds_json_in_prose_and_checks_a_schema() -> None:
    text = 'Order: {"id": 7, "items": [1, 2]} and also [3, 4]. Bye {not json}'
    assert embedded_json(text) == [{"id": 7, "items": [1, 2]}, [3, 4]]
    assert grade({"type": "contains-json"}, text).score == 1.0
    schema = {"type": "object", "required": ["status"]}
    missing = grade({"type": "contains-json", "schema": schema}, text)
    assert missing.misses == [
        "no embedded JSON matches the schema ($: 'status' is a required property)"
    ]
    array = grade({"type": "contains-json", "schema": {"type": "array"}}, text)
    assert array.score == 1.0  # the second value matches
    assert grade({"type": "contains-json"}, "Total: {7} and [x]").score == 0.0
    assert grade({"type": "contains-json"}, "NaN [NaN]").score == 0.0  # strict JSON only


# --- sql ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "score"),
    [
        ("SELECT id, name FROM users WHERE id = 1;", 1.0),
        ("UPDATE users SET name = 'x' WHERE id = 2; DELETE FROM logs", 1.0),
        ("CREATE TABLE t (id INT PRIMARY KEY)", 1.0),
        ("SELECT * FRM users", 0.0),
        ("hello world", 0.0),  # an expression (a column alias), not a statement
        ("select", 0.0),
        ("", 0.0),
        ("The answer is 42", 0.0),
    ],
)
def test_i25_3_is_sql_needs_statements_the_parser_accepts(output: str, score: float) -> None:
    assert grade({"type": "is-sql"}, output).score == score


def test_i25_3_is_sql_dialects_fences_and_authority_lists() -> None:
    assert grade({"type": "is-sql", "dialect": "postgres"}, "SELECT x::int FROM t").score == 1.0
    fenced = "Here you go:\n```sql\nSELECT name FROM users\n```\nEnjoy."
    assert grade({"type": "is-sql"}, fenced).score == 0.0
    assert grade({"type": "is-sql", "strip_code_fence": True}, fenced).score == 1.0
    spec = {
        "type": "is-sql",
        "allowed_tables": ["(select|update)::null::departments"],
        "allowed_columns": ["select::departments::name"],
    }
    assert grade(spec, "SELECT name FROM departments").score == 1.0
    denied = grade(spec, "SELECT id FROM departments")
    assert denied.misses == ["not allowed: select::departments::id"]
    assert grade(spec, "DELETE FROM departments").misses == [
        "not allowed: delete::null::departments"
    ]
    assert "is not valid RE2" in error_of({"type": "is-sql", "allowed_tables": ["(?=x)"]})


# --- bleu and levenshtein ------------------------------------------------------------------------


def test_i25_3_bleu_is_promptfoos_sentence_bleu() -> None:
    assert bleu_score("The cat sat on the mat", ["the cat sat on the mat"]) == 1.0
    # 1- to 4-gram precisions 5/6, 3/5, 2/4, 1/3; the candidate is as long as the reference
    expected = math.exp((math.log(5 / 6) + math.log(3 / 5) + math.log(2 / 4) + math.log(1 / 3)) / 4)
    assert bleu_score("the cat sat on a mat", ["the cat sat on the mat"]) == pytest.approx(expected)
    # a shorter candidate pays the brevity penalty against the closest reference (6 words)
    short = bleu_score("the cat sat on", ["the cat sat on the mat", "a b c d e f g h i j"])
    assert short == pytest.approx(math.exp(1 - 6 / 4))
    assert bleu_score("", ["x"]) == 0.0
    result = grade(
        {"type": "bleu", "value": ["nope", "the cat sat on the mat"]}, "the cat sat on the mat"
    )
    assert (result.score, result.details[0].message) == (1.0, "BLEU-4 1.0000")
    assert "reference text is empty" in error_of({"type": "bleu", "value": " "})


def test_i25_3_levenshtein_bounds_the_absolute_distance() -> None:
    spec = {"type": "levenshtein", "value": "kitten", "max_distance": 3}
    assert grade(spec, "sitting").score == 1.0  # 3 edits
    far = grade({**spec, "max_distance": 2}, "sitting")
    assert (far.score, far.misses) == (0.0, ["Levenshtein distance 3 is over 2"])
    # the same two edits pass on a long reference and a short one alike
    long_text = "a" * 200
    assert (
        grade({"type": "levenshtein", "value": long_text, "max_distance": 2}, long_text[2:]).score
        == 1.0
    )
    assert grade({"type": "levenshtein", "max_distance": 0}, "same", expected="same").score == 1.0


# --- valid-tool-calls ----------------------------------------------------------------------------

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


def calls(*made: tuple[str, dict[str, object]]) -> TargetOutput:
    return TargetOutput(output="", tool_calls=[ToolCall(tool=t, args=a) for t, a in made])


def test_i25_3_valid_tool_calls_checks_names_and_arguments() -> None:
    spec = {"type": "valid-tool-calls", "tools": [WEATHER, {"name": "log"}]}
    ok = grade(spec, "", target_output=calls(("get_weather", {"city": "Oslo"}), ("log", {})))
    assert ok.score == 1.0
    bad = grade(spec, "", target_output=calls(("get_weather", {"city": 7}), ("book", {})))
    assert bad.score == 0.0
    assert bad.misses == [
        "'get_weather' arguments: $.city: 7 is not of type 'string'",
        "'book' is not a declared tool (get_weather, log)",
    ]
    none = grade(spec, "I can't call tools.")
    assert (none.score, none.misses) == (0.0, ["the output made no tool call"])
    assert grade({**spec, "require_call": False}, "fine").score == 1.0


def test_i25_3_valid_tool_calls_checks_the_declarations_when_the_suite_loads() -> None:
    bad = {"type": "valid-tool-calls", "tools": [{"name": "x", "parameters": {"type": "nope"}}]}
    assert error_of(bad).startswith("Value error, tool 'x': ")
    assert "has no `name`" in error_of({"type": "valid-tool-calls", "tools": [{"parameters": {}}]})


GEMINI = {
    "functionDeclarations": [
        {
            "name": "get_weather",
            "parameters": {
                "type": "OBJECT",
                "properties": {"city": {"type": "STRING"}},
                "required": ["city"],
            },
        },
        {"name": "search_places", "parametersJsonSchema": {"type": "object"}},
    ]
}


def test_i25_3_a_gemini_function_declarations_list_is_n_function_tools() -> None:
    spec = {"type": "valid-tool-calls", "tools": [GEMINI, {"googleSearch": {}}]}
    made = calls(("get_weather", {"city": "Oslo"}), ("search_places", {"q": 1}))
    assert grade(spec, "", target_output=made).score == 1.0
    bad = grade(spec, "", target_output=calls(("get_weather", {"city": 7}), ("book", {})))
    assert bad.misses == [
        "'get_weather' arguments: $.city: 7 is not of type 'string'",
        "'book' is not a declared tool (get_weather, search_places)",
    ]
    nameless = {"type": "valid-tool-calls", "tools": [{"functionDeclarations": [{"x": 1}]}]}
    assert "has no `name`" in error_of(nameless)


def test_i25_3_an_mcp_tool_is_provider_side_with_no_local_schema() -> None:
    server = {"type": "mcp", "server_label": "wiki", "server_url": "https://mcp.example"}
    listed = {**server, "allowed_tools": ["ask_question"]}
    spec = {"type": "valid-tool-calls", "tools": [WEATHER, listed]}
    ok = grade(spec, "", target_output=calls(("ask_question", {"anything": [1, 2]})))
    assert ok.score == 1.0
    bad = grade(spec, "", target_output=calls(("read_wiki", {})))
    assert bad.misses == ["'read_wiki' is not a declared tool (get_weather, ask_question)"]
    open_server = {"type": "valid-tool-calls", "tools": [server, {"type": "web_search"}]}
    assert grade(open_server, "", target_output=calls(("read_wiki", {}))).score == 1.0
    assert grade(open_server, "no call").score == 0.0


# --- transform -----------------------------------------------------------------------------------

PICK = "import json, sys; c = json.load(sys.stdin); print(json.dumps({'output': %s}))"


def test_i25_3_transform_grades_the_commands_output_with_its_member() -> None:
    answer = PICK % "json.loads(c['output'])['answer']"
    spec = {
        "type": "transform",
        "command": ["python3", "-c", answer],
        "assertion": {"type": "equals", "value": "Paris"},
    }
    result = grade(spec, '{"answer": "Paris"}')
    assert (result.score, result.verdict) == (1.0, "pass")
    assert result.reasoning.startswith("after the transform (Paris)")
    assert [c.type for c in result.children] == ["equals"]
    negated = grade({**spec, "assertion": {"type": "equals", "value": "Paris", "negate": True}},
                    '{"answer": "Paris"}')  # fmt: skip
    assert negated.verdict == "fail"


def test_i25_3_transform_gives_objects_to_nested_code_graders(tmp_path: Path) -> None:
    check = write(
        tmp_path / "check.py",
        "import json, sys\nc = json.load(sys.stdin)\n"
        "v = c['metadata']['transformed_output']\n"
        "print(json.dumps({'score': 1 if v == {'a': [1, 2]} else 0}))\n",
    )
    spec = {
        "type": "transform",
        "command": ["python3", "-c", PICK % "json.loads(c['output'])"],
        "assertion": {"type": "code-grader", "command": ["python3", str(check)]},
    }
    assert grade(spec, '  {"a": [1, 2]}').score == 1.0
    text = {**spec, "assertion": {"type": "equals", "value": json.dumps({"a": [1, 2]})}}
    assert grade(text, '{"a": [1, 2]}').score == 1.0  # other graders see its JSON text


def test_i25_3_a_failing_transform_is_an_error_not_a_zero() -> None:
    spec = {
        "type": "transform",
        "command": ["python3", "-c", "print('not json')"],
        "assertion": {"type": "equals", "value": "x"},
    }
    result = grade(spec, "x")
    assert result.score is None and result.error is not None
    assert "transform 'python3 -c" in result.error.message
    assert 'print {"output": <value>}' in result.error.message or "not {" in result.error.message
    crash = grade({**spec, "command": ["python3", "-c", "raise SystemExit(3)"]}, "x")
    assert crash.error is not None and "exited with code 3" in crash.error.message


def test_i25_3_transform_checks_its_command_and_member_when_the_suite_loads(
    tmp_path: Path,
) -> None:
    head = "tests:\n  - id: t\n    input: hi\n    assertions:\n"
    (missing,) = load_errors(
        tmp_path,
        head
        + "      - {type: transform, command: [no-such-program-xyz], assertion: {type: is-json}}\n",
    )
    assert missing.endswith("program 'no-such-program-xyz' not found on PATH")
    (reference,) = load_errors(
        tmp_path,
        head + "      - {type: transform, command: [python3], assertion: {type: equals}}\n",
    )
    assert "equals has no `value` and test 't' has no `expected_output`" in reference
