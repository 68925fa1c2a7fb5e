"""promptfoo assertions convert into graders that give promptfoo's verdicts (issue 25, items 3
and 5): javascript/python checks run under node / python3 with promptfoo's contract through
the packaged wrappers, transforms reshape the output first, the deterministic types promptfoo
has map to native graders, and thresholds, negation and values keep their meaning.

Each config is converted, loaded by the real loader and run against the local OpenAI-protocol
server, whose replies are keyed by the rendered prompt.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.config import load_project, parse_suite
from assay.interop.promptfoo import Conversion, convert_promptfoo
from assay.results import CaseResult
from assay.runner import RunOptions, execute, plan_run
from assay.store import MemorySink
from assay.testing import FakeOpenAIServer
from tests.conftest import write

NODE = ["node", "--max-old-space-size=512", "promptfoo_wrappers/assertion.cjs"]
PYTHON = ["python3", "promptfoo_wrappers/assertion.py"]


JUDGE = {"score": 0.9, "reasoning": "scripted", "hits": [], "misses": []}
"""Every judged grader's reply."""


def convert(path: Path) -> Conversion:
    return convert_promptfoo(path, display=path.name)


def run(conversion: Conversion, base: Path, replies: dict[str, Any]) -> dict[str, CaseResult]:
    """Write the suite's helper files to `base`, run it there against the fake server; the
    results by case id."""
    for name, text in conversion.files.items():
        write(base / name, text)
    loaded = parse_suite(conversion.suite, base_dir=base)
    with FakeOpenAIServer(replies, judge=JUDGE) as fake, pytest.MonkeyPatch.context() as env:
        env.setenv("OPENAI_API_KEY", "unused")
        env.setenv("ASSAY_JUDGE_MODEL", "judge-model")
        env.setenv("OPENAI_BASE_URL", fake.base_url)
        sink = MemorySink()
        options = RunOptions(judge_base_url=fake.base_url)
        asyncio.run(execute(plan_run(loaded, load_project(), options), sink))
    return {r.case_id: r for r in sink.run.results}


def verdicts(results: dict[str, CaseResult]) -> dict[str, list[str]]:
    """Each case's grader verdicts, in order."""
    return {case: [g.verdict for g in r.grader_results] for case, r in results.items()}


def left_out(conversion: Conversion) -> str:
    return "\n".join(str(w) for w in conversion.warnings if "left out" in str(w))


CONFIG_HEAD = """\
prompts: ["{{q}}"]
providers: [openai:gpt-4o-mini]
"""


# --- item 3: javascript and python ---------------------------------------------------------------


