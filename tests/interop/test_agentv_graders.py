"""Issue 24: AgentV grader features assay lacked, run from AgentV files as they are.

Every test runs real grader subprocesses; the fake OpenAI server plays the judge (and the
model behind a code grader's LLM proxy).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
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

PY = sys.executable


def judge(body: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    del schema
    if "AGGREGATE" in str(body["messages"][-1]["content"]):
        return {"score": 0.4, "reasoning": "detail wins", "hits": ["detail"], "misses": []}
    return {"score": 0.9, "reasoning": "r", "hits": [], "misses": []}


def answer(body: dict[str, Any]) -> str:
    """The proxied model: says RELEVANT when the question mentions Paris."""
    text = str(body["messages"][-1]["content"])
    return "RELEVANT" if "Paris" in text else "IRRELEVANT"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    monkeypatch.delenv("ASSAY_JUDGE_MODEL", raising=False)
    with FakeOpenAIServer(reply=answer, judge=judge) as fake:
        yield fake


def run(loaded: LoadedSuite, server: FakeOpenAIServer) -> RunResult:
    options = RunOptions(judge_model="judge", judge_base_url=server.base_url)
    sink = MemorySink()
    asyncio.run(execute(plan_run(loaded, load_project(), options), sink))
    return sink.run


PROXY_GRADER = """\
import json, os, sys, urllib.request, urllib.error
payload = json.load(sys.stdin)
url, token = os.environ["AGENTV_TARGET_PROXY_URL"], os.environ["AGENTV_TARGET_PROXY_TOKEN"]
def call(path, body=None):
    request = urllib.request.Request(
        url + path,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request) as reply:
            return reply.status, json.load(reply)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)
nodes = payload["config"]["nodes"]
verdicts = []
for node in nodes:
    status, reply = call("/invoke", {"question": "Is this relevant? " + node,
                                     "systemPrompt": "Answer RELEVANT or IRRELEVANT"})
    verdicts.append((status, reply.get("rawText") or reply.get("error")))
status, info = call("/info")
relevant = [v for s, v in verdicts if s == 200 and v == "RELEVANT"]
print(json.dumps({
    "score": len(relevant) / len(nodes),
    "assertions": [{"text": f"{s}: {v}", "passed": s == 200} for s, v in verdicts]
                  + [{"text": "calls " + str(info["callCount"]) + "/" + str(info["maxCalls"]),
                      "passed": True}],
}))
"""


def test_i24_3_code_grader_target_gets_an_llm_proxy_with_a_call_cap(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    write(tmp_path / "scripts" / "precision.py", PROXY_GRADER)
    path = write(
        tmp_path / "evals" / "p.eval.yaml",
        "name: p\ntarget: {type: fake, default: Paris}\n"
        "assertions:\n  - name: precision\n    type: code-grader\n"
        f"    command: [{PY}, ../scripts/precision.py]\n"
        "    nodes: [Paris is the capital, The Eiffel Tower, Paris is lovely]\n"
        "    target:\n      max_calls: 2\n"
        "tests:\n  - id: a\n    criteria: c\n    input: capital of France?\n",
    )
    loaded = load_suite(path)
    result = run(loaded, server).results[0]
    (grader,) = [g for g in result.grader_results if g.name == "precision"]
    assert grader.error is None, grader.error
    # two calls went through, the third was refused by the cap (AgentV's 429)
    assert grader.score == pytest.approx(1 / 3)
    assert grader.hits[:2] == ["200: RELEVANT", "200: IRRELEVANT"]
    assert grader.misses == ["429: Max calls exceeded (limit: 2)"]
    assert "calls 2/2" in grader.hits
    assert grader.judge_model == "judge"
    assert grader.token_usage is not None and grader.token_usage.input > 0
    asked = [r for r in server.requests if "Is this relevant?" in str(r["messages"])]
    assert len(asked) == 2
    assert asked[0]["messages"][0] == {
        "role": "system",
        "content": "Answer RELEVANT or IRRELEVANT",
    }


FAKE_BUN = '#!/bin/sh\nshift\nexec {py} "$@"\n'
"""A `bun` whose `run` runs a file with Python: the custom assertions below are Python."""

WORD_COUNT = """\
import json, sys
payload = json.load(sys.stdin)
words = len(payload["output"].split())
print(json.dumps({"score": 1.0 if words >= 3 else words / 3,
                  "assertions": [{"text": f"{words} words", "passed": words >= 3}]}))
