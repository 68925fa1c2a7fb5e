"""Issue 24 item 5: the keys AgentV v4 accepts load, and those it ignores are warnings.

Suites run offline: `fake` targets answer, and the fake OpenAI server plays the judge.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from assay.config import LoadedSuite, load_project, load_suite
from assay.errors import ConfigError
from assay.results import RunResult
from assay.runner import RunOptions, execute, plan_run
from assay.store import MemorySink
from assay.testing import FakeOpenAIServer
from tests.conftest import write


def document(loaded: LoadedSuite) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(loaded.document)
    return data


def messages(loaded: LoadedSuite) -> list[str]:
    return [str(w) for w in loaded.warnings]


def run(loaded: LoadedSuite, server: FakeOpenAIServer | None = None) -> RunResult:
    options = RunOptions(
        judge_model="judge" if server else None,
        judge_base_url=server.base_url if server else None,
    )
    sink = MemorySink()
    asyncio.run(execute(plan_run(loaded, load_project(), options), sink))
    return sink.run


def suite(tmp_path: Path, text: str) -> LoadedSuite:
    return load_suite(write(tmp_path / "s.eval.yaml", text))


def test_i24_5_governance_key_is_accepted_and_every_test_inherits_it(tmp_path: Path) -> None:
    loaded = suite(
        tmp_path,
        "name: red-team\ngovernance:\n  risk_tier: high\n  mitre_atlas: [AML.T0051]\n"
        "  controls: [NIST]\nmetadata: {owner: security, governance: {risk_tier: low}}\n"
        "execution: {target: bot}\ntargets:\n  bot: {type: fake, default: nope}\ntests:\n"
        "  - id: a\n    input: hi\n    assertions: [{type: contains, value: nope}]\n"
        "    metadata:\n      governance: {mitre_atlas: [AML.T0075], risk_tier: medium}\n"
        "  - id: b\n    input: hi\n    assertions: [{type: contains, value: nope}]\n",
    )
    tests = {t["id"]: t for t in document(loaded)["tests"]}
    # AgentV: top-level governance wins over metadata.governance; lists concatenate suite
    # first, mappings merge, the test's scalars win
    assert tests["a"]["metadata"] == {
        "governance": {
            "mitre_atlas": ["AML.T0051", "AML.T0075"],
            "risk_tier": "medium",
            "controls": ["NIST"],
        },
        "owner": "security",
    }
    assert tests["b"]["metadata"] == {
        "owner": "security",
        "governance": {"risk_tier": "high", "mitre_atlas": ["AML.T0051"], "controls": ["NIST"]},
    }
    assert {r.case_id: r.verdict for r in run(loaded).results} == {"a": "pass", "b": "pass"}


def test_i24_5_the_metadata_keys_of_agentv_files_load(tmp_path: Path) -> None:
    loaded = suite(
        tmp_path,
        "$schema: agentv-eval-v2\nname: meta\ndescription: d\ncategory: c\nversion: '1'\n"
        "author: me\nlicense: MIT\nrequires: {agentv: '>=4'}\ntags: [x]\nevaluator: llm_grader\n"
        "execution: {target: bot}\ntargets:\n  bot: {type: fake, default: ok}\ntests:\n"
        "  - id: a\n    suite: group-1\n    expected_outcome: Says ok\n    input: hi\n",
    )
    test = document(loaded)["tests"][0]
    assert test["metadata"] == {"suite": "group-1"}
    assert test["tags"] == ["x"]
    assert test["assertions"] == [{"type": "llm-grader", "name": "criteria", "prompt": "Says ok"}]


def test_i24_5_trials_become_repeats(tmp_path: Path) -> None:
    loaded = suite(
        tmp_path,
        "name: t\nexecution:\n  target: bot\n  trials: {count: 3, strategy: pass_at_k, "
        "cost_limit_usd: 1}\ntargets:\n  bot: {type: fake, default: ok}\ntests:\n"
        "  - id: a\n    input: hi\n    assertions: [{type: contains, value: ok}]\n",
    )
    execution = document(loaded)["execution"]
    assert (execution["repeat"], execution["repeat_strategy"]) == (3, "pass_at_k")
    assert (
        "s.eval.yaml:4 execution.trials.cost_limit_usd: AgentV stops further trials past this "
        "cost; assay runs every repeat (SPEC §1.4)" in messages(loaded)
    )
    result = run(loaded)
    assert len(result.results[0].samples) == 3


def test_i24_5_an_llm_graders_target_is_a_warning_and_the_suite_judge_grades(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = suite(
        tmp_path,
        "name: j\nexecution: {target: bot}\ntargets:\n  bot: {type: fake, default: ok}\ntests:\n"
        "  - id: a\n    criteria: Says ok\n    input: hi\n    assertions:\n"
        "      - {type: llm-grader, target: grader_gpt, max_steps: 5}\n",
    )
    assert [m.split(": ", 1)[0] for m in messages(loaded) if "not applied" in m] == [
        "s.eval.yaml:10 tests[0].assertions[0].target",
        "s.eval.yaml:10 tests[0].assertions[0].max_steps",
    ]
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    verdict = {"score": 0.9, "reasoning": "r", "hits": [], "misses": []}
    with FakeOpenAIServer(judge=verdict) as server:
        assert run(loaded, server).results[0].verdict == "pass"


TOOLS = (
    "name: tools\nexecution: {target: bot}\ntargets:\n  bot:\n    type: fake\n    default:\n"
    "      output: done\n      tool_calls:\n"
    "        - {tool: search, args: {query: ml, limit: 5, opts: {lang: en}}}\n"
    "tests:\n"
)


def trajectory(expected: str) -> str:
    return (
        f"  - id: t\n    input: go\n    assertions:\n      - type: tool-trajectory\n"
        f"        mode: in_order\n        expected:\n{expected}"
    )


def test_i24_5_args_match_as_agentv_reads_it(tmp_path: Path) -> None:
    cases = {
        # AgentV 4.42 compares args exactly by default
        "          - {tool: search, args: {query: ml}}\n": "fail",
        # superset: the call may add keys (assay's subset)
        "          - {tool: search, args: {query: ml}, args_match: superset}\n": "pass",
        # a key list compares only the listed (dotted) keys
        "          - tool: search\n            args: {query: ml, limit: 9, opts: {lang: en}}\n"
        "            argsMatch: [query, opts.lang]\n": "pass",
        "          - {tool: search, args: {query: ai}, args_match: [query]}\n": "fail",
    }
    for expected, verdict in cases.items():
        loaded = suite(tmp_path, TOOLS + trajectory(expected))
        assert run(loaded).results[0].verdict == verdict, expected


def test_i24_5_args_match_subset_is_a_located_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        suite(tmp_path, TOOLS + trajectory("          - {tool: search, args_match: subset}\n"))
    assert [str(i) for i in caught.value.issues] == [
        "s.eval.yaml:17 tests[0].assertions[0].expected[0].args_match: AgentV's subset (the "
        "call may leave out expected keys but add none) has no assay equivalent; use superset "
        "(the call may add keys) or exact"
    ]


def test_i24_5_a_target_matrix_runs_on_its_first_target_and_says_so(tmp_path: Path) -> None:
    loaded = suite(
        tmp_path,
        "name: m\nexecution:\n  targets: [a, b]\n  cache: false\n  budget_usd: 5\n"
        "  fail_on_error: true\ntargets:\n  a: {type: fake, default: ok}\n"
        "  b: {type: fake, default: ok}\ntests:\n  - id: t\n    criteria: c\n    input: hi\n",
    )
    assert loaded.suite.target == "a"
    shown = [m for m in messages(loaded) if "execution." in m and "read as" not in m]
    assert shown[0].startswith("s.eval.yaml:4 execution.cache: `cache` is not applied")
    assert shown[1].startswith("s.eval.yaml:5 execution.budget_usd: `budget_usd` is not applied")
    assert shown[2].startswith("s.eval.yaml:6 execution.fail_on_error: `fail_on_error` is not")
    assert shown[3] == (
        "s.eval.yaml:3 execution.targets: AgentV runs every test on each of 2 target(s); an "
        "assay run has one target, this one runs on 'a'; run it again with --target b for the "
        "others"
    )


def test_i24_5_field_accuracy_in_agentv_notation(tmp_path: Path) -> None:
    loaded = suite(
        tmp_path,
        "name: f\nexecution: {target: bot}\ntargets:\n  bot:\n    type: fake\n    default: "
        '\'{"invoice": {"date": "2025-01-15", "num": "A1"}, "items": [{"sku": "x"}]}\'\n'
        "tests:\n  - id: t\n    input: extract\n    expected_output:\n"
        "      - role: assistant\n        content: {invoice: {date: 15-JAN-2025, num: A1}, "
        "items: [{sku: x}], note: n}\n    assertions:\n      - type: field-accuracy\n"
        "        fields:\n"
        "          - {path: invoice.date, match: date, formats: [DD-MMM-YYYY, YYYY-MM-DD]}\n"
        "          - {path: invoice.num, match: exact, required: true}\n"
        "          - {path: 'items[0].sku', match: exact}\n"
        "          - {path: note, match: exact, required: false, weight: 0}\n",
    )
    fields = document(loaded)["tests"][0]["assertions"][0]["fields"]
    assert [(f["path"], f.get("formats")) for f in fields] == [
        ("$.invoice.date", ["%d-%b-%Y", "%Y-%m-%d"]),
        ("$.invoice.num", None),
        ("$.items[0].sku", None),
        ("$.note", None),
    ]
    assert any(
        m.startswith("s.eval.yaml:19 tests[0].assertions[0].fields[3].required: AgentV leaves")
        for m in messages(loaded)
    )
    assert run(loaded).results[0].verdict == "pass"


def test_i24_5_agentv_prompt_variables_criteria_and_metadata_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompt = "Criteria: {{criteria}}\nMeta: {{ metadata_json }}\n{{ output }}\n"
    write(tmp_path / "judge.md", prompt)
    loaded = suite(
        tmp_path,
        "name: v\nexecution: {target: bot}\ntargets:\n  bot: {type: fake, default: ok}\n"
        "assertions:\n  - {type: llm-grader, prompt: 'file://judge.md'}\ntests:\n"
        "  - id: a\n    criteria: 'Says {{ ok }}'\n    input: hi\n    metadata: {lang: en}\n",
    )
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    prompts: list[str] = []

    def judge(body: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
        prompts.append(body["messages"][-1]["content"])
        return {"score": 1.0, "reasoning": "r", "hits": [], "misses": []}

    with FakeOpenAIServer(judge=judge) as server:
        assert run(loaded, server).results[0].verdict == "pass"
    assert "Criteria: Says {{ ok }}\nMeta: " in prompts[0]
    assert '"lang": "en"' in prompts[0] or "lang" in prompts[0]


def test_i24_5_prompt_variables_assay_lacks_are_located_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        suite(
            tmp_path,
            "name: v\nexecution: {target: bot}\ntargets:\n  bot: {type: fake, default: ok}\n"
            "tests:\n  - id: a\n    input: hi\n    assertions:\n"
            "      - {type: llm-grader, prompt: 'Check {{ tool_calls }} against {{ output }}'}\n",
        )
    assert [str(i) for i in caught.value.issues] == [
        "s.eval.yaml:9 tests[0].assertions[0].prompt: the prompt uses AgentV's "
        "`{{ tool_calls }}`, which assay's judge prompts do not have (grade tool calls with a "
        "`tool-trajectory` grader)"
    ]


def test_i24_5_skill_trigger_in_an_agentv_file(tmp_path: Path) -> None:
    loaded = suite(
        tmp_path,
        "name: skills\nexecution: {target: agent}\ntargets:\n  agent:\n    type: fake\n"
        "    responses:\n      analyse: {output: done, tool_calls: [{tool: Skill, args: "
        "{skill: csv-analyzer}}]}\n      hello: hi\ntests:\n"
        "  - id: used\n    criteria: c\n    input: analyse\n    assertions:\n"
        "      - {type: skill_trigger, skill: csv-analyzer}\n"
        "  - id: not-used\n    criteria: c\n    input: hello\n    assertions:\n"
        "      - {type: skill-trigger, skill: csv-analyzer, should_trigger: false}\n",
    )
    assert {r.case_id: r.verdict for r in run(loaded).results} == {
        "used": "pass",
        "not-used": "pass",
    }


def test_i24_5_a_conversations_input_goes_before_its_first_turn(tmp_path: Path) -> None:
    loaded = suite(
        tmp_path,
        "name: c\nexecution: {target: bot}\ntargets:\n  bot: {type: fake, default: ok}\n"
        "tests:\n  - id: t\n    mode: conversation\n    input:\n"
        "      - {role: system, content: Be a tutor.}\n    turns:\n"
        "      - input: What is 15% of 200?\n        assertions: [Says 30]\n"
        "      - input: Double it.\n        assertions: [Says 60]\n",
    )
    turns = document(loaded)["tests"][0]["turns"]
    assert turns[0]["input"] == [
        {"role": "system", "content": "Be a tutor."},
        {"role": "user", "content": "What is 15% of 200?"},
    ]
    assert turns[1]["input"] == "Double it."


def test_i24_5_options_a_grader_does_not_have_are_warnings(tmp_path: Path) -> None:
    loaded = suite(
        tmp_path,
        "name: g\nexecution: {target: bot}\ntargets:\n  bot: {type: fake, default: ok}\n"
        "tests:\n  - id: t\n    input: hi\n    assertions:\n"
        "      - {type: contains, value: ok, id: CHECK_OK}\n",
    )
    assert (
        "s.eval.yaml:9 tests[0].assertions[0].id: AgentV ignores `id` on a contains grader, and "
        "so does assay" in messages(loaded)
    )
    assert run(loaded).results[0].verdict == "pass"


def test_i24_5_v5_keys_are_not_dropped_as_ignored_v4_keys(tmp_path: Path) -> None:
    """v5's keys are read by the v5 reader, never warned away as keys AgentV v4 ignores; a v4
    file with `defaults` (which v4 ignores) stays a v4 file."""
    loaded = suite(
        tmp_path,
        "providers: [openai:gpt-4.1]\nprompts: ['{{ q }}']\ntests:\n  - vars: {q: hi}\n"
        "    assert: [{type: contains, value: hi}]\n",
    )
    assert not any("AgentV ignores" in m for m in messages(loaded))
    assert loaded.suite.tests[0].input == "hi"
    loaded = suite(
        tmp_path,
        "name: v4\ndefaults: {x: 1}\nexecution: {target: bot}\ntargets:\n"
        "  bot: {type: fake, default: ok}\ntests:\n  - id: t\n    criteria: c\n    input: hi\n",
    )
    assert (  # v4 ignores it (as AgentV v4.42's own autoresearch example has it)
        "s.eval.yaml:2 defaults: AgentV ignores the unknown field 'defaults', and so does assay"
        in messages(loaded)
    )


def test_i24_5_rubric_operators_are_said_in_the_outcome(tmp_path: Path) -> None:
    loaded = suite(
        tmp_path,
        "name: r\nexecution: {target: bot}\ntargets:\n  bot: {type: fake, default: ok}\n"
        "tests:\n  - id: t\n    input: hi\n    assertions:\n      - type: rubrics\n"
        "        criteria:\n"
        "          - {id: a, operator: correctness, outcome: States revenue rose}\n"
        "          - {id: b, operator: contradiction, outcome: Margin fell to 42%}\n",
    )
    items = document(loaded)["tests"][0]["assertions"][0]["rubrics"]
    assert items == [
        {"id": "a", "outcome": "States revenue rose"},
        {
            "id": "b",
            "outcome": "The answer makes no claim that contradicts this (it need not mention "
            "it): Margin fell to 42%",
        },
    ]
    assert any(
        m.startswith("s.eval.yaml:12 tests[0].assertions[0].criteria[1].operator: assay's rubric")
        for m in messages(loaded)
    )


def test_i24_5_execution_metrics_exploration_options_load(tmp_path: Path) -> None:
    loaded = suite(
        tmp_path,
        "name: m\nexecution: {target: bot}\ntargets:\n  bot:\n    type: fake\n    default:\n"
        "      output: done\n      tool_calls: [{tool: Read}, {tool: Edit}]\ntests:\n"
        "  - id: t\n    input: hi\n    assertions:\n      - type: execution_metrics\n"
        "        target_exploration_ratio: 0.6\n        exploration_tolerance: 0.2\n",
    )
    assert run(loaded).results[0].verdict == "pass"  # ratio 0.5, within 0.2 of 0.6