def test_i25_3_javascript_assertions_run_under_node_with_promptfoos_contract(
    tmp_path: Path,
) -> None:
    write(
        tmp_path / "checks.js",
        "module.exports = (output, context) => output.includes(context.vars.city);\n"
        "module.exports.longEnough = (output, context) =>\n"
        "  ({pass: output.length >= context.config.min, score: 0.25, reason: 'length'});\n",
    )
    config = write(
        tmp_path / "promptfooconfig.yaml",
        CONFIG_HEAD
        + """\
tests:
  - description: weather
    vars: {q: Weather in Paris?, city: Paris}
    assert:
      - type: javascript
        value: output.includes(context.vars.city) && context.prompt === 'Weather in Paris?'
      - type: javascript
        value: "const words = output.split(' '); words.length / 10"
        threshold: 0.5
      - type: javascript
        value: |
          if (output.startsWith('Sunny')) {
            return {pass: true, score: 0.1, reason: 'sunny'};
          }
          return false;
      - type: javascript
        value: file://checks.js
      - type: javascript
        value: file://checks.js:longEnough
        config: {min: 100}
      - type: not-javascript
        value: output.length > 0
      - type: javascript
        value: output.length / 1000
""",
    )
    conversion = convert(config)
    graders = conversion.suite["tests"][0]["assertions"]
    assert graders[0] == {
        "type": "code-grader",
        "command": [
            *NODE,
            "--",
            "output.includes(context.vars.city) && context.prompt === 'Weather in Paris?'",
        ],
        "memory_mb": None,
    }
    assert graders[1]["command"][3:6] == ["--threshold", "0.5", "--"]
    assert graders[3]["command"][-1] == "file://checks.js"
    assert graders[4]["command"][3:6] == ["--config", '{"min":100}', "--"]
    assert graders[5]["negate"] is True
    assert left_out(conversion) == ""
    results = run(conversion, tmp_path, {"Weather in Paris?": "Sunny in Paris today, 21 degrees"})
    assert verdicts(results)["weather"] == [
        "pass",  # the expression sees output, context.vars and context.prompt
        "pass",  # 6 words / 10 = 0.6 reaches the threshold 0.5
        "pass",  # a GradingResult passes on `pass`, whatever its score
        "pass",  # module.exports called with (output, context)
        "fail",  # the named export, with the assertion's config: 32 < 100
        "fail",  # not-: the expression is true, so the negation fails
        "pass",  # a number without threshold passes when > 0 (0.032)
    ]
    assert "returned score 0.032 (passes above 0)" in results["weather"].grader_results[6].reasoning


def test_i25_3_python_assertions_run_under_python3_with_promptfoos_contract(
    tmp_path: Path,
) -> None:
    write(
        tmp_path / "grade.py",
        "def get_assert(output, context):\n"
        "    return context['vars']['city'] in output\n\n"
        "def strict(output, context):\n"
        "    return {'pass': True, 'score': 0.4, 'reason': 'lenient judge'}\n",
    )
    config = write(
        tmp_path / "promptfooconfig.yaml",
        CONFIG_HEAD
        + """\
tests:
  - description: weather
    vars: {q: Weather in Oslo?, city: Oslo}
    assert:
      - type: python
        value: context['vars']['city'] in output
      - type: python
        value: |
          words = output.split()
          return len(words) > 3
      - type: python
        value: file://grade.py
      - type: python
        value: file://grade.py:strict
        threshold: 0.5
      - type: python
        value: "'true'"
      - type: not-python
        value: output.endswith('.')
      - type: python
        value: "json.dumps({'pass': 'Oslo' in output, 'score': 1, 'reason': 'JSON text'})"
""",
    )
    conversion = convert(config)
    graders = conversion.suite["tests"][0]["assertions"]
    assert graders[0] == {
        "type": "code-grader",
        "command": [*PYTHON, "--", "context['vars']['city'] in output"],
    }
    assert graders[2]["command"][-1] == "file://grade.py"
    results = run(conversion, tmp_path, {"Weather in Oslo?": "Rain in Oslo all week."})
    assert verdicts(results)["weather"] == [
        "pass",
        "pass",  # a multi-line value is the body of main(output, context)
        "pass",  # get_assert is the default function of a file
        "fail",  # a dict whose score is under the threshold fails, as in promptfoo
        "pass",  # the text "true" is a pass
        "fail",  # not-python: the output ends with '.'
        "pass",  # a dict's JSON text counts as the dict
    ]
    assert "score 0.4 is less than threshold 0.5" in results["weather"].grader_results[3].reasoning


def test_i25_3_a_script_that_raises_is_a_grader_error_not_a_fail(tmp_path: Path) -> None:
    config = write(
        tmp_path / "promptfooconfig.yaml",
        CONFIG_HEAD
        + """\
tests:
  - description: broken
    vars: {q: Hello}
    assert:
      - type: javascript
        value: output.nosuchmethod()
      - type: python
        value: undefined_name in output
""",
    )
    results = run(convert(config), tmp_path, {"Hello": "Hi"})
    case = results["broken"]
    assert case.verdict == "error"
    errors = [g.error.message for g in case.grader_results if g.error is not None]
    assert "output.nosuchmethod is not a function" in errors[0]
    assert "NameError: name 'undefined_name' is not defined" in errors[1]


