"""AgentV v5 eval files (`providers`, `prompts`, `tests[].vars`, `assert`) load natively as the
v4 model and run offline against the fake OpenAI server (issue 24 item 6).

The fixtures in tests/interop/fixtures/agentv/v5/ are written in v5's shapes. Their provider
`llm` is a label, as in AgentV's examples; the tests define it as an assay target pointing at
the fake server (which echoes the last user message and answers the judge as scripted).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from assay.config import LoadedSuite, load_project, load_suite
from assay.errors import ConfigError
from assay.interop.agentv._v5_catalogue import v4_targets_document
from assay.results import RunResult
from assay.runner import RunOptions, execute, plan_run
from assay.store import MemorySink
from assay.testing import FakeOpenAIServer
from tests.conftest import write

FIXTURES = Path(__file__).parent / "fixtures" / "agentv" / "v5"


def judge(body: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    if "items" in schema.get("properties", {}):
        ids = list(schema["properties"]["items"]["properties"])
        return {
            "items": {
                i: {"score": 9, "satisfied": True, "reasoning": "r", "evidence": ""} for i in ids
            }
        }
    return {"score": 0.9, "reasoning": "r", "hits": [], "misses": []}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    monkeypatch.delenv("ASSAY_JUDGE_MODEL", raising=False)
    with FakeOpenAIServer(judge=judge) as fake:
        yield fake


def run(loaded: LoadedSuite, server: FakeOpenAIServer, tmp_path: Path) -> RunResult:
    """Run with the provider label `llm` defined as a target on the fake server."""
    project = write(
        tmp_path / "assay.yaml",
        f"targets:\n  llm:\n    type: openai\n    model: fake-model\n"
        f"    base_url: {server.base_url}\n",
    )
    options = RunOptions(judge_model="judge", judge_base_url=server.base_url)
    plan = plan_run(loaded, load_project(project), options)
    sink = MemorySink()
    asyncio.run(execute(plan, sink))
    return sink.run


def verdicts(result: RunResult) -> dict[str, str]:
    return {r.case_id: r.verdict for r in result.results}


def document(loaded: LoadedSuite) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(loaded.document)
    return data


def cases_of(loaded: LoadedSuite) -> dict[str, dict[str, Any]]:
    return {t["id"]: t for t in document(loaded)["tests"]}


def warnings(loaded: LoadedSuite) -> list[str]:
    return [str(w) for w in loaded.warnings]


def errors(tmp_path: Path, text: str) -> list[str]:
    path = write(tmp_path / "v5.eval.yaml", text)
    with pytest.raises(ConfigError) as caught:
        load_suite(path)
    return [str(issue) for issue in caught.value.issues]


def test_i24_6_a_v5_file_loads_as_the_v4_model(tmp_path: Path) -> None:
    loaded = load_suite(FIXTURES / "support.eval.yaml")
    doc = document(loaded)
    shown = f"{FIXTURES / 'support.eval.yaml'}"
    assert warnings(loaded)[0] == (
        f"{shown}:7 providers: read as an AgentV v5 eval file (`providers` is v5's); AgentV's "
        "forms are rewritten to assay's, see docs/migrating-from-agentv.md#v5"
    )
    assert (
        f"{shown}:14 evaluate_options.cache: `cache` is ignored: use `assay run --no-cache` or "
        "`--cache-mode`"
    ) in warnings(loaded)
    assert doc["target"] == "llm"
    assert doc["execution"] == {"threshold": 0.6, "concurrency": 2}
    assert doc["assertions"] == [{"type": "latency", "max_ms": 60000}]
    tests = cases_of(loaded)
    refund = tests["refund-greeting"]
    assert refund["input"] == "Hello, I need a refund for order 42"
    assert refund["expected_output"] == "I can help with the refund for order 42."
    assert refund["tags"] == ["support", "v5"]
    assert refund["metadata"]["owner"] == "support"
    assert refund["metadata"]["vars"]["team"] == "billing"
    assert refund["assertions"][:2] == [
        {"type": "contains-any", "value": ["refund", "return"], "case_sensitive": False},
        {"type": "regex", "value": "order \\d+", "name": "order-number", "required": True},
    ]
    assert refund["assertions"][2]["type"] == "rubrics"
    assert refund["assertions"][2]["rubrics"][0]["outcome"] == "Replies politely about the refund"
    status = tests["json-status"]
    assert status["input"][0] == {"role": "system", "content": "You answer with JSON only."}
    user = status["input"][1]["content"]
    assert user.startswith('{"status": "ok", "team": "billing"}\n\n<file path="policy.md">')
    rubric = status["assertions"][2]
    assert rubric["rubrics"][0]["outcome"] == "Returns the status as JSON for the billing team"
    assert rubric["weight"] == 2
    assert tests["no-apology"]["assertions"] == [
        {"type": "contains", "value": "shipping", "negate": True}
    ]


def test_i24_6_a_v5_file_runs_offline_with_the_expected_verdicts(
    server: Any, tmp_path: Path
) -> None:
    loaded = load_suite(FIXTURES / "support.eval.yaml")
    result = run(loaded, server, tmp_path)
    assert verdicts(result) == {
        "refund-greeting": "pass",
        "json-status": "pass",
        "no-apology": "fail",  # the echoed input mentions shipping
    }
    assert {r.threshold for r in result.results} == {0.6}


def test_i24_6_prompts_cross_tests_and_vars_render_nested(server: Any, tmp_path: Path) -> None:
    loaded = load_suite(FIXTURES / "templating.eval.yaml")
    tests = cases_of(loaded)
    assert list(tests) == ["greet-terse", "greet-prompt-2"]
    assert tests["greet-terse"]["input"] == (
        "Answer for users in one sentence: How should I greet Ada?"
    )
    assert tests["greet-prompt-2"]["input"] == [
        {"role": "system", "content": "You write for users."},
        {"role": "user", "content": "How should I greet Ada?"},
    ]
    assert tests["greet-terse"]["metadata"]["prompt"] == "terse"
    assert tests["greet-terse"]["expected_output"] == "Hello, Ada!"
    greet = tests["greet-terse"]["assertions"]
    assert greet[0]["rubrics"][0]["outcome"] == "Greets Ada warmly"
    assert greet[0]["prompt"].startswith("Grade the answer against each rubric item.")
    # the default_test assertion uses vars, so each test gets it rendered
    assert greet[1] == {"type": "icontains", "value": "Ada"}
    result = run(loaded, server, tmp_path)
    assert verdicts(result) == {"greet-terse": "pass", "greet-prompt-2": "pass"}


def test_i24_6_dataset_files_and_scenarios_become_tests(server: Any, tmp_path: Path) -> None:
    loaded = load_suite(FIXTURES / "datasets.eval.yaml")
    tests = cases_of(loaded)
    assert list(tests) == [
        "from-file",
        "from-jsonl",
        "csv-greeting",
        "inline",
        "es-greeting-phrase",
        "fr-greeting-phrase",
    ]
    assert tests["from-jsonl"]["input"] == "Reply on chat"
    assert tests["from-jsonl"]["metadata"]["source"] == "datasets"
    row = tests["csv-greeting"]
    assert row["input"] == "Reply with a HELLO"
    assert row["metadata"]["source"] == "csv"
    assert row["metadata"]["labels"] == ["a", "b"]
    assert row["metadata"]["vars"]["locale"] == "en-US"
    assert row["execution"] == {"threshold": 0.8}
    assert row["assertions"] == [
        {"type": "icontains", "value": "hello", "name": "greeting-1"},
        {"type": "contains-any", "value": ["bye", "ciao"], "name": "greeting-2", "negate": True},
    ]
    assert tests["fr-greeting-phrase"]["input"] == "Say hello in French"
    assert tests["fr-greeting-phrase"]["assertions"] == [{"type": "contains", "value": "French"}]
    result = run(loaded, server, tmp_path)
    assert set(verdicts(result).values()) == {"pass"}


def test_i24_6_trajectory_skill_and_set_assertions_map_to_v4_graders() -> None:
    loaded = load_suite(FIXTURES / "trajectory.eval.yaml")
    graders = cases_of(loaded)["research"]["assertions"]
    assert graders[0] == {
        "type": "tool-trajectory",
        "mode": "superset",
        "expected": [{"tool": "search"}, {"tool": "search"}],
    }
    assert graders[1] == {
        "type": "tool-trajectory",
        "mode": "exact",
        "expected": [{"tool": "search"}, {"tool": "fetch"}],
    }
    assert graders[2]["expected"] == [
        {"tool": "search", "args": {"q": "agentv"}, "args_match": "subset"}
    ]
    read_only = graders[3]
    assert read_only["name"] == "read-only"
    assert [m["negate"] for m in read_only["assertions"]] == [True, True]
    assert read_only["aggregator"] == {"type": "threshold", "threshold": 1.0}
    assert graders[4]["type"] == "composite"
    assert graders[4]["min_score"] == 0.5
    assert graders[5]["type"] == "code-grader"
    assert graders[5]["name"] == "script-check"


def test_i24_6_a_file_mixing_v4_and_v5_keys_is_one_located_error(tmp_path: Path) -> None:
    found = errors(
        tmp_path,
        "name: mixed\nproviders: [llm]\nprompts: ['{{ input }}']\nexecution:\n  target: llm\n"
        "tests:\n  - id: a\n    input: hi\n    assertions:\n      - type: contains\n"
        "        value: hi\n",
    )
    assert found == [
        "v5.eval.yaml:4 execution: this file mixes AgentV v5 keys (`providers`, line 2) with v4 "
        "keys (`execution` here) (also `tests[0].input`, `tests[0].assertions`); AgentV v5 "
        "rejects v4 keys. Write the file in one format: v5 (`providers`, `prompts` with "
        "`tests[].vars`, `assert`) or v4 (`target`, `tests[].input`, `assertions`); see "
        "docs/migrating-from-agentv.md#v5"
    ]


def test_i24_6_keys_agentv_honours_but_assay_lacks_are_located_errors(tmp_path: Path) -> None:
    found = errors(
        tmp_path,
        "name: lacks\nproviders: [llm, other]\nprompts: ['{{ input }}']\n"
        "\n\n\n\n"
        "evaluate_options:\n  wokers: 3\n"
        "tests:\n  - id: a\n    vars: {input: hi}\n    options: {postprocess: output.trim()}\n"
        "    assert:\n      - type: javascript\n        value: output.length > 1\n"
        "  - id: b\n    vars: {question: hi}\n",
    )
    assert found == [
        "v5.eval.yaml:2 providers[1]: assay runs one target per run: keep one provider here and "
        "run the suite again with `--target` for each other one",
        "v5.eval.yaml:9 evaluate_options.wokers: unknown evaluate_options key 'wokers'",
        "v5.eval.yaml:13 tests[0].options.postprocess: `options.postprocess` is not supported: "
        "AgentV removed it; use `transform`",
        "v5.eval.yaml:15 tests[0].assert[0].type: `javascript` is not supported by assay: "
        "rewrite the check as a code-grader (a Python `function` or a `command`)",
        "v5.eval.yaml:18 tests[1].vars: the prompt uses `{{ input }}` and this test's vars have "
        "no `input`",
    ]


def test_i24_6_keys_that_change_no_result_are_warnings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("V5_BASE_URL", "http://127.0.0.1:9/v1")
    path = write(
        tmp_path / "v5.eval.yaml",
        "name: extras\nproviders:\n  - id: openai:chat:gpt-4o-mini\n    label: mini\n"
        "    config: {temperature: 0, apiBaseUrl: '{{ env.V5_BASE_URL }}'}\n"
        "prompts: ['{{ input }}']\ngovernance: {owner: qa}\nderived_metrics:\n"
        "  - {name: ratio, value: a / b}\noutput_path: out.json\n"
        "tests:\n  - id: a\n    vars: {input: hi}\n    assert:\n"
        "      - type: llm-rubric\n      - type: contains\n        value: hi\n",
    )
    loaded = load_suite(path)
    assert warnings(loaded)[1:] == [
        "v5.eval.yaml:7 governance: `governance` is ignored: catalogue metadata; it changes no "
        "result",
        "v5.eval.yaml:8 derived_metrics: `derived_metrics` is ignored: assay reports its own run "
        "metrics; these derived metrics are not computed",
        "v5.eval.yaml:10 output_path: `output_path` is ignored: pass `--json PATH` to `assay run` "
        "or use `assay report`",
        "v5.eval.yaml:15 tests[0].assert[0]: this llm-rubric has no `value` or `prompt`, so "
        "AgentV skips it; assay does too",
    ]
    doc = document(loaded)
    assert doc["target"] == "mini"
    assert doc["targets"]["mini"] == {
        "type": "openai",
        "provider": "openai",
        "model": "gpt-4o-mini",
        "temperature": 0,
        "base_url": "http://127.0.0.1:9/v1",
    }
    assert cases_of(loaded)["a"]["assertions"] == [{"type": "contains", "value": "hi"}]


def test_i24_6_an_assay_suite_with_assert_is_not_read_as_v5(tmp_path: Path) -> None:
    path = write(
        tmp_path / "native.eval.yaml",
        "name: native\ntarget: {type: fake, default: x}\nassert:\n  - type: contains\n"
        "    value: x\ntests:\n  - id: a\n    input: hi\n",
    )
    loaded = load_suite(path)
    assert not any("AgentV" in w for w in warnings(loaded))
    assert document(loaded)["assertions"] == [{"type": "contains", "value": "x"}]


def test_i24_6_a_csv_row_agentv_cannot_grade_is_located_in_the_csv(tmp_path: Path) -> None:
    write(tmp_path / "rows.csv", "id,input,__expected\nok,hi,contains:hi\nbad,hi,fn:output.ok\n")
    found = errors(
        tmp_path,
        "name: rows\nproviders: [llm]\nprompts: ['{{ input }}']\ntests: file://rows.csv\n",
    )
    assert found == [
        "rows.csv:3: inline JavaScript assertions are not supported by assay; write a code-grader"
    ]


def test_i24_6_a_v5_provider_catalogue_reads_as_a_v4_targets_file() -> None:
    catalogue = {
        "providers": [
            {
                "id": "azure",
                "label": "llm",
                "endpoint": "{{ env.AZURE_OPENAI_ENDPOINT }}",
                "model": "gpt-4o",
            },
            {"id": "cli", "label": "agent", "command": "run --prompt {PROMPT}", "cwd": ".."},
        ]
    }
    assert v4_targets_document(catalogue) == {
        "targets": [
            {
                "name": "llm",
                "provider": "azure",
                "endpoint": "${{ AZURE_OPENAI_ENDPOINT }}",
                "model": "gpt-4o",
            },
            {"name": "agent", "provider": "cli", "command": "run --prompt {PROMPT}", "cwd": ".."},
        ]
    }
    v5_targets = {
        "targets": [
            {"id": "base", "provider": "openai", "runtime": "host", "config": {"model": "m"}}
        ]
    }
    assert v4_targets_document(v5_targets) == {
        "targets": [{"name": "base", "provider": "openai", "model": "m"}]
    }
    v4 = {"targets": [{"name": "base", "provider": "openai", "model": "m"}]}
    assert v4_targets_document(v4) is v4
