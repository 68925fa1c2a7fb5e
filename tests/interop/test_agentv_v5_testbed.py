"""AgentV v5's `environment` and `extensions` load as assay workspaces and really run: the
environment's setup once per run, extensions as node/bun hooks (issue 24 item 6).

The fixtures in tests/interop/fixtures/agentv/v5/testbed/ are copied into the test's
temporary directory first: the environment's setup writes into `workdir` as AgentV's does.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

import pytest

from assay.config import LoadedSuite, load_project, load_suite
from assay.errors import ConfigError
from assay.results import RunResult
from assay.runner import RunOptions, execute, plan_run
from assay.store import MemorySink
from assay.testing import FakeOpenAIServer
from tests.conftest import write

FIXTURES = Path(__file__).parent / "fixtures" / "agentv" / "v5" / "testbed"
needs_python3 = pytest.mark.skipif(shutil.which("python3") is None, reason="no python3")
GRADED = "assert: [{type: contains, value: hi}]\n"
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="no node")


@pytest.fixture
def testbed(tmp_path: Path) -> Path:
    root = tmp_path / "testbed"
    shutil.copytree(FIXTURES, root)
    return root


def run(loaded: LoadedSuite, root: Path) -> RunResult:
    """Run with the provider label `agent` as a command target (the stand-in agent)."""
    agent = root / "scripts" / "agent.py"
    project = write(
        root / "assay.yaml",
        f"targets:\n  agent:\n    type: command\n    command: [{sys.executable}, {agent}]\n",
    )
    plan = plan_run(loaded, load_project(project), RunOptions())
    sink = MemorySink()
    asyncio.run(execute(plan, sink))
    for case in sink.run.results:  # kept on failure, as AgentV does: not the test's to keep
        for kept in case.workspaces:
            shutil.rmtree(kept, ignore_errors=True)
    return sink.run


def warnings(loaded: LoadedSuite) -> list[str]:
    return [str(w) for w in loaded.warnings]


def errors(root: Path, text: str) -> list[str]:
    path = write(root / "v5.eval.yaml", text)
    with pytest.raises(ConfigError) as caught:
        load_suite(path)
    return [str(issue) for issue in caught.value.issues]


@needs_python3
def test_i24_6_an_environment_setup_runs_once_and_each_case_works_in_a_copy(
    testbed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TESTBED_GREETING", "hello")
    loaded = load_suite(testbed / "environment.eval.yaml")
    doc = json.loads(loaded.document)
    hooks = doc["workspace"]["hooks"]
    assert list(hooks) == ["before_all"]
    assert hooks["before_all"]["command"][1:3] == ["-m", "assay.interop.agentv._v5_lifecycle"]
    assert doc["workspace"]["keep"] == "on_failure"
    assert any(
        "environment.eval.yaml:5 environment: assay copies `workdir` (after `setup` ran on it "
        "once per run) into a fresh workspace for each case" in w
        for w in warnings(loaded)
    ), warnings(loaded)
    result = run(loaded, testbed)
    by_id = {r.case_id: r for r in result.results}
    assert {k: (r.verdict, r.error) for k, r in by_id.items()} == {
        "reads-setup": ("pass", None),
        "edits-in-its-own-copy": ("pass", None),
    }
    assert "setup output in the workspace" in by_id["reads-setup"].hits
    # the target saw the file the setup wrote (with environment.env), in its own copy
    for case in by_id.values():
        assert case.output is not None
        assert "prepared:hello" in str(case.output)
        assert "saw another case's edit" not in str(case.output)
    # AgentV runs the setup once per run, on `workdir` itself
    assert (testbed / "setup-runs.txt").read_text() == "setup\n"
    assert (testbed / "work" / "PREPARED.txt").read_text() == "prepared:hello\n"
    assert not (testbed / "work" / "EDITED").exists()


@needs_python3
def test_i24_6_a_failed_environment_setup_is_every_case_s_error(
    testbed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TESTBED_GREETING", raising=False)  # empty in AgentV: the setup fails
    result = run(load_suite(testbed / "environment.eval.yaml"), testbed)
    assert {r.verdict for r in result.results} == {"error"}
    for case in result.results:
        assert case.error is not None
        assert "workspace hook before_all" in case.error.message
        assert (
            "environment.setup failed with exit code 1 (python3 ../scripts/setup_env.py): "
            "no greeting to prepare"
        ) in case.error.message
    assert not (testbed / "setup-runs.txt").exists()  # run once, failed for all


@needs_python3
@needs_node
def test_i24_6_extensions_run_as_node_hooks_around_each_case(testbed: Path) -> None:
    loaded = load_suite(testbed / "extensions.eval.yaml")
    doc = json.loads(loaded.document)
    assert list(doc["workspace"]["hooks"]) == ["before_all", "before_each", "after_each"]
    assert any(
        "extensions.eval.yaml:4 extensions: extensions run as workspace hooks: `beforeAll` run "
        "once per case in that case's own workspace" in w
        for w in warnings(loaded)
    ), warnings(loaded)
    assert any("a failing teardown hook is ignored, as in AgentV" in w for w in warnings(loaded))
    result = run(loaded, testbed)
    (case,) = result.results
    # beforeAll and beforeEach wrote into the workspace before the target ran; the failing
    # afterEach is reported by AgentV, not the case's error; agent-rules staged RULES.md
    assert (case.verdict, case.error) == ("pass", None), case
    assert "rules staged" in case.hits


@needs_python3
def test_i24_6_an_extension_whose_interpreter_is_missing_is_a_run_time_error(
    testbed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(testbed / "ext" / "setup.ts", "export function beforeEach(): void {}\n")
    path = write(
        testbed / "ts.eval.yaml",
        "name: ts\nproviders: [agent]\nextensions: ['file://ext/setup.ts:beforeEach']\n"
        "prompts: ['{{ input }}']\ntests:\n  - id: a\n    vars: {input: show x}\n" + GRADED,
    )
    loaded = load_suite(path)  # loads: the interpreter is the run's business
    empty = testbed / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    (case,) = run(loaded, testbed).results
    assert case.verdict == "error"
    assert case.error is not None
    assert "setup.ts:beforeEach needs `bun`, which could not start" in case.error.message


def test_i24_6_environment_recipe_files_docker_and_mistakes(testbed: Path) -> None:
    # a recipe file's workdir resolves from the recipe's directory
    loaded = load_suite(
        write(
            testbed / "evals" / "ref.eval.yaml",
            "name: ref\nproviders: [agent]\nenvironment: file://../recipe.yaml\n"
            "prompts: ['{{ input }}']\ntests:\n  - id: a\n    vars: {input: hi}\n" + GRADED,
        )
    )
    doc = json.loads(loaded.document)
    assert "before_all" in doc["workspace"]["hooks"]
    # Docker: no container here, one located warning; the file still loads
    loaded = load_suite(
        write(
            testbed / "docker.eval.yaml",
            "name: d\nproviders: [agent]\nenvironment:\n  type: docker\n  image: python:3\n"
            "  workdir: /workspace\nprompts: ['{{ input }}']\ntests:\n  - id: a\n"
            "    vars: {input: hi}\n" + GRADED,
        )
    )
    assert json.loads(loaded.document)["workspace"] == {"keep": "on_failure"}
    assert any(
        "docker.eval.yaml:4 environment.type: assay runs the target and graders on this "
        "machine, in a fresh empty workspace per case: the Docker image" in w
        for w in warnings(loaded)
    )
    found = errors(
        testbed,
        "name: bad\nproviders: [agent]\nprompts: ['{{ input }}']\n"
        "environment:\n  type: docker\n  image: python:3\n  workdir: /w\n"
        "  setup: {command: [make]}\n"
        "extensions:\n  - file://nowhere.mjs:beforeAll\n  - file://ext/hooks.mjs:before\n"
        "  - agentv:rules\n"
        "tests:\n  - id: a\n    vars: {input: hi}\n"
        "    environment: {type: host, workdir: ., setup: {command: [], args: [x]}}\n",
    )
    assert [f.removeprefix("testbed/") for f in found] == [
        "v5.eval.yaml:10 extensions[0]: extension module 'nowhere.mjs' not found (looked at "
        f"{testbed / 'nowhere.mjs'})",
        "v5.eval.yaml:11 extensions[1]: the extension must name one of beforeAll, beforeEach, "
        "afterEach, afterAll, not 'before'",
        "v5.eval.yaml:12 extensions[2]: an extension is `file://path/to/module.mjs:beforeAll` "
        "(or beforeEach, afterEach, afterAll) or `agentv:agent-rules`",
        "v5.eval.yaml:8 environment.setup: a docker environment's `setup` runs inside the "
        "container, and assay runs no containers: run it on this machine in a `workspace` hook "
        "instead",
        "v5.eval.yaml:16 tests[0].environment.setup.args: `setup.args` is not supported by "
        "AgentV: put the arguments in `command`",
        "v5.eval.yaml:16 tests[0].environment.setup.command: `command` must be a non-empty list "
        "(the program, then its arguments); use [bash, -lc, '...'] for a shell",
    ]


def test_i24_6_a_test_environment_gives_that_test_its_own_workspace(testbed: Path) -> None:
    loaded = load_suite(
        write(
            testbed / "per-test.eval.yaml",
            "name: t\nproviders: [agent]\nprompts: ['{{ input }}']\ntests:\n"
            "  - id: a\n    vars: {input: hi}\n"
            "    environment: {type: host, workdir: ./work, setup: {command: [make]}}\n"
            "  - id: b\n    vars: {input: hi}\n" + GRADED,
        )
    )
    first, second = json.loads(loaded.document)["tests"]
    assert "before_all" in first["workspace"]["hooks"]
    assert "workspace" not in second


@needs_python3
def test_i24_6_a_provider_s_hooks_run_in_the_case_workspace(
    testbed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    with FakeOpenAIServer() as server:
        monkeypatch.setenv("TESTBED_BASE_URL", server.base_url)
        loaded = load_suite(testbed / "provider-hooks.eval.yaml")
        hooks = json.loads(loaded.document)["workspace"]["hooks"]
        assert list(hooks) == ["before_all", "before_each", "after_each"]
        assert any(
            "provider-hooks.eval.yaml:11 providers[0].hooks.after_each: a failing teardown "
            "hook is ignored, as in AgentV, but assay shows no message for it" in w
            for w in warnings(loaded)
        ), warnings(loaded)
        plan = RunOptions()
        sink = MemorySink()
        asyncio.run(execute(plan_run(loaded, load_project(), plan), sink))
    (case,) = sink.run.results
    assert (case.verdict, case.error) == ("pass", None), case
    assert "hook ran" in case.hits


def test_i24_6_provider_hooks_without_a_workspace_are_not_run(testbed: Path) -> None:
    loaded = load_suite(
        write(
            testbed / "hooks-only.eval.yaml",
            "name: h\nproviders:\n  - id: openai:m\n    hooks:\n"
            "      before_each: {command: make}\n"
            "prompts: ['{{ input }}']\ntests:\n  - id: a\n    vars: {input: hi}\n" + GRADED,
        )
    )
    assert "workspace" not in json.loads(loaded.document)
    assert any(
        "hooks-only.eval.yaml:4 providers[0].hooks: AgentV runs a provider's hooks in the "
        "case's workspace, and this file sets up none" in w
        for w in warnings(loaded)
    ), warnings(loaded)