def test_i25_3_missing_or_typescript_scripts_are_reported_not_guessed(tmp_path: Path) -> None:
    write(tmp_path / "check.ts", "export default () => true;\n")
    config = write(
        tmp_path / "promptfooconfig.yaml",
        CONFIG_HEAD
        + """\
tests:
  - vars: {q: Hello}
    assert:
      - {type: contains, value: Hi}
      - {type: javascript, value: file://check.ts}
      - {type: python, value: file://missing.py}
""",
    )
    text = left_out(convert(config))
    typescript = "'check.ts' is TypeScript; compile it"
    assert f"7 tests[0].assert[1]: left out: assertion `javascript`: {typescript}" in text
    assert "8 tests[0].assert[2]: left out: assertion `python`: 'missing.py' does not exist" in text


# --- item 3: transform ---------------------------------------------------------------------------


def test_i25_3_transforms_apply_as_promptfoo_applies_them(tmp_path: Path) -> None:
    write(
        tmp_path / "pick.py",
        "def get_transform(output, context):\n    return output.split(':')[1].strip()\n",
    )
    config = write(
        tmp_path / "promptfooconfig.yaml",
        CONFIG_HEAD
        + """\
defaultTest:
  options:
    transform: output.trim().toLowerCase()
  assert:
    - type: starts-with
      value: '{'
tests:
  - description: json answer
    vars: {q: Capital of France as JSON}
    assert:
      - type: equals
        value: '{"answer": "paris", "sure": true}'
      - type: equals
        value: paris
        transform: JSON.parse(output).answer
      - type: javascript
        value: output.sure === true && typeof output === 'object'
        transform: JSON.parse(output)
        metric: certainty
        weight: 2
  - description: own transform
    vars: {q: Say the answer}
    options:
      transform: file://pick.py
    assert:
      - type: equals
        value: 42
  - description: old name
    vars: {q: Say the answer}
    options:
      postprocess: output.slice(-2)
    assert:
      - type: equals
        value: 42
""",
    )
    conversion = convert(config)
    suite = conversion.suite
    default = suite["assertions"][0]
    assert default["type"] == "transform"
    assert default["command"] == [*NODE, "--transform", "--", "output.trim().toLowerCase()"]
    assert default["assertion"] == {"type": "starts-with", "value": "{"}
    certainty = suite["tests"][0]["assertions"][2]
    assert (certainty["name"], certainty["weight"]) == ("certainty", 2)
    inner = certainty["assertion"]  # the test's transform runs first, then the assertion's
    assert inner["type"] == "transform" and inner["command"][-1] == "JSON.parse(output)"
    assert inner["assertion"]["type"] == "code-grader"
    own = suite["tests"][1]["assertions"][0]
    assert own["command"] == [*PYTHON, "--transform", "--", "file://pick.py"]
    warned = "\n".join(str(w) for w in conversion.warnings)
    note = "the defaultTest assertions grade this test's output"
    assert f"tests[1].options.transform: approximated: {note}" in warned
    results = run(
        conversion,
        tmp_path,
        {
            "Capital of France as JSON": '  {"answer": "PARIS", "sure": true}\n',
            "Say the answer": "The answer: 42",
        },
    )
    assert verdicts(results) == {
        "json-answer": ["pass", "pass", "pass", "pass"],
        "own-transform": ["pass", "fail"],  # 42 picked; the default one: defaultTest's transform
        "old-name": ["pass", "fail"],  # `postprocess` is the old name of `transform`
    }


# --- item 3: deterministic types -----------------------------------------------------------------