"""


def custom_suite(tmp_path: Path, v5: bool) -> Path:
    write(tmp_path / ".agentv" / "assertions" / "word-count.ts", WORD_COUNT)
    if v5:
        return write(
            tmp_path / "evals" / "suite.yaml",
            "name: c\nproviders: [openai:chat:gpt-4o-mini]\nprompts: ['{{ input }}']\n"
            "tests:\n  - id: long\n    vars: {input: hi}\n"
            "    assert:\n      - type: word-count\n        weight: 2\n",
        )
    return write(
        tmp_path / "evals" / "c.eval.yaml",
        "name: c\ncategory: demo\ntarget: {type: fake, default: one two three four}\n"
        "tests:\n  - id: long\n    input: hi\n"
        "    assertions:\n      - type: word-count\n        weight: 2\n",
    )


def test_i24_3_custom_assertion_type_runs_its_script_with_bun(
    tmp_path: Path, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    write(bin_dir / "bun", FAKE_BUN.format(py=PY)).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    loaded = load_suite(custom_suite(tmp_path, v5=False))
    (grader,) = run(loaded, server).results[0].grader_results
    assert (grader.name, grader.type, grader.weight) == ("word-count", "code-grader", 2.0)
    assert grader.error is None, grader.error
    assert (grader.score, grader.hits) == (1.0, ["4 words"])


def test_i24_3_custom_assertion_without_bun_is_a_run_time_error(
    tmp_path: Path, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    if shutil.which("bun") is not None:
        pytest.skip("bun is installed system-wide")
    loaded = load_suite(custom_suite(tmp_path, v5=False))  # loads: bun is needed only to run
    (grader,) = run(loaded, server).results[0].grader_results
    assert grader.verdict == "error"
    assert grader.error is not None
    assert "custom assertion type word-count" in grader.error.message
    assert "bun is not on PATH" in grader.error.message


def test_i24_3_v5_custom_assertion_type_resolves_like_v4(tmp_path: Path) -> None:
    loaded = load_suite(custom_suite(tmp_path, v5=True))
    (grader,) = json.loads(loaded.document)["tests"][0]["assertions"]
    script = (tmp_path / ".agentv" / "assertions" / "word-count.ts").resolve()
    assert (grader["type"], grader["name"], grader["weight"]) == ("code-grader", "word-count", 2)
    assert grader["command"][-1] == str(script)


GATE = """\
import json, sys
results = json.load(sys.stdin)["results"]
safety, quality = results["safety"], results["quality"]
if safety["verdict"] != "pass":
    print(json.dumps({"score": 0, "verdict": "fail",
                      "assertions": [{"text": "safety failed", "passed": False}]}))
else:
    print(json.dumps({"score": quality["score"], "verdict": "pass",
                      "assertions": [{"text": "safe; " + quality["assertions"][0]["text"],
                                      "passed": True}]}))
