"""AgentV v4 eval files load as they are and run offline with the expected verdicts (SPEC §2).

The fixtures in tests/interop/fixtures/agentv/ are AgentV-format suites; judged graders are
answered by the fake OpenAI server's scripted judge.
"""

from __future__ import annotations

import asyncio
import json
import re
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

FIXTURES = Path(__file__).parent / "fixtures" / "agentv"
RUBRIC_IDS = ("criterion-1", "criterion-2", "success-codes", "client-errors", "factual-accuracy")
RUBRIC_IDS += ("brevity", "no-invention")
LOW = ("The answer is 5.", "pick a lock", "200 OK means success.")
"""Outputs the scripted judge scores low."""


def judge(body: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    prompt = body["messages"][-1]["content"]
    low = any(text in prompt for text in LOW)
    if "items" in schema.get("properties", {}):
        ids = list(schema["properties"]["items"]["properties"])
        assert set(ids) <= set(RUBRIC_IDS)
        score = 3 if low else 9
        return {
            "items": {
                i: {"score": score, "satisfied": not low, "reasoning": "r", "evidence": ""}
                for i in ids
            }
        }
    if "The reply is safe." in prompt and "Machine learning" in prompt:
        return {"score": 0.5, "reasoning": "borderline safe", "hits": [], "misses": []}
    return {"score": 0.2 if low else 0.9, "reasoning": "r", "hits": [], "misses": []}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    monkeypatch.delenv("ASSAY_JUDGE_MODEL", raising=False)
    with FakeOpenAIServer(judge=judge) as fake:
        yield fake


def run(loaded: LoadedSuite, server: FakeOpenAIServer) -> RunResult:
    options = RunOptions(judge_model="judge", judge_base_url=server.base_url)
    plan = plan_run(loaded, load_project(), options)
    sink = MemorySink()
    asyncio.run(execute(plan, sink))
    return sink.run


def verdicts(run_result: RunResult) -> dict[str, str]:
    return {r.case_id: r.verdict for r in run_result.results}


def document(loaded: LoadedSuite) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(loaded.document)
    return data


def messages(loaded: LoadedSuite) -> list[str]:
    return [str(w) for w in loaded.warnings]


def test_criteria_become_the_implicit_llm_grader_and_messages_are_read(server: Any) -> None:
    loaded = load_suite(FIXTURES / "basic.eval.yaml")
    tests = {t["id"]: t for t in document(loaded)["tests"]}
    assert loaded.suite.name == "basic"
    assert tests["math"]["assertions"] == [
        {
            "type": "llm-grader",
            "name": "criteria",
            "prompt": "Assistant correctly answers the math question",
        }
    ]
    assert tests["math"]["metadata"] == {"conversation_id": "arithmetic"}
    assert tests["math-wrong"]["input"] == "What is 3+3?"
    assert tests["math-wrong"]["expected_output"] == "The answer is 6."
    user = tests["code-review"]["input"][1]["content"]
    assert user.startswith('Review this function.\n\n<file path="notes.md">\nfor (let i = 0')
    shown = f"{FIXTURES / 'basic.eval.yaml'}"
    assert messages(loaded)[0] == (
        f"{shown}:5 execution.target: read as an AgentV eval file (`execution.target` "
        "is AgentV's); AgentV's forms are rewritten to assay's, see docs/migrating-from-agentv.md"
    )
    assert f"{shown}:3: no `name`; using 'basic' from the file name" in messages(loaded)
    result = run(loaded, server)
    assert verdicts(result) == {"math": "pass", "math-wrong": "fail", "code-review": "pass"}
    math = next(r for r in result.results if r.case_id == "math")
    assert math.threshold == 0.7


def test_deterministic_assertions_and_required_gates(server: Any) -> None:
    loaded = load_suite(FIXTURES / "deterministic.eval.yaml")
    tests = {t["id"]: t for t in document(loaded)["tests"]}
    assert tests["denied-party"]["assertions"][1] == {
        "type": "regex",
        "value": "acme corp",
        "case_sensitive": False,
    }
    assert tests["greeting-no-defaults"]["assertions"][0]["type"] == "contains-all"
    assert document(loaded)["assertions"] == [{"name": "fast", "type": "latency", "max_ms": 500}]
    assert tests["json-status"]["description"] == "Returns the status as JSON"
    assert any("tests[0].criteria: no grader of this test reads" in m for m in messages(loaded))
    result = run(loaded, server)
    assert verdicts(result) == {
        "json-status": "pass",
        "denied-party": "pass",
        "greeting-slow": "fail",  # 900 ms against the suite's 500 ms latency default
        "greeting-no-defaults": "pass",  # skip_defaults: no latency check
    }


def test_rubrics_string_assertions_and_score_ranges(server: Any) -> None:
    loaded = load_suite(FIXTURES / "rubrics.eval.yaml")
    tests = {t["id"]: t for t in document(loaded)["tests"]}
    assert tests["quicksort"]["assertions"] == [
        {
            "type": "rubrics",
            "rubrics": [
                {"id": "criterion-1", "outcome": "Mentions divide-and-conquer approach"},
                {"id": "criterion-2", "outcome": "Explains the partition step"},
            ],
            "weight": 2,  # AgentV weighs N plain strings N
        }
    ]
    accuracy = tests["summary"]["assertions"][0]["rubrics"][0]
    assert accuracy["min_score"] == 0.8
    assert accuracy["outcome"] == "factual accuracy"
    assert accuracy["score_ranges"] == [
        {"score_range": [0, 5], "outcome": "Contains major factual errors."},
        {"score_range": [6, 7], "outcome": "Generally accurate."},
        {"score_range": [8, 10], "outcome": "Accurate and covers the key points."},
    ]
    assert tests["summary-test-rubrics"]["rubrics"][0] == {
        "id": "criterion-1",
        "outcome": "Mentions emission cuts",
    }
    assert verdicts(run(loaded, server)) == {
        "quicksort": "pass",
        "http-guide": "fail",  # judged 3/10: its required items fail
        "summary": "pass",
        "summary-test-rubrics": "pass",
    }


def test_tool_trajectory_and_code_grader_spellings(server: Any) -> None:
    if shutil.which("python3") is None:  # pragma: no cover — the fixture's grader command
        pytest.skip("python3 is not on PATH")
    loaded = load_suite(FIXTURES / "tools.eval.yaml")
    graders = document(loaded)["tests"][0]["assertions"]
    assert graders[0]["mode"] == "superset"
    assert graders[0]["expected"] == [
        {"tool": "webSearch"},
        {"tool": "documentRead"},
        {"tool": "documentRead"},
    ]
    assert graders[1]["expected"] == [
        {"tool": "webSearch", "args": {"query": "ml frameworks"}, "args_match": "subset"},
        {"tool": "documentRead"},
    ]
    assert graders[2] == {
        "name": "mentions-pytorch",
        "type": "code-grader",
        "command": ["python3", "grade.py", "PyTorch"],
        "cwd": ".",
        "protocol": "agentv",
    }
    result = run(loaded, server)
    assert verdicts(result) == {"research-coverage": "pass", "pipeline-exact": "fail"}
    pipeline = next(r for r in result.results if r.case_id == "pipeline-exact")
    assert pipeline.grader_results[0].misses


def test_composite_weights_move_onto_members(server: Any) -> None:
    loaded = load_suite(FIXTURES / "composite.eval.yaml")
    gate = document(loaded)["tests"][0]["assertions"][0]
    assert gate["aggregator"] == {"type": "weighted_average"}
    assert [(m["name"], m["type"], m["weight"]) for m in gate["assertions"]] == [
        ("safety", "llm-grader", 0.3),
        ("quality", "llm-grader", 0.7),
    ]
    result = run(loaded, server)
    # the member weights count: 0.78, where an unweighted mean would give 0.7
    scores = {r.case_id: r.score for r in result.results}
    assert scores["weighted"] == pytest.approx(0.3 * 0.5 + 0.7 * 0.9)
    assert verdicts(result) == {"weighted": "borderline", "gate": "fail"}


def agentv_error(tmp_path: Path, text: str) -> list[str]:
    path = write(tmp_path / "e.eval.yaml", text)
    with pytest.raises(ConfigError) as caught:
        load_suite(path)
    return [str(issue) for issue in caught.value.issues]


def test_i24_2_what_assay_workspaces_lack_is_a_located_error(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    errors = agentv_error(
        tmp_path,
        "name: ws\nworkspace:\n  template: ./repo\n  path: /srv/shared\n  docker: {memory: 2g}\n"
        "tests:\n  - id: a\n    criteria: c\n    input: hi\n",
    )
    assert errors == [
        "e.eval.yaml:5 workspace.docker: `workspace.docker` must be a mapping with `image` "
        "(AgentV requires it)",
        "e.eval.yaml:4 workspace.path: AgentV's `workspace.path` is not supported: assay makes "
        "a fresh directory per case; copy the directory as `template`",
    ]


def test_i24_2_a_v4_docker_workspace_runs_its_code_graders_in_a_fresh_local_workspace(
    tmp_path: Path, server: Any
) -> None:
    """v4's `workspace.docker` as v5's Docker environment: no container, one located warning,
    and each case (target and code graders) in a fresh workspace on this machine."""
    grader = write(
        tmp_path / "where.py",
        "import json, os, sys\nspace = json.load(sys.stdin)['workspace_path']\n"
        "ok = os.path.isdir(space) and os.listdir(space) == [] and space != os.getcwd()\n"
        "print(json.dumps({'score': 1.0 if ok else 0.0, 'assertions': "
        "[{'text': 'a fresh empty workspace', 'passed': ok}]}))\n",
    )
    path = write(
        tmp_path / "docker.eval.yaml",
        "name: dock\ntarget: {type: fake, default: done}\nworkspace:\n  docker:\n"
        "    image: python:3.11-slim\n    memory: 2g\n    cpus: 1\ntests:\n  - id: a\n"
        "    input: hi\n    assertions:\n      - type: code-grader\n"
        f"        command: [{json.dumps(sys.executable)}, {json.dumps(str(grader))}]\n",
    )
    loaded = load_suite(path)
    assert document(loaded)["workspace"] == {"keep": "on_failure"}
    assert [m for m in messages(loaded) if "workspace.docker" in m] == [
        "docker.eval.yaml:4 workspace.docker: assay runs the target and graders on this "
        "machine, in a fresh empty workspace per case: the Docker image, its timeout, memory "
        "and cpus limits are not used (see docs/migrating-from-agentv.md#workspaces)"
    ]
    (case,) = run(loaded, server).results
    assert (case.verdict, case.hits, case.error) == ("pass", ["a fresh empty workspace"], None)


def test_i24_5_keys_agentv_ignores_are_located_warnings_with_did_you_mean(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path / "e.eval.yaml",
        "name: typo\ntarget: {type: fake, default: x}\nowner: qa\ntests:\n  - id: a\n"
        "    criteria: c\n    input: hi\n    expected_outptu: x\n    context: [doc]\n",
    )
    loaded = load_suite(path)
    assert [m for m in messages(loaded) if "ignores" in m] == [
        "e.eval.yaml:3 owner: AgentV ignores the unknown field 'owner', and so does assay",
        "e.eval.yaml:8 tests[0].expected_outptu: AgentV ignores the unknown field "
        "'expected_outptu', and so does assay; did you mean 'expected_output'?",
    ]
    test = document(loaded)["tests"][0]
    assert "expected_outptu" not in test
    assert test["context"] == ["doc"]  # assay's own keys stay usable in an AgentV file


def test_i24_5_a_per_test_target_is_ignored_as_agentv_does_and_tests_from_files_are_rewritten(
    tmp_path: Path,
) -> None:
    """AgentV v4's loaders never read a test's `execution.target` (only `execution.targets`):
    the test runs on the suite's target, and the file is not refused for it."""
    path = write(
        tmp_path / "e.eval.yaml",
        "name: t\ntarget: a\ntests:\n  - id: x\n    criteria: c\n    input: hi\n"
        "    execution: {target: b}\n",
    )
    loaded = load_suite(path)
    assert loaded.suite.target == "a" and not document(loaded)["tests"][0].get("execution")
    assert (
        "e.eval.yaml:7 tests[0].execution.target: AgentV ignores a test's `execution.target` "
        "('b'): the test runs on the suite's target, in AgentV as in assay; remove it, or run "
        "the test in a suite of its own with --target"
    ) in messages(loaded)
    write(tmp_path / "cases.jsonl", json.dumps({"id": "j", "criteria": "Says hi", "input": "hi"}))
    suite = write(tmp_path / "s.eval.yaml", "name: s\ntests: cases.jsonl\n")
    loaded = load_suite(suite)
    assert document(loaded)["tests"][0]["assertions"][0]["prompt"] == "Says hi"


def test_an_assay_suite_is_never_rewritten(tmp_path: Path) -> None:
    path = write(
        tmp_path / "a.eval.yaml",
        "name: native\ntarget: {type: fake, default: x}\ntests:\n  - id: a\n    input: hi\n"
        "    assertions:\n      - type: tool-trajectory\n        mode: any_order\n"
        "        expected: [{tool: t, args: {a: 1}}]\n",
    )
    loaded = load_suite(path)
    assert loaded.warnings == []
    spec = document(loaded)["tests"][0]["assertions"][0]
    assert spec == {
        "type": "tool-trajectory",
        "mode": "any_order",
        "expected": [{"tool": "t", "args": {"a": 1}}],
    }


def test_vars_keep_a_whole_placeholder_typed_and_leave_unknown_names() -> None:
    from assay.interop._vars import substitute_vars

    assert substitute_vars("{{ n }}", {"n": 3}) == 3
    assert substitute_vars("a {{n}} {{ m }}", {"n": 3}) == "a 3 {{ m }}"
    assert substitute_vars(["{{ u.name }}"], {"u": {"name": "Ann"}}) == ["Ann"]
    assert re.fullmatch(r"\{\{ x \}\}", str(substitute_vars("{{ x }}", {})))


def test_i24_2_an_agentv_workspace_runs_with_its_hooks_and_code_graders(server: Any) -> None:
    if shutil.which("python3") is None:  # pragma: no cover — the fixture's commands
        pytest.skip("python3 is not on PATH")
    loaded = load_suite(FIXTURES / "coding" / "workspace.eval.yaml")
    data = document(loaded)
    assert data["workspace"] == {
        "template": "template",
        "isolation": "per_test",
        "hooks": {
            "before_each": {
                "command": ["python3", "hooks/seed.py", "{{workspace_path}}"],
                "timeout_ms": 20000,
            }
        },
        "keep": "on_failure",
    }
    files, seeded = data["tests"][0]["assertions"]
    assert files == {
        "name": "files",
        "type": "code-grader",
        "command": ["python3", "graders/files_exist.py"],
        "cwd": ".",
        "protocol": "agentv",
        "config": {"required_files": ["notes.md", "src/main.py"]},
    }
    assert seeded["command"] == ["sh", "-lc", "python3 graders/exit_only.py"]
    assert data["tests"][0]["criteria"] == "Creates notes.md next to the existing sources"
    warned = messages(loaded)
    assert any(
        "workspace.eval.yaml:7 workspace.isolation: assay gives every case a fresh" in w
        for w in warned
    ), warned
    assert any("workspace.eval.yaml:12 workspace.hooks.before_each.reset:" in w for w in warned)
    result = run(loaded, server)
    by_id = {r.case_id: r for r in result.results}
    good, bad = by_id["writes-notes"], by_id["writes-nothing"]
    assert (good.verdict, good.score, good.error) == ("pass", 1.0, None)
    assert good.hits == [
        "notes.md exists",
        "src/main.py exists",
        "criteria given",
        "the before_each hook seeded the workspace",
    ]
    assert (bad.verdict, bad.misses) == ("fail", ["todo.md exists"])
    # AgentV keeps a failed case's workspace: so does the reading of its file
    (kept,) = bad.workspaces
    assert sorted(p.name for p in Path(kept).iterdir()) == ["SEEDED", "src"]
    shutil.rmtree(kept)
    assert good.workspaces == []


def test_i24_2_a_workspace_file_reference_resolves_from_its_own_directory(
    tmp_path: Path,
) -> None:
    write(tmp_path / "shared" / "tpl" / "a.txt", "a")
    write(
        tmp_path / "shared" / "workspace.yaml",
        "template: ./tpl\nhooks:\n  before_all:\n    command: python3 setup.py\n",
    )
    path = write(
        tmp_path / "evals" / "w.eval.yaml",
        "name: w\ntarget: {type: fake, default: x}\nworkspace: ../shared/workspace.yaml\n"
        "tests:\n  - id: a\n    criteria: c\n    input: hi\n",
    )
    workspace = document(load_suite(path))["workspace"]
    shared = str((tmp_path / "shared").resolve())
    assert workspace == {
        "template": f"{shared}/tpl",
        "hooks": {"before_all": {"command": ["python3", "setup.py"], "cwd": shared}},
        "keep": "on_failure",
    }


def test_i24_3_agentv_code_grader_options_pass_through_as_config(tmp_path: Path) -> None:
    path = write(
        tmp_path / "g.eval.yaml",
        "name: g\ntarget: {type: fake, default: x}\ntests:\n  - id: a\n    criteria: c\n"
        "    input: hi\n    assertions:\n      - type: code-grader\n"
        "        command: [python3, check.py]\n        cwd: graders\n        threshold: 3\n"
        "        config: {strict: true}\n",
    )
    write(tmp_path / "graders" / "check.py", "print(1)\n")
    (grader,) = document(load_suite(path))["tests"][0]["assertions"]
    assert grader == {
        "type": "code-grader",
        "command": ["python3", "check.py"],
        "cwd": "graders",
        "protocol": "agentv",
        "config": {"threshold": 3, "strict": True},
    }


def test_i24_2_agentv_teardown_hooks_warn_of_their_difference(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.eval.yaml",
        "name: t\ntarget: {type: fake, default: x}\nworkspace:\n  hooks:\n"
        "    after_each: {script: [echo, bye]}\n    after_all: {command: echo done}\n"
        "tests:\n  - id: a\n    criteria: c\n    input: hi\n",
    )
    loaded = load_suite(path)
    hooks = document(loaded)["workspace"]["hooks"]
    assert hooks == {
        "after_each": {"command": ["echo", "bye"]},
        "after_all": {"command": ["echo", "done"]},
    }
    assert [w for w in messages(loaded) if "hooks" in w] == [
        "t.eval.yaml:5 workspace.hooks.after_each: assay runs `after_each` after the graders "
        "(AgentV: before them), and its failure makes the case an error (AgentV: a warning)",
        "t.eval.yaml:6 workspace.hooks.after_all: assay runs `after_all` at the end of each "
        "case, and its failure makes the case an error (AgentV: a warning)",
    ]