def test_i25_3_deterministic_types_become_native_graders(tmp_path: Path) -> None:
    config = write(
        tmp_path / "promptfooconfig.yaml",
        """\
prompts: ["{{q}}"]
providers:
  - id: openai:gpt-4o-mini
    config:
      tools:
        - type: function
          function:
            name: get_weather
            parameters: {type: object, properties: {city: {type: string}}, required: [city]}
tests:
  - description: xml
    vars: {q: XML please}
    assert:
      - type: is-xml
        value: {requiredElements: [analysis.color]}
      - type: contains-xml
      - type: not-is-sql
  - description: sql
    vars: {q: SQL please}
    assert:
      - type: is-sql
        value: {databaseType: PostgreSQL, allowedTables: ['select::null::users']}
      - type: contains-sql
      - type: bleu
        value: SELECT name FROM users WHERE id = 7
      - type: levenshtein
        value: SELECT name FROM users WHERE id = 8
        threshold: 1
      - type: is-valid-openai-tools-call
""",
    )
    conversion = convert(config)
    xml, sql = conversion.suite["tests"]
    assert xml["assertions"] == [
        {"type": "is-xml", "required_elements": ["analysis.color"]},
        {"type": "contains-xml"},
        {"type": "is-sql", "negate": True},
    ]
    assert sql["assertions"][:4] == [
        {"type": "is-sql", "dialect": "postgres", "allowed_tables": ["select::null::users"]},
        {"type": "is-sql", "strip_code_fence": True},
        {"type": "bleu", "value": "SELECT name FROM users WHERE id = 7", "min_score": 0.5},
        {"type": "levenshtein", "value": "SELECT name FROM users WHERE id = 8", "max_distance": 1},
    ]
    assert sql["assertions"][4]["type"] == "valid-tool-calls"
    assert sql["assertions"][4]["tools"][0]["function"]["name"] == "get_weather"
    results = run(
        conversion,
        tmp_path,
        {
            "XML please": "<analysis><color>red</color></analysis>",
            "SQL please": "SELECT name FROM users WHERE id = 7",
        },
    )
    assert verdicts(results) == {
        "xml": ["pass", "pass", "pass"],
        "sql": ["pass", "pass", "pass", "pass", "fail"],  # no tool call was made
    }


def test_i25_3_word_count_ends_with_and_aliases_map(tmp_path: Path) -> None:
    config = write(
        tmp_path / "promptfooconfig.yaml",
        CONFIG_HEAD
        + """\
tests:
  - description: words
    vars: {q: Three words}
    assert:
      - {type: word-count, value: 3}
      - {type: word-count, value: {min: 4}}
      - {type: not-word-count, value: {min: 1, max: 2}}
      - {type: ends-with, value: here}
      - {type: similar:cosine, value: one two here, threshold: 0.85}
      - {type: model-graded-factuality, value: It says three words}
      - {type: equals, value: {a: [1, true]}}
""",
    )
    conversion = convert(config)
    graders = conversion.suite["tests"][0]["assertions"]
    assert graders[0] == {"type": "regex", "value": r"\s*\S+(?:\s+\S+){2,2}\s*", "full_match": True}
    assert graders[3] == {"type": "ends-with", "value": "here"}
    assert graders[4] == {
        "type": "semantic-similarity",
        "value": "one two here",
        "model": "text-embedding-3-large",
        "min_score": 0.85,
    }
    assert graders[5]["type"] == "llm-grader"
    assert graders[6] == {"type": "json-schema", "schema": {"const": {"a": [1, True]}}}
    results = run(conversion, tmp_path, {"Three words": " one two  here\n"})
    assert verdicts(results)["words"] == ["pass", "fail", "pass", "fail", "pass", "pass", "fail"]


# --- item 5: semantics ---------------------------------------------------------------------------


