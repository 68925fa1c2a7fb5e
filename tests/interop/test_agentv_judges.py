"""Issue 24 item 1: the judge of an AgentV eval file is the grader AgentV would call, and
the targets of every AgentV file (v5, dataset-only) are found where AgentV finds them.

AgentV v4 grades with the target's `grader_target`, else the target itself, looked up in the
targets file it read; v5 with `grader_target`, else `defaults.grader` of `.agentv/config.yaml`,
also looked up in the catalogue that config names. Where AgentV has no grader until its
llm-graders run, assay warns at load and gives those graders an `error` verdict.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.config import LoadedSuite, load_project, load_suite
from assay.results import RunResult
from assay.runner import RunOptions, execute, plan_run
from assay.store import MemorySink
from assay.testing import FakeOpenAIServer
from tests.conftest import write

CRITERIA_EVAL = """\
description: d
execution:
  target: {target}
tests:
  - id: greet
    criteria: Says hello to Ada
    input: Say hello to Ada
"""

ECHO = """\
import sys
args = sys.argv[1:]
open(args[args.index("--out") + 1], "w").write("Hello Ada")
"""


def judge(body: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """A passing judgement in the shape the grader asks for (rubric items or one score)."""
    if "items" in schema.get("properties", {}):
        ids = list(schema["properties"]["items"]["properties"])
        item = {"score": 9, "satisfied": True, "reasoning": "r", "evidence": ""}
        return {"items": dict.fromkeys(ids, item)}
    return {"score": 0.9, "reasoning": "greets Ada", "hits": [], "misses": []}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository root; the working directory holds no AgentV file."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "work").mkdir()
    monkeypatch.chdir(root / "work")
    for name in ("GRADER_TARGET", "AV_KEY", "AV_ENDPOINT", "ASSAY_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return root


def document(loaded: LoadedSuite) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(loaded.document)
    return data


def warnings(loaded: LoadedSuite) -> list[str]:
    return [str(w) for w in loaded.warnings]


def run(loaded: LoadedSuite, options: RunOptions | None = None) -> RunResult:
    plan = plan_run(loaded, load_project(), options or RunOptions())
    sink = MemorySink()
    asyncio.run(execute(plan, sink))
    return sink.run


def test_i24_1_the_judge_called_at_run_time_is_the_grader_agentv_calls(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`grader_target: grader`, `grader` delegating with `use_target: ${{ GRADER_TARGET }}`:
    the grading request goes to the model GRADER_TARGET names, and to no other."""
    with FakeOpenAIServer(judge=judge, api_key="sk-j") as server:
        monkeypatch.setenv("AV_ENDPOINT", server.url)
        monkeypatch.setenv("AV_KEY", "sk-j")
        monkeypatch.setenv("GRADER_TARGET", "judge-b")
        model = (
            "    provider: openai\n    endpoint: ${{ AV_ENDPOINT }}\n    api_key: ${{ AV_KEY }}\n"
        )
        write(
            repo / ".agentv" / "targets.yaml",
            "targets:\n"
            "  - name: bot\n    provider: mock\n    response: Hello Ada\n"
            "    grader_target: grader\n"
            "  - name: grader\n    use_target: ${{ GRADER_TARGET }}\n"
            f"  - name: judge-a\n{model}    model: judge-a\n"
            f"  - name: judge-b\n{model}    model: judge-b\n",
        )
        loaded = load_suite(write(repo / "x.eval.yaml", CRITERIA_EVAL.format(target="bot")))
        result = run(loaded)
        models = [body["model"] for body in server.requests]
    case = result.results[0]
    assert (case.output, case.verdict) == ("Hello Ada", "pass")
    assert models == ["judge-b"]