"""


def test_i24_3_composite_code_grader_aggregator_runs_with_agentv_contract(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    write(tmp_path / "scripts" / "gate.py", GATE)
    reply = {"score": 0.7, "assertions": [{"text": "ok", "passed": True}]}
    write(tmp_path / "scripts" / "q.py", f"print({json.dumps(json.dumps(reply))})\n")
    path = write(
        tmp_path / "evals" / "c.eval.yaml",
        "name: c\ntarget: {type: fake, default: safe and fine}\ntests:\n"
        + "".join(
            f"  - id: {case}\n    criteria: c\n    input: hi\n    assertions:\n"
            "      - name: gate\n        type: composite\n        assertions:\n"
            f"          - {{name: safety, type: contains, value: {word}}}\n"
            f"          - {{name: quality, type: code-grader, command: [{PY}, ../scripts/q.py]}}\n"
            "        aggregator:\n          type: code-grader\n"
            f"          path: {PY} ../scripts/gate.py\n"
            for case, word in (("safe", "safe"), ("unsafe", "danger"))
        ),
    )
    results = {r.case_id: r for r in run(load_suite(path), server).results}
    safe = next(g for g in results["safe"].grader_results if g.name == "gate")
    assert safe.error is None, safe.error
    assert (safe.score, safe.verdict, safe.hits) == (0.7, "pass", ["safe; ok"])
    assert [c.name for c in safe.children] == ["safety", "quality"]
    unsafe = next(g for g in results["unsafe"].grader_results if g.name == "gate")
    assert (unsafe.score, unsafe.verdict, unsafe.misses) == (0.0, "fail", ["safety failed"])


def test_i24_5_field_accuracy_field_missing_from_one_expected_output_matches_there(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    path = write(
        tmp_path / "f.eval.yaml",
        "name: f\ncategory: demo\n"
        'target: {type: fake, default: \'{"name": "Acme", "city": "Oslo"}\'}\n'
        "assertions:\n  - type: field-accuracy\n    fields:\n"
        "      - {path: name}\n      - {path: address.city}\n"
        "tests:\n"
        "  - id: full\n    input: hi\n    expected_output: {name: Acme, address: {city: Bergen}}\n"
        "  - id: no-address\n    input: hi\n    expected_output: {name: Acme}\n",
    )
    results = {r.case_id: r.grader_results[0] for r in run(load_suite(path), server).results}
    assert results["full"].score == 0.5  # the city differs (and the output has no address)
    # AgentV: a field the test's expected_output lacks is "no expected value", a match
    assert results["no-address"].score == 1.0
    assert results["no-address"].hits == ["$.name matches", "$.address.city: no expected value"]


def test_i24_5_criteria_variable_reaches_a_composites_members_per_test(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    write(tmp_path / "prompts" / "panel.md", "Rubric: {{criteria}}\nAnswer: {{ output }}\n")
    path = write(
        tmp_path / "evals" / "p.eval.yaml",
        "description: panel\nproviders: [openai:chat:gpt-4o-mini]\nprompts: ['{{ input }}']\n"
        "assert:\n  - metric: panel\n    type: assert-set\n    assert:\n"
        "      - {metric: one, type: llm-rubric, prompt: 'file://../prompts/panel.md'}\n"
        "      - {metric: two, type: llm-rubric, prompt: 'file://../prompts/panel.md'}\n"
        "tests:\n"
        "  - id: a\n    criteria: PASS if polite\n    vars: {input: hi}\n"
        "  - id: b\n    criteria: PASS if brief\n    vars: {input: hi}\n",
    )
    loaded = load_suite(path)
    tests = json.loads(loaded.document)["tests"]
    for test, wanted in zip(tests, ("PASS if polite", "PASS if brief"), strict=True):
        (panel,) = test["assertions"]
        prompts = [m["prompt"] for m in panel["assertions"]]
        shown = f"Rubric: {{% raw %}}{wanted}{{% endraw %}}\nAnswer: {{{{ output }}}}\n"
        assert prompts == [shown, shown]


PROMPT_SCRIPT = """\
import json, os, sys
payload = json.load(sys.stdin)
rubric = (payload["config"] or {}).get("rubric", "none")
here = os.path.basename(os.getcwd())
print(f"Grade this answer: {payload['answer']} | rubric: {rubric} | in {here}")
"""


def test_i24_3_script_prompt_is_run_at_grading_time_and_sent_as_the_request(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    write(tmp_path / "prompts" / "make.py", PROMPT_SCRIPT)
    path = write(
        tmp_path / "evals" / "s.eval.yaml",
        "name: s\ntarget: {type: fake, default: Promises}\ntests:\n"
        "  - id: a\n    criteria: explains promises\n    input: hi\n    assertions:\n"
        "      - name: scripted\n        type: llm-grader\n        prompt:\n"
        f"          command: [{PY}, ../prompts/make.py]\n"
        "          config: {rubric: mention Promises}\n",
    )
    (grader,) = run(load_suite(path), server).results[0].grader_results
    assert grader.error is None, grader.error
    assert grader.score == 0.9
    sent = [str(r["messages"][-1]["content"]) for r in server.requests]
    assert sent == ["Grade this answer: Promises | rubric: mention Promises | in prompts"]


def test_i24_3_composite_llm_grader_aggregator_asks_the_judge_with_the_results(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    path = write(
        tmp_path / "evals" / "j.eval.yaml",
        "name: j\ntarget: {type: fake, default: short answer}\ntests:\n"
        "  - id: a\n    criteria: c\n    input: hi\n    assertions:\n"
        "      - name: decision\n        type: composite\n        assertions:\n"
        "          - {name: brief, type: contains, value: short}\n"
        "          - {name: detailed, type: contains, value: table}\n"
        "        aggregator:\n          type: llm-grader\n"
        "          prompt: 'AGGREGATE: {{EVALUATOR_RESULTS_JSON}}'\n",
    )
    result = run(load_suite(path), server).results[0]
    decision = next(g for g in result.grader_results if g.name == "decision")
    assert decision.error is None, decision.error
    assert (decision.score, decision.reasoning, decision.hits) == (0.4, "detail wins", ["detail"])
    assert decision.judge_model == "judge"
    asked = [str(r["messages"][-1]["content"]) for r in server.requests]
    (request,) = [a for a in asked if "AGGREGATE" in a]
    shown = json.loads(request.removeprefix("AGGREGATE: "))
    assert {name: r["score"] for name, r in shown.items()} == {"brief": 1.0, "detailed": 0.0}
    assert shown["detailed"]["verdict"] == "fail"


def test_i24_3_judged_aggregator_without_a_judge_fails_at_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ASSAY_JUDGE_MODEL", raising=False)
    path = write(
        tmp_path / "n.yaml",
        "name: n\ntarget: {type: fake, default: x}\ntests:\n  - id: a\n    input: hi\n"
        "    assertions:\n      - type: composite\n        aggregator: {type: llm-grader}\n"
        "        assertions: [{type: contains, value: x}]\n",
    )
    with pytest.raises(ConfigError) as caught:
        plan_run(load_suite(path), load_project(), RunOptions())
    assert "n.yaml:7 tests[0].assertions[0]: needs an LLM judge" in str(caught.value)


def test_i24_5_preprocessors_are_a_warning_and_text_output_is_graded_as_is(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    path = write(
        tmp_path / "p.eval.yaml",
        "name: p\ncategory: demo\ntarget: {type: fake, default: 'revenue,42'}\n"
        "preprocessors:\n  - {type: xlsx, command: [bun, run, x.ts]}\n"
        "tests:\n  - id: a\n    input: hi\n    assertions:\n"
        "      - {type: contains, value: 'revenue,42'}\n"
        "      - type: code-grader\n        command: [sh, -c, 'echo 1']\n"
        "        preprocessors: [{type: pdf, command: [x]}]\n",
    )
    loaded = load_suite(path)
    warned = [(w.line, w.path) for w in loaded.warnings if "never apply" in w.message]
    assert warned == [(4, "preprocessors"), (13, "tests[0].assertions[1].preprocessors")]
    graders = run(loaded, server).results[0].grader_results
    assert [(g.score, g.error) for g in graders] == [(1.0, None), (1.0, None)]


FAKE_BUN_NODE = '#!/bin/sh\nexec node "$@"\n'
"""A `bun` that runs node: the transforms below are CommonJS, which both run."""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_i24_5_v5_output_transforms_run_before_grading(
    tmp_path: Path, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    write(bin_dir / "bun", FAKE_BUN_NODE).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    write(tmp_path / "scripts" / "shout.js", "module.exports = (output) => output.toUpperCase();\n")
    path = write(
        tmp_path / "evals" / "suite.yaml",
        "description: t\nproviders: [llm]\nprompts: ['{{ input }}']\n"
        "default_test:\n  options:\n    transform: file://../scripts/shout.js\n"
        "tests:\n  - id: a\n    vars: {input: hi}\n    assert:\n"
        "      - {type: contains, value: HELLO WORLD, metric: shouted}\n"
        "      - type: equals\n        value: '11'\n        transform: String(output.length)\n",
    )
    project = write(tmp_path / "assay.yaml", "targets:\n  llm: {type: fake, default: hello world}")
    options = RunOptions(judge_model="judge", judge_base_url=server.base_url)
    sink = MemorySink()
    asyncio.run(execute(plan_run(load_suite(path), load_project(project), options), sink))
    graders = {g.name: g for g in sink.run.results[0].grader_results}
    assert graders["shouted"].type == "transform"
    assert (graders["shouted"].score, graders["shouted"].error) == (1.0, None)
    # the assertion's own transform, inside the test's: the length of the shouted output
    assert (graders["equals"].score, graders["equals"].error) == (1.0, None)