def test_i25_5_not_rouge_n_and_not_similar_negate_the_comparison_not_the_score(
    tmp_path: Path,
) -> None:
    config = write(
        tmp_path / "promptfooconfig.yaml",
        CONFIG_HEAD
        + """\
tests:
  - description: half overlap
    vars: {q: Colours}
    assert:
      - type: not-rouge-n
        value: red green blue black
        threshold: 0.75
      - type: rouge-n
        value: red green blue black
        threshold: 0.75
      - type: not-similar
        value: red green white pink
        threshold: 1.0
      - type: not-bleu
        value: red green white pink
""",
    )
    conversion = convert(config)
    graders = conversion.suite["tests"][0]["assertions"]
    assert graders[0]["min_score"] == 0.25000001
    assert graders[2]["min_score"] == 1e-8  # passes only below 1.0
    results = run(conversion, tmp_path, {"Colours": "red green white pink"})
    rouge_score = 1 - results["half-overlap"].grader_results[0].score  # negated back
    assert rouge_score == pytest.approx(0.5)  # below 0.75: promptfoo's not-rouge-n passes
    assert verdicts(results)["half-overlap"] == [
        "pass",  # was fail: the score, not the comparison, was negated (1 - 0.5 < 0.75)
        "fail",
        "fail",  # identical text: similarity 1.0 is not below 1.0
        "fail",  # identical text: BLEU 1.0 is not below 0.5
    ]


def test_i25_5_g_eval_threshold_defaults_to_0_7_and_llm_rubric_keeps_the_judges_verdict(
    tmp_path: Path,
) -> None:
    config = write(
        tmp_path / "promptfooconfig.yaml",
        CONFIG_HEAD
        + """\
tests:
  - vars: {q: Hi}
    assert:
      - {type: g-eval, value: Coherent}
      - {type: g-eval, value: Fluent, threshold: 0.9}
      - {type: llm-rubric, value: Polite}
""",
    )
    graders = convert(config).suite["tests"][0]["assertions"]
    assert [g["min_score"] for g in graders] == [0.7, 0.9, 0.5]


def test_i25_5_is_json_keeps_a_string_or_file_schema(tmp_path: Path) -> None:
    write(tmp_path / "schema.yaml", "type: object\nrequired: [city]\n")
    write(tmp_path / "schema.json", '{"type": "object", "required": ["temp"]}')
    config = write(
        tmp_path / "promptfooconfig.yaml",
        CONFIG_HEAD
        + """\
tests:
  - description: weather json
    vars: {q: Weather JSON}
    assert:
      - {type: is-json, value: file://schema.yaml}
      - {type: is-json, value: file://schema.json}
      - type: is-json
        value: '{"type": "object", "properties": {"city": {"type": "integer"}}}'
      - {type: is-json}
      - {type: contains-json, value: file://schema.json}
""",
    )
    conversion = convert(config)
    graders = conversion.suite["tests"][0]["assertions"]
    assert graders == [
        {"type": "json-schema", "schema": {"type": "object", "required": ["city"]}},
        {"type": "json-schema", "schema": {"type": "object", "required": ["temp"]}},
        {
            "type": "json-schema",
            "schema": {"type": "object", "properties": {"city": {"type": "integer"}}},
        },
        {"type": "is-json"},
        {"type": "contains-json", "schema": {"type": "object", "required": ["temp"]}},
    ]
    results = run(conversion, tmp_path, {"Weather JSON": '{"city": "Oslo"}'})
    assert verdicts(results)["weather-json"] == ["pass", "fail", "fail", "pass", "fail"]