def test_i24_1_a_model_api_target_grades_itself_when_its_grader_target_is_missing(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AgentV v4: a `grader_target` not in the targets file leaves a model API target (one
    that can answer in JSON) to grade itself."""
    monkeypatch.setenv("AV_KEY", "k")
    write(
        repo / ".agentv" / "targets.yaml",
        "targets:\n  - name: gpt\n    provider: openai\n    api_key: ${{ AV_KEY }}\n"
        "    model: self-judge\n    grader_target: nowhere\n",
    )
    loaded = load_suite(write(repo / "x.eval.yaml", CRITERIA_EVAL.format(target="gpt")))
    assert document(loaded)["judge"]["model"] == "self-judge"
    plan_run(loaded, load_project(), RunOptions())


def test_i24_1_no_grader_until_run_time_is_a_warning_and_error_verdicts(repo: Path) -> None:
    """A cli target whose `grader_target` is not in its targets file: AgentV has no grader
    (its llm-graders fail with 'No grader provider available'), so assay loads the file with a
    located warning and the judged grader's verdict is `error`; a judge given to the run is
    used, as `agentv eval --grader-target` would be."""
    write(repo / "tools" / "echo.py", ECHO)
    write(
        repo / ".agentv" / "targets.yaml",
        "targets:\n  - name: local\n    provider: cli\n    grader_target: grader\n"
        f"    command: {sys.executable} ../tools/echo.py --out {{OUTPUT_FILE}}\n",
    )
    path = write(repo / "evals" / "x.eval.yaml", CRITERIA_EVAL.format(target="local"))
    loaded = load_suite(path)
    assert loaded.agentv_targets is not None and loaded.agentv_targets.judge_deferred("local")
    assert (
        f"{path}:3 target: AgentV has no LLM grader for target 'local': its grader_target "
        f"'grader' is not a target of {repo}/.agentv/targets.yaml and a cli target cannot "
        "grade; AgentV fails each llm-grader with 'No grader provider available'. Without a "
        "judge of assay's (--judge-model, ASSAY_JUDGE_MODEL, `judge:` in assay.yaml) every "
        "grader that needs one gets an `error` verdict when it runs"
    ) in warnings(loaded)
    case = run(loaded).results[0]
    assert case.output == "Hello Ada"
    assert case.verdict == "error"
    assert [g.verdict for g in case.grader_results] == ["error"]
    with FakeOpenAIServer(judge=judge) as server:
        given = RunOptions(judge_model="given-judge", judge_base_url=server.base_url)
        case = run(loaded, given).results[0]
        assert [body["model"] for body in server.requests] == ["given-judge"]
    assert case.verdict == "pass"


def test_i24_1_a_mock_grader_is_agentvs_canned_reply_so_it_waits_for_run_time(
    repo: Path,
) -> None:
    """A mock target grades itself in AgentV (mock is among its grader-capable kinds) with its
    canned reply; assay has no such judge, so the file loads and the graders error."""
    write(repo / ".agentv" / "targets.yaml", "targets:\n  - {name: default, provider: mock}\n")
    path = write(repo / "x.eval.yaml", "tests:\n  - id: a\n    criteria: says hi\n    input: hi\n")
    loaded = load_suite(path)
    assert any(
        "AgentV has no LLM grader for target 'default': its grader 'default' is a mock target: "
        "AgentV grades with the mock's canned reply" in w
        for w in warnings(loaded)
    )
    assert run(loaded).results[0].verdict == "error"


def test_i24_1_an_agent_without_a_grader_is_refused_as_agentv_refuses_it(repo: Path) -> None:
    """AgentV refuses to run an agent target with no grader_target when llm-graders need one;
    assay too (no judge configured)."""
    write(repo / ".agentv" / "targets.yaml", "targets:\n  - {name: bot, provider: codex}\n")
    loaded = load_suite(write(repo / "x.eval.yaml", CRITERIA_EVAL.format(target="bot")))
    assert loaded.agentv_targets is not None and not loaded.agentv_targets.judgeless
    with pytest.raises(Exception, match="needs an LLM judge and none is configured"):
        plan_run(loaded, load_project(), RunOptions())


V5_SUITE = """\
name: s
providers:
  - local
prompts:
  - "{{ input }}"
tests:
  - id: a
    vars: {input: hi}
    assert:
      - Says hi back
"""


def test_i24_1_v5_grader_is_defaults_grader_looked_up_in_the_configs_catalogue(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """v5: no grader_target, so `defaults.grader` of `.agentv/config.yaml`; the example's own
    catalogue lacks it, the catalogue the config names (`providers: file://…`) has it."""
    write(
        repo / ".agentv" / "config.yaml",
        "providers: file://providers.yaml\ndefaults:\n  grader: grader\n",
    )
    write(
        repo / ".agentv" / "providers.yaml",
        "- id: openai\n  label: grader\n  base_url: '{{ env.AV_ENDPOINT }}'\n"
        "  api_key: '{{ env.AV_KEY }}'\n  model: judge-v5\n",
    )
    write(repo / "ex" / ".agentv" / "providers.yaml", "- {id: mock, label: local}\n")
    with FakeOpenAIServer(judge=judge, api_key="sk-j") as server:
        monkeypatch.setenv("AV_ENDPOINT", server.url)
        monkeypatch.setenv("AV_KEY", "sk-j")
        loaded = load_suite(write(repo / "ex" / "evals" / "suite.yaml", V5_SUITE))
        assert loaded.suite.target == "local"
        assert document(loaded)["judge"]["model"] == "judge-v5"
        assert run(loaded).results[0].verdict == "pass"
        assert [body["model"] for body in server.requests] == ["judge-v5"]
    # A grader in neither catalogue: AgentV fails each llm-grader ('Grader provider not
    # found') when it runs; assay warns and defers too.
    write(repo / ".agentv" / "config.yaml", "defaults:\n  grader: absent\n")
    loaded = load_suite(repo / "ex" / "evals" / "suite.yaml")
    assert "judge" not in document(loaded)
    assert any(
        f"its grader 'absent' is not a provider of {repo}/ex/.agentv/providers.yaml; AgentV "
        "fails each llm-grader with 'Grader provider not found'" in w
        for w in warnings(loaded)
    )
    plan_run(loaded, load_project(), RunOptions())


def test_i24_1_v5_and_dataset_only_files_look_their_targets_up(repo: Path) -> None:
    """A v5 file with a `name` and its tests in a dataset, and a v4 file whose tests are a
    directory of case folders, have no other AgentV marker: their targets are still looked up
    (v5 also in a bare `providers.yaml` next to the evals, as AgentV's discovery reads)."""
    write(repo / "ex" / "providers.yaml", "- {id: mock, label: llm, response: hi}\n")
    write(
        repo / "ex" / "evals" / "cases.jsonl",
        json.dumps(
            {"id": "a", "vars": {"input": "x"}, "assert": [{"type": "contains", "value": "hi"}]}
        ),
    )
    suite = write(
        repo / "ex" / "evals" / "suite.yaml",
        'name: s\nproviders: [llm]\nprompts: ["{{ input }}"]\ntests: ./cases.jsonl\n',
    )
    loaded = load_suite(suite)
    assert loaded.suite.target == "llm"
    assert loaded.agentv_targets is not None
    assert loaded.agentv_targets.where.endswith("ex/providers.yaml")
    plan_run(loaded, load_project(), RunOptions())

    write(repo / ".agentv" / "targets.yaml", "targets:\n  - {name: default, provider: mock}\n")
    write(repo / "dd" / "cases" / "one" / "case.yaml", "input: hi\nassertions:\n  - hi\n")
    loaded = load_suite(write(repo / "dd" / "EVAL.yaml", "name: d\ntests: ./cases/\n"))
    assert loaded.suite.target == "default"
    plan_run(loaded, load_project(), RunOptions())


def test_i24_1_suite_graders_replace_the_implicit_criteria_grader(repo: Path) -> None:
    """AgentV adds its implicit llm-grader only to a test with no grader at all: a test that
    gets the suite's graders needs no judge."""
    write(repo / ".agentv" / "targets.yaml", "targets:\n  - {name: default, provider: mock}\n")
    path = write(
        repo / "x.eval.yaml",
        "assertions:\n  - {type: contains, value: Mock}\n"
        "tests:\n  - id: a\n    criteria: says hi\n    input: hi\n",
    )
    loaded = load_suite(path)
    assert document(loaded)["tests"][0].get("assertions") in (None, [])
    assert loaded.needs_judge == ()
    assert run(loaded).results[0].verdict == "pass"
    # The same with the tests in a JSONL dataset.
    write(repo / "cases.jsonl", json.dumps({"id": "a", "criteria": "says hi", "input": "hi"}))
    path = write(
        repo / "d.eval.yaml",
        "assertions:\n  - {type: contains, value: Mock}\ntests: ./cases.jsonl\n",
    )
    loaded = load_suite(path)
    assert loaded.needs_judge == ()
    assert run(loaded).results[0].verdict == "pass"


def test_i24_1_execution_targets_entries_delegate_and_bring_their_hooks(repo: Path) -> None:
    """`execution.targets: [{name, use_target, hooks}]`: AgentV adds each name as a target
    delegating to `use_target`, and runs the target's hooks after the workspace's."""
    write(
        repo / ".agentv" / "targets.yaml",
        "targets:\n  - {name: base, provider: mock, response: from-base}\n",
    )
    (repo / "template").mkdir()
    path = write(
        repo / "x.eval.yaml",
        "workspace:\n  template: ./template\n"
        "execution:\n  targets:\n"
        "    - name: variant\n      use_target: base\n"
        "      hooks:\n        before_each:\n          command: [echo, setup]\n"
        "    - name: other\n      use_target: base\n"
        "tests:\n  - id: a\n    input: hi\n    assertions:\n"
        "      - {type: contains, value: from-base}\n",
    )
    loaded = load_suite(path)
    assert loaded.suite.target == "variant"
    assert document(loaded)["targets"]["variant"] == {"type": "fake", "default": "from-base"}
    hooks = document(loaded)["workspace"]["hooks"]
    assert hooks["before_each"]["command"] == ["echo", "setup"]
    assert run(loaded).results[0].verdict == "pass"


def test_i24_1_another_target_picked_with_target_brings_its_own_grader(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`assay run --target` (as `agentv eval --target`) runs another target of the file, and
    AgentV grades it with that target's grader, not the one of the target the file names."""
    monkeypatch.setenv("AV_KEY", "k")
    model = "    provider: openai\n    api_key: ${{ AV_KEY }}\n"
    write(
        repo / ".agentv" / "targets.yaml",
        f"targets:\n  - name: gpt-a\n{model}    model: model-a\n"
        f"  - name: gpt-b\n{model}    model: model-b\n"
        "  - name: local\n    provider: cli\n    command: echo hi > {OUTPUT_FILE}\n"
        "    grader_target: nowhere\n",
    )
    loaded = load_suite(write(repo / "x.eval.yaml", CRITERIA_EVAL.format(target="gpt-a")))
    project = load_project()

    def judge_model(target: str | None) -> str | None:
        judge = plan_run(loaded, project, RunOptions(target=target)).default_judge
        return judge.model if judge else None

    assert judge_model(None) == "model-a"
    assert judge_model("gpt-b") == "model-b"
    # A target AgentV has no grader for: no judge, and the graders error when they run.
    assert judge_model("local") is None