def test_i25_5_contains_any_respects_quoting(tmp_path: Path) -> None:
    config = write(
        tmp_path / "promptfooconfig.yaml",
        CONFIG_HEAD
        + """\
tests:
  - description: stock
    vars: {q: Stock?}
    assert:
      - type: contains-any
        value: '"1,000", "out of \"\"stock\"\"", backorder'
      - type: icontains-all
        value: '"1,000", IN STOCK'
      - type: contains-any
        value: '"unterminated, x'
""",
    )
    conversion = convert(config)
    graders = conversion.suite["tests"][0]["assertions"]
    assert graders == [
        {"type": "contains-any", "value": ["1,000", 'out of "stock"', "backorder"]},
        {"type": "contains-all", "value": ["1,000", "IN STOCK"], "case_sensitive": False},
    ]
    assert (
        "tests[0].assert[2]: left out: assertion `contains-any`: contains-any a quoted value "
        "has no closing" in left_out(conversion)
    )
    results = run(conversion, tmp_path, {"Stock?": "We have 1,000 in stock."})
    assert verdicts(results)["stock"] == ["pass", "pass"]  # "1" and "000" were never searched


def test_i25_5_threshold_weight_and_metric_carry_over_and_scoring_functions_are_reported(
    tmp_path: Path,
) -> None:
    config = write(
        tmp_path / "promptfooconfig.yaml",
        CONFIG_HEAD
        + """\
defaultTest:
  assertScoringFunction: file://scoring.js:score
tests:
  - description: weighted
    vars: {q: Weights}
    threshold: 0.6
    assertScoringFunction: file://scoring.py
    assert:
      - {type: contains, value: alpha, weight: 3, metric: has-alpha}
      - {type: contains, value: omega, weight: 1, metric: "{{q}} omega"}
      - {type: rouge-n, value: alpha beta gamma, threshold: 0.3, weight: 0}
""",
    )
    conversion = convert(config)
    case = conversion.suite["tests"][0]
    assert case["assertions"] == [
        {"type": "contains", "value": "alpha", "name": "has-alpha", "weight": 3},
        {"type": "contains", "value": "omega", "name": "Weights omega", "weight": 1},
        {
            "type": "rouge",
            "variant": "rouge1",
            "value": "alpha beta gamma",
            "min_score": 0.3,
            "weight": 0,
        },
    ]
    assert case["execution"] == {"aggregator": {"type": "weighted_average"}, "threshold": 0.6}
    text = left_out(conversion)
    assert (
        "defaultTest.assertScoringFunction: left out: assay scores a case with its aggregator"
        in text
    )
    assert (
        "tests[0].assertScoringFunction: left out: assay scores a case with its aggregator" in text
    )
    results = run(conversion, tmp_path, {"Weights": "alpha only"})
    case_result = results["weighted"]
    assert case_result.score == pytest.approx(0.75)  # (3·1 + 1·0) / 4; weight 0 is not scored
    assert case_result.verdict == "pass"


def test_i25_3_scripts_see_tool_calls_in_openais_shape(tmp_path: Path) -> None:
    """promptfoo's OpenAI provider answers with the tool calls when the model only calls tools."""
    from assay.graders import CodeGrader, GradingContext
    from assay.interop.promptfoo._scripts import wrapper_files
    from assay.results import TargetOutput, ToolCall

    for name, text in wrapper_files().items():
        write(tmp_path / name, text)
    check = (
        "output[0].type === 'function' && output[0].function.name === 'get_weather' && "
        "JSON.parse(output[0].function.arguments).city === 'Oslo'"
    )
    python_check = "output[0]['function']['name'] == 'get_weather'"
    calls = TargetOutput(
        output="", tool_calls=[ToolCall(tool="get_weather", args={"city": "Oslo"})]
    )
    ctx = GradingContext(
        case_id="c", output="", threshold=0.8, target_output=calls, base_dir=tmp_path
    )
    for command in ([*NODE, "--", check], [*PYTHON, "--", python_check]):
        grader = CodeGrader(type="code-grader", command=command, memory_mb=None)
        result = asyncio.run(grader.grade(ctx))
        assert (result.score, result.error) == (1.0, None), command[0]


def test_i25_3_finish_reason_checks_why_the_model_stopped(tmp_path: Path) -> None:
    config = write(
        tmp_path / "promptfooconfig.yaml",
        CONFIG_HEAD
        + """\
tests:
  - description: tools
    vars: {q: Weather in Boston?, reason: TOOL_CALLS}
    assert:
      - type: finish-reason
        value: '{{reason}}'
  - description: cut
    vars: {q: Tell me everything}
    assert:
      - type: finish-reason
        value: stop
      - type: not-finish-reason
        value: length
""",
    )
    conversion = convert(config)
    graders = conversion.suite["tests"][1]["assertions"]
    assert graders == [
        {"type": "finish-reason", "value": "stop"},
        {"type": "finish-reason", "value": "length", "negate": True},
    ]
    assert left_out(conversion) == ""
    replies = {
        "Weather in Boston?": {"tool_calls": [{"name": "get_weather", "arguments": {}}]},
        "Tell me everything": {"content": "It all began", "finish_reason": "length"},
    }
    results = run(conversion, tmp_path, replies)
    assert verdicts(results) == {"tools": ["pass"], "cut": ["fail", "fail"]}


def test_i25_3_moderation_by_another_classifier_is_approximated_or_left_out_loudly(
    tmp_path: Path,
) -> None:
    config = write(
        tmp_path / "promptfooconfig.yaml",
        CONFIG_HEAD
        + """\
tests:
  - description: guard
    vars: {q: Write a tweet}
    assert:
      - type: moderation
        provider: 'replicate:moderation:meta/meta-llama-guard-2-8b:abc'
        value: [S10]
      - type: moderation
        provider: openai:moderation
        value: [harassment]
      - type: moderation
        provider: {id: 'replicate:moderation:meta/llama-guard-4-12b'}
""",
    )
    conversion = convert(config)
    graders = conversion.suite["tests"][0]["assertions"]
    assert graders == [{"type": "moderation", "categories": ["harassment"]}, {"type": "moderation"}]
    dropped = left_out(conversion)
    assert "moderation by `replicate:moderation:meta/meta-llama-guard-2-8b:abc` on its own" in (
        dropped
    )
    assert "promptfooconfig.yaml:7" in dropped
    (approximated,) = [str(w) for w in conversion.warnings if "llama-guard-4" in str(w)]
    assert "checked by OpenAI's moderation endpoint on every category" in approximated


@pytest.mark.parametrize(
    ("kind", "why"),
    [
        ("trace-span-count", "OTLP receiver"),
        ("trajectory:step-count", "OTLP receiver"),
        ("conversation-relevance", "sliding window"),
        ("search-rubric", "searches the web"),
    ],
)
def test_i25_3_checks_assay_cannot_make_faithfully_say_why(
    tmp_path: Path, kind: str, why: str
) -> None:
    config = write(
        tmp_path / "promptfooconfig.yaml",
        CONFIG_HEAD
        + f"""\
tests:
  - vars: {{q: Hi}}
    assert:
      - type: {kind}
        value: {{pattern: '*', min: 1}}
      - type: contains
        value: Hi
""",
    )
    dropped = left_out(convert(config))
    assert dropped.startswith(
        f"promptfooconfig.yaml:6 tests[0].assert[0]: left out: assertion `{kind}`: "
    )
    assert why in dropped


def test_i25_3_a_python_providers_finish_reason_reaches_the_grader(tmp_path: Path) -> None:
    """promptfoo's ProviderResponse carries `finishReason`; the call_api shim hands it on as
    the structured output's `finish_reason`, run as a real subprocess."""
    write(
        tmp_path / "provider.py",
        "def call_api(prompt, options, context):\n"
        "    return {'output': 'It all began', 'finishReason': 'length'}\n",
    )
    done = subprocess.run(
        [sys.executable, "-m", "assay.interop.promptfoo.call_api", "provider.py:call_api"],
        input=json.dumps({"input": "Tell me everything", "metadata": {"vars": {}}}),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    )
    assert json.loads(done.stdout) == {"output": "It all began", "finish_reason": "length"}
