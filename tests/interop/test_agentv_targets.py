"""AgentV targets files (issue 24 item 1): found the way AgentV finds them, `${{ VAR }}`
resolved as AgentV resolves it, every provider kind mapped to an assay target.

Each test builds a small repository in tmp_path: `.git`, `.agentv/targets.yaml`, eval files
below it; the working directory is an empty directory of that repository, as when AgentV runs
there.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.config import LoadedSuite, load_project, load_suite
from assay.errors import ConfigError
from assay.results import RunResult
from assay.runner import RunOptions, execute, missing_keys, plan_run
from assay.store import MemorySink
from assay.testing import FakeOpenAIServer
from tests.conftest import write

EVAL = """\
description: {description}
{execution}tests:
  - id: greet
    criteria: Says hello
    input: Say hello to Ada
    assertions:
      - type: contains
        value: {expected}
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository root (it has `.git`); the working directory is a directory of it that
    holds no AgentV file, so only the lookup from the eval file counts."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "work").mkdir()
    monkeypatch.chdir(root / "work")
    for name in ("AGENT_TARGET", "AV_MODEL", "AV_KEY", "AV_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    return root


def eval_file(
    path: Path, *, target: str | None = None, expected: str = "Ada", description: str = "d"
) -> Path:
    execution = f"execution:\n  target: {target}\n" if target else ""
    text = EVAL.format(execution=execution, expected=expected, description=description)
    return write(path, text)


def run(loaded: LoadedSuite, target: str | None = None) -> RunResult:
    plan = plan_run(loaded, load_project(), RunOptions(target=target))
    sink = MemorySink()
    asyncio.run(execute(plan, sink))
    return sink.run


def spec(loaded: LoadedSuite, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(loaded.document)
    target: dict[str, Any] = data["targets"][name]
    return target


def test_i24_1_targets_file_is_looked_up_from_the_eval_file_up_to_the_repository_root(
    repo: Path,
) -> None:
    write(
        repo.parent / ".agentv" / "targets.yaml",
        "targets:\n  - {name: default, provider: mock, response: outside}\n",
    )
    write(
        repo / ".agentv" / "targets.yaml",
        "targets:\n  - {name: default, provider: mock, response: root}\n",
    )
    deep = eval_file(repo / "evals" / "a" / "b" / "x.eval.yaml")
    loaded = load_suite(deep)
    assert loaded.suite.target == "default"
    assert spec(loaded, "default") == {"type": "fake", "default": "root"}
    assert loaded.agentv_targets is not None
    assert loaded.agentv_targets.where.endswith("repo/.agentv/targets.yaml")
    # A nearer file wins, also as plain targets.yaml.
    write(
        repo / "evals" / "a" / "targets.yaml",
        "targets:\n  - {name: default, provider: mock, response: near}\n",
    )
    assert spec(load_suite(deep), "default") == {"type": "fake", "default": "near"}
    # Nothing above the repository root is read: without the root's file, no target.
    (repo / ".agentv" / "targets.yaml").unlink()
    (repo / "evals" / "a" / "targets.yaml").unlink()
    loaded = load_suite(deep)
    with pytest.raises(ConfigError) as caught:
        plan_run(loaded, load_project(), RunOptions())
    message = str(caught.value)
    assert "unknown target 'default': not in any targets.yaml or .agentv/targets.yaml" in message
    assert "up to the repository root" in message and str(repo) in message


def test_i24_1_env_references_and_dotenv_files(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(
        repo / ".agentv" / "targets.yaml",
        "targets:\n"
        "  - name: default\n"
        "    use_target: ${{ AGENT_TARGET }}\n"
        "  - name: llm\n"
        "    provider: openai\n"
        "    endpoint: ${{ AV_ENDPOINT }}\n"
        "    api_key: ${{ AV_KEY }}\n"
        "    model: ${{AV_MODEL}}\n"
        "    temperature: 0\n"
        "  - name: canned\n"
        "    provider: mock\n"
        "    response: prefix-${{ AV_MODEL }}\n",
    )
    write(repo / ".env", "AV_MODEL=from-root-dotenv\nAGENT_TARGET=llm\nAV_KEY=sk-dotenv\n")
    write(repo / "evals" / ".env", "export AV_MODEL='from-near-dotenv'\n")
    path = eval_file(repo / "evals" / "x.eval.yaml")
    monkeypatch.delenv("AV_KEY", raising=False)
    loaded = load_suite(path)
    assert loaded.suite.target == "default"
    # use_target followed through ${{ AGENT_TARGET }}; the nearest .env wins; an unset
    # optional endpoint falls back to OpenAI's; only whole-value references are replaced.
    assert spec(loaded, "default") == {
        "type": "openai",
        "provider": "openai",
        "model": "from-near-dotenv",
        "base_url": "https://api.openai.com/v1",
        "api_key_env": "AV_KEY",
        "temperature": 0.0,
    }
    assert spec(loaded, "canned")["default"] == "prefix-${{ AV_MODEL }}"
    # The key variable only a .env file gives is exported, as AgentV loads .env files.
    assert os.environ["AV_KEY"] == "sk-dotenv"
    # The environment wins over .env files.
    monkeypatch.setenv("AV_MODEL", "from-environment")
    assert spec(load_suite(path), "llm")["model"] == "from-environment"
    # An unset variable of the selected target: a located error when the run is planned.
    (repo / ".env").unlink()
    monkeypatch.delenv("AGENT_TARGET", raising=False)
    loaded = load_suite(path)
    with pytest.raises(ConfigError) as caught:
        plan_run(loaded, load_project(), RunOptions())
    shown = str(caught.value)
    assert ".agentv/targets.yaml:3 targets[0].use_target: target 'default': " in shown
    assert "`use_target: ${{ AGENT_TARGET }}` but AGENT_TARGET is not set" in shown
    # --target picks another target of the file, as `agentv eval --target` does.
    assert run(loaded, target="canned").results[0].output == "prefix-${{ AV_MODEL }}"


KINDS = [
    (
        "provider: openai\n    base_url: http://127.0.0.1:9/api/\n    api_key: ${{ AV_KEY }}\n"
        "    model: gpt-x\n    max_output_tokens: 50",
        {"type": "openai", "provider": "openai", "model": "gpt-x",
         "base_url": "http://127.0.0.1:9/api/v1", "api_key_env": "AV_KEY", "max_tokens": 50},
    ),
    (
        "provider: azure\n    endpoint: myres\n    api_key: ${{ AV_KEY }}\n    model: dep\n"
        "    version: 2024-06-01",
        {"type": "openai", "provider": "azure", "model": "dep", "api_version": "2024-06-01",
         "base_url": "https://myres.openai.azure.com", "api_key_env": "AV_KEY"},
    ),
    (
        "provider: anthropic\n    api_key: ${{ AV_KEY }}\n    model: claude-x",
        {"type": "anthropic", "provider": "anthropic", "model": "claude-x",
         "api_key_env": "AV_KEY"},
    ),
    (
        "provider: google-gemini\n    api_key: ${{ AV_KEY }}",
        {"type": "openai", "provider": "gemini", "model": "gemini-2.5-flash",
         "api_key_env": "AV_KEY"},
    ),
    (
        "provider: openrouter\n    api_key: ${{ AV_KEY }}\n    model: x/y",
        {"type": "openai", "provider": "openrouter", "model": "x/y", "api_key_env": "AV_KEY"},
    ),
    ("provider: mock\n    response: hi", {"type": "fake", "default": "hi"}),
    (
        "provider: agentv\n    model: openai:gpt-y",
        {"type": "openai", "provider": "openai", "model": "gpt-y", "temperature": 0},
    ),
]  # fmt: skip


@pytest.mark.parametrize(("definition", "expected"), KINDS, ids=lambda v: str(v)[:20])
def test_i24_1_model_provider_kinds_map_onto_provider_presets(
    repo: Path, definition: str, expected: dict[str, Any]
) -> None:
    write(repo / ".agentv" / "targets.yaml", f"targets:\n  - name: t\n    {definition}\n")
    loaded = load_suite(eval_file(repo / "x.eval.yaml", target="t"))
    assert spec(loaded, "t") == expected


@pytest.mark.parametrize(
    ("kind", "runner", "executable"),
    [
        ("claude-code", "claude", "claude"),
        ("claude", "claude", "claude"),
        ("claude-sdk", "claude", "claude"),
        ("codex", "codex", "codex"),
        ("copilot", "copilot", "copilot"),
        ("copilot-sdk", "copilot", "copilot"),
        ("pi", "pi", "pi"),
        ("pi-cli", "pi", "pi"),
    ],
)
def test_i24_1_coding_agents_become_command_targets(
    repo: Path, kind: str, runner: str, executable: str
) -> None:
    write(
        repo / ".agentv" / "targets.yaml",
        f"targets:\n  - name: agent\n    provider: {kind}\n    model: m1\n"
        "    timeout_seconds: 30\n",
    )
    loaded = load_suite(eval_file(repo / "x.eval.yaml", target="agent"))
    target = spec(loaded, "agent")
    assert target["type"] == "command"
    assert target["timeout_s"] == 30
    assert target["command"][0] == sys.executable
    assert target["command"][1].endswith("assay/interop/agentv/_agent_cli.py")
    options = json.loads(target["command"][2])
    assert (options["kind"], options["executable"], options["model"]) == (runner, executable, "m1")
    assert target["command"][3:] == ["{PROMPT_FILE}", "{CASE_ID}"]


def test_i24_1_unsupported_kind_and_unknown_target_name_the_targets_file(repo: Path) -> None:
    write(
        repo / ".agentv" / "targets.yaml",
        "targets:\n  - name: ok\n    provider: mock\n  - name: ide\n    provider: vscode\n",
    )
    loaded = load_suite(eval_file(repo / "evals" / "x.eval.yaml", target="nope"))
    with pytest.raises(ConfigError) as caught:
        plan_run(loaded, load_project(), RunOptions())
    shown = f"{repo}/.agentv/targets.yaml"
    assert str(caught.value) == (
        f"{repo}/evals/x.eval.yaml:3 target: unknown target 'nope': not in {shown}. "
        "Targets there: ok, ide."
    )
    with pytest.raises(ConfigError) as caught:
        plan_run(loaded, load_project(), RunOptions(target="ide"))
    assert str(caught.value) == (
        f"{shown}:5 targets[1].provider: target 'ide': provider 'vscode' is not supported: "
        "assay cannot drive VS Code"
    )


def test_i24_1_openai_target_answered_by_the_local_server(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAIServer(api_key="sk-test") as server:
        monkeypatch.setenv("AV_ENDPOINT", server.url)  # AgentV appends /v1
        monkeypatch.setenv("AV_KEY", "sk-test")
        write(
            repo / ".agentv" / "targets.yaml",
            "targets:\n  - name: gpt\n    provider: openai\n    endpoint: ${{ AV_ENDPOINT }}\n"
            "    api_key: ${{ AV_KEY }}\n    model: fake-model\n",
        )
        loaded = load_suite(eval_file(repo / "x.eval.yaml", target="gpt"))
        result = run(loaded)
        assert server.requests[0]["model"] == "fake-model"
    case = result.results[0]
    assert (case.output, case.verdict) == ("Say hello to Ada", "pass")


AGENTV_CLI = """\
import argparse, json
p = argparse.ArgumentParser()
p.add_argument("--prompt")
p.add_argument("--out")
p.add_argument("--id")
a = p.parse_args()
reply = {
    "output": [
        {"role": "assistant", "content": "Looking it up",
         "tool_calls": [{"tool": "lookup", "input": {"q": a.prompt}, "output": "Ada"}]},
        {"role": "assistant", "content": "Hello " + a.prompt.split()[-1] + " from " + a.id},
    ],
    "token_usage": {"input": 12, "output": 5},
    "cost_usd": 0.25,
}
open(a.out, "w").write(json.dumps(reply))
"""


def test_i24_1_cli_target_runs_its_command_as_a_subprocess(repo: Path) -> None:
    write(repo / "tools" / "agent.py", AGENTV_CLI)
    write(
        repo / ".agentv" / "targets.yaml",
        "targets:\n  - name: local\n    provider: cli\n    cwd: ../tools\n"
        f"    command: {sys.executable} agent.py --prompt {{PROMPT}} --id {{EVAL_ID}} "
        "--out {OUTPUT_FILE}\n",
    )
    loaded = load_suite(eval_file(repo / "evals" / "x.eval.yaml", target="local"))
    case = run(loaded).results[0]
    assert case.error is None
    assert case.output == "Hello Ada from greet"
    assert case.verdict == "pass"
    assert [(c.tool, c.args, c.output) for c in case.tool_calls] == [
        ("lookup", {"q": "Say hello to Ada"}, "Ada")
    ]
    assert (case.token_usage.input, case.token_usage.output, case.cost_usd) == (12, 5, 0.25)


CLAUDE = """\
#!{python}
import json, sys
prompt = sys.stdin.read()
assert sys.argv[1:4] == ["-p", "--output-format", "stream-json"], sys.argv
assert "--model" in sys.argv and "--dangerously-skip-permissions" in sys.argv
events = [
    {{"type": "assistant", "message": {{"content": [
        {{"type": "tool_use", "id": "t1", "name": "Read", "input": {{"file_path": "a.txt"}}}}]}}}},
    {{"type": "user", "message": {{"content": [
        {{"type": "tool_result", "tool_use_id": "t1", "content": "Ada"}}]}}}},
    {{"type": "assistant", "message": {{"content": [
        {{"type": "text", "text": "Hello Ada! " + prompt.splitlines()[0]}}]}}}},
    {{"type": "result", "result": "done", "total_cost_usd": 0.5, "duration_ms": 1200,
      "usage": {{"input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 7}}}},
]
for e in events:
    print(json.dumps(e))
"""


def test_i24_1_coding_agent_runs_its_cli_and_a_missing_one_errors_the_case(repo: Path) -> None:
    fake = write(repo / "bin" / "fake-claude", CLAUDE.format(python=sys.executable))
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    write(
        repo / ".agentv" / "targets.yaml",
        "targets:\n"
        f"  - name: claude\n    provider: claude-code\n    executable: {fake}\n    model: sonnet\n"
        "  - name: absent\n    provider: claude-code\n    executable: no-such-claude-cli\n",
    )
    path = eval_file(repo / "evals" / "x.eval.yaml", target="claude")
    case = run(load_suite(path)).results[0]
    assert case.output == "Hello Ada! [[ ## user_query ## ]]"
    assert [(c.tool, c.args, c.output) for c in case.tool_calls] == [
        ("Read", {"file_path": "a.txt"}, "Ada")
    ]
    assert (case.token_usage.input, case.token_usage.output, case.cost_usd) == (15, 7, 0.5)
    assert case.duration_ms == 1200
    # A missing executable does not stop loading or planning: the case is an error, the run
    # completes.
    loaded = load_suite(eval_file(repo / "evals" / "y.eval.yaml", target="absent"))
    result = run(loaded)
    assert result.status == "completed"
    case = result.results[0]
    assert case.verdict == "error"
    assert case.error is not None
    assert case.error.message == (
        f"command '{sys.executable}' exited with code 127; stderr:\n"
        "claude-code target 'absent': executable 'no-such-claude-cli' not found on PATH; "
        f"install it, or set `executable:` of target 'absent' in {repo}/.agentv/targets.yaml"
    )


def test_i24_1_grader_target_becomes_the_judge(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AV_KEY", "k")
    write(
        repo / ".agentv" / "targets.yaml",
        "targets:\n"
        "  - name: agent\n    provider: claude-code\n    grader_target: grader\n    workers: 3\n"
        "  - name: grader\n    provider: openai\n    api_key: ${{ AV_KEY }}\n    model: judge-m\n"
        "  - name: lonely\n    provider: codex\n    grader_target: missing\n",
    )
    loaded = load_suite(eval_file(repo / "a.eval.yaml", target="agent"))
    assert json.loads(loaded.document)["judge"] == {
        "provider": "openai",
        "model": "judge-m",
        "base_url": "https://api.openai.com/v1",
        "api_key_env": "AV_KEY",
    }
    # The target's `workers` is the run's concurrency, as in AgentV (the eval file's wins).
    assert loaded.suite.execution.concurrency == 3
    loaded = load_suite(eval_file(repo / "b.eval.yaml", target="lonely"))
    assert "judge" not in json.loads(loaded.document)
    # AgentV finds no grader for it until its llm-graders run (tests/interop/test_agentv_judges.py).
    assert loaded.agentv_targets is not None
    assert loaded.agentv_targets.judgeless["lonely"] == (
        f"its grader_target 'missing' is not a target of {repo}/.agentv/targets.yaml and a "
        "codex target cannot grade; AgentV fails each llm-grader with 'No grader provider "
        "available'"
    )


def test_i24_1_config_yaml_before_session_hook_is_a_warning(repo: Path) -> None:
    write(repo / ".agentv" / "targets.yaml", "targets:\n  - {name: default, provider: mock}\n")
    write(repo / ".agentv" / "config.yaml", "hooks:\n  before_session: ./export-keys.sh\n")
    loaded = load_suite(eval_file(repo / "evals" / "x.eval.yaml"))
    assert (
        f"{repo}/.agentv/config.yaml:2 hooks.before_session: assay does not run AgentV's "
        "before_session hook: set the variables it exports in the environment before `assay run`"
    ) in [str(w) for w in loaded.warnings]
    result = run(loaded)
    assert result.results[0].output == (
        '{"answer":"Mock provider response. Configure targets.yaml to supply a custom value."}'
    )


CODEX = """\
#!{python}
import json, sys
prompt = sys.stdin.read()
assert sys.argv[1:5] == ["--ask-for-approval", "never", "exec", "--json"], sys.argv
assert sys.argv[-1] == "-" and "--model" in sys.argv
import os
assert os.path.basename(os.getcwd()).startswith("agentv-codex-"), os.getcwd()  # fresh, as AgentV
for e in [
    {{"type": "item.completed", "item": {{"type": "command_execution", "command": "ls",
      "aggregated_output": "a.txt"}}}},
    {{"type": "item.completed", "item": {{"type": "agent_message", "text": "Hello Ada"}}}},
    {{"type": "turn.completed", "usage": {{"input_tokens": 30, "output_tokens": 4}}}},
]:
    print(json.dumps(e))
"""
PI = """\
#!{python}
import json, sys
assert sys.argv[-5:-1] == ["--mode", "json", "--print", "--no-session"], sys.argv
assert sys.argv[-1].startswith("[[ ## user_query ## ]]")
print(json.dumps({{"type": "agent_end", "messages": [
    {{"role": "user", "content": [{{"type": "text", "text": "q"}}]}},
    {{"role": "assistant", "content": [
        {{"type": "toolCall", "name": "read", "arguments": {{"path": "a.txt"}}}},
        {{"type": "text", "text": "Hello Ada"}}]}}]}}))
"""
COPILOT = """\
#!{python}
import sys
assert sys.argv[1:4] == ["-s", "--allow-all-tools", "--no-color"], sys.argv
assert sys.argv[-2] == "-p"
print("Hello Ada\\n")
"""


@pytest.mark.parametrize(
    ("kind", "script", "calls", "tokens"),
    [
        ("codex", CODEX, [("command_execution", {"command": "ls"}, "a.txt")], (30, 4)),
        ("pi", PI, [("read", {"path": "a.txt"}, None)], None),
        ("copilot", COPILOT, [], None),
    ],
)
def test_i24_1_codex_pi_and_copilot_clis_are_run_and_read(
    repo: Path, kind: str, script: str, calls: list[Any], tokens: tuple[int, int] | None
) -> None:
    fake = write(repo / "bin" / kind, script.format(python=sys.executable))
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    write(
        repo / ".agentv" / "targets.yaml",
        f"targets:\n  - name: agent\n    provider: {kind}\n    executable: {fake}\n    model: m\n",
    )
    case = run(load_suite(eval_file(repo / "x.eval.yaml", target="agent"))).results[0]
    assert case.error is None
    assert (case.output, case.verdict) == ("Hello Ada", "pass")
    assert [(c.tool, c.args, c.output) for c in case.tool_calls] == calls
    usage = case.token_usage
    assert (None if usage is None else (usage.input, usage.output)) == tokens


def test_i24_1_values_from_the_environment_stay_out_of_stored_runs(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AV_MODEL", "secret-model-name")
    write(
        repo / ".agentv" / "targets.yaml",
        "targets:\n  - name: default\n    provider: claude-code\n    model: ${{ AV_MODEL }}\n",
    )
    loaded = load_suite(eval_file(repo / "x.eval.yaml"))
    assert "secret-model-name" in loaded.document  # the run uses the value
    stored = loaded.expansions.redact(loaded.document)
    assert "secret-model-name" not in stored
    assert "${AV_MODEL}" in stored


def test_i24_1_a_missing_api_key_is_located_in_the_targets_file(repo: Path) -> None:
    write(
        repo / ".agentv" / "targets.yaml",
        "targets:\n  - {name: other, provider: mock}\n"
        "  - name: gpt\n    provider: openai\n    api_key: ${{ AV_KEY }}\n    model: m\n",
    )
    loaded = load_suite(eval_file(repo / "evals" / "x.eval.yaml", target="gpt"))
    plan = plan_run(loaded, load_project(), RunOptions())
    assert missing_keys(plan) == [
        f"{repo}/.agentv/targets.yaml:3 targets[1]: openai target: environment variable AV_KEY "
        "is not set. Export it with your API key, name another variable in `api_key_env`, or set "
        "`api_key_env: null` for a local server that needs no key"
    ]


def test_i24_1_v5_config_defaults_name_the_provider_and_the_grader(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AgentV v5's `.agentv/config.yaml` `defaults: {provider, grader}`: the provider of an eval
    file that names none, and the grader of providers without a `grader_target`."""
    monkeypatch.setenv("AV_KEY", "k")
    write(
        repo / ".agentv" / "providers.yaml",
        "- {id: mock, label: echo}\n"
        "- {id: openai, label: judge, api_key: '{{ env.AV_KEY }}', model: judge-m}\n",
    )
    write(repo / ".agentv" / "config.yaml", "defaults:\n  provider: echo\n  grader: judge\n")
    path = write(
        repo / "s.eval.yaml",
        "name: s\ntests:\n  - id: a\n    input: hi\n    criteria: says hi\n",
    )
    loaded = load_suite(path)
    document = json.loads(loaded.document)
    assert document["target"] == "echo"
    assert document["judge"]["model"] == "judge-m"


def test_i24_1_a_target_missing_from_the_nearest_file_comes_from_the_configs_catalogue(
    repo: Path,
) -> None:
    """AgentV v5 run from the repository root reads the catalogue its `.agentv/config.yaml`
    names for every eval file: a name the nearest providers file lacks is found there, and
    the messages name the file it came from."""
    write(repo / ".agentv" / "config.yaml", "providers: file://providers.yaml\n")
    root = write(
        repo / ".agentv" / "providers.yaml",
        "providers:\n  - {id: mock, label: default, response: Hello Ada from the root}\n"
        "  - {id: mock, label: shared, response: root}\n",
    )
    near = write(
        repo / "feature" / ".agentv" / "providers.yaml",
        "providers:\n  - {id: mock, label: local, response: Hello Ada nearby}\n"
        "  - {id: mock, label: shared, response: Hello Ada shared nearby}\n",
    )
    evals = repo / "feature" / "evals"
    loaded = load_suite(eval_file(evals / "x.eval.yaml"))
    assert loaded.agentv_targets is not None
    assert loaded.agentv_targets.defined["default"][:2] == (str(root), 2)
    case = run(loaded).results[0]
    assert (case.output, case.verdict) == ("Hello Ada from the root", "pass")
    # a name the nearest file has is its own, as before (also one the catalogue has too)
    for target, output in (("local", "Hello Ada nearby"), ("shared", "Hello Ada shared nearby")):
        case = run(load_suite(eval_file(evals / f"{target}.eval.yaml", target=target))).results[0]
        assert case.output == output
    loaded = load_suite(eval_file(evals / "n.eval.yaml", target="nope"))
    with pytest.raises(ConfigError) as caught:
        plan_run(loaded, load_project(), RunOptions())
    assert str(caught.value) == (
        f"{evals}/n.eval.yaml:3 target: unknown target 'nope': not in {near} nor in {root} "
        f"(the catalogue {repo}/.agentv/config.yaml names). Targets there: local, shared."
    )


def test_i24_1_v4_reads_only_the_nearest_targets_file(repo: Path) -> None:
    """AgentV v4 (no catalogue in its config) uses the first targets file from the eval file
    up and fails a name that file lacks (`Target 'default' not found in …`): so does assay."""
    write(repo / ".agentv" / "targets.yaml", "targets:\n  - {name: default, provider: mock}\n")
    near = write(
        repo / "feature" / ".agentv" / "targets.yaml",
        "targets:\n  - {name: local, provider: mock}\n",
    )
    loaded = load_suite(eval_file(repo / "feature" / "evals" / "x.eval.yaml"))
    with pytest.raises(ConfigError) as caught:
        plan_run(loaded, load_project(), RunOptions())
    assert str(caught.value).endswith(
        f"target: unknown target 'default': not in {near}. Targets there: local."
    )


V5_EVAL = """\
name: inline
providers:
  - id: claude-cli
    label: baseline
    model: sonnet
    config: {{executable: {executable}}}
prompts: ['{{{{ input }}}}']
tests:
  - id: greet
    vars: {{input: Say hello to Ada}}
    assert:
      - {{type: contains, value: Ada}}
"""


def test_i24_1_a_v5_inline_coding_agent_is_the_command_target_a_catalogue_entry_is(
    repo: Path,
) -> None:
    fake = write(repo / "bin" / "fake-claude", CLAUDE.format(python=sys.executable))
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    path = write(repo / "evals" / "inline.eval.yaml", V5_EVAL.format(executable=fake))
    loaded = load_suite(path)
    inline = spec(loaded, "baseline")
    write(
        repo / ".agentv" / "providers.yaml",
        f"providers:\n  - {{id: claude-cli, label: baseline, model: sonnet, executable: {fake}}}\n",
    )
    catalogued = spec(
        load_suite(
            write(
                repo / "evals" / "named.eval.yaml",
                "name: named\nproviders: [baseline]\n"
                "prompts: ['{{ input }}']\ntests:\n  - id: greet\n"
                "    vars: {input: hi}\n    assert: [{type: contains, value: hi}]\n",
            )
        ),
        "baseline",
    )
    runner, same = json.loads(inline["command"][2]), json.loads(catalogued["command"][2])
    assert runner.pop("targets_file") == str(path)
    assert same.pop("targets_file") == f"{repo}/.agentv/providers.yaml"
    assert (runner, inline["command"][3:]) == (same, catalogued["command"][3:])
    case = run(loaded).results[0]
    assert (case.output, case.verdict) == ("Hello Ada! [[ ## user_query ## ]]", "pass")
    assert [c.tool for c in case.tool_calls] == ["Read"]
    # a missing CLI is the case's error at run time, naming the eval file
    missing = load_suite(write(path, V5_EVAL.format(executable="no-such-claude-cli")))
    case = run(missing).results[0]
    assert case.verdict == "error"
    assert case.error is not None
    assert case.error.message.endswith(
        "claude-cli target 'baseline': executable 'no-such-claude-cli' not found on PATH; "
        f"install it, or set `executable:` of target 'baseline' in {path}"
    )


def fixture_record(test_id: str, text: str, **extra: Any) -> str:
    record = {
        "schema_version": "agentv.replay_fixture.v1",
        "suite": "x",
        "test_id": test_id,
        "source_target": "live",
        "output": [
            {
                "role": "assistant",
                "content": "Looking",
                "tool_calls": [{"tool": "Read", "input": {"path": "a.txt"}, "output": "Ada"}],
            },
            {"role": "assistant", "content": text},
        ],
        "token_usage": {"input": 30, "output": 4},
        "cost_usd": 0.01,
        **extra,
    }
    return json.dumps(record)


def test_i24_1_agentv_replay_fixtures_are_replayed_and_matched_as_agentv_does(
    repo: Path,
) -> None:
    write(
        repo / "fixtures" / "rec.jsonl",
        "\n".join(
            [
                fixture_record("greet", "Hello Ada"),
                fixture_record("greet", "Other suite", suite="elsewhere"),
                fixture_record("greet", "Second attempt", attempt=1),
                fixture_record("greet", "Other variant", variant="b"),
                fixture_record("greet", "Other source", source_target="other"),
                fixture_record("twice", "one"),
                fixture_record("twice", "two"),
            ]
        )
        + "\n",
    )
    write(
        repo / ".agentv" / "targets.yaml",
        "targets:\n  - name: replay\n    provider: replay\n    fixtures: ../fixtures/rec.jsonl\n"
        "    source_target: live\n"
        "  - name: traces\n    provider: replay\n    execution_traces: ../fixtures/t.jsonl\n"
        "    source_target: live\n",
    )
    evals = repo / "evals"
    loaded = load_suite(eval_file(evals / "x.eval.yaml", target="replay"))
    case = run(loaded).results[0]
    assert (case.output, case.verdict, case.error) == ("Hello Ada", "pass", None)
    assert [(c.tool, c.args, c.output) for c in case.tool_calls] == [
        ("Read", {"path": "a.txt"}, "Ada")
    ]
    assert (case.token_usage.input, case.token_usage.output, case.cost_usd) == (30, 4, 0.01)
    # two records for one case: AgentV's error, as the case's
    write(
        evals / "x.eval.yaml",
        "description: d\nexecution:\n  target: replay\ntests:\n  - id: twice\n"
        "    input: hi\n    assertions: [{type: contains, value: one}]\n",
    )
    case = run(load_suite(evals / "x.eval.yaml")).results[0]
    assert case.verdict == "error"
    assert case.error is not None
    assert case.error.message.endswith(
        "replay target 'replay': replay fixture lookup found 2 duplicate records for suite=x "
        f"eval_path={evals}/x.eval.yaml test_id=twice source_target=live attempt=0 in "
        f"{repo}/fixtures/rec.jsonl"
    )
    loaded = load_suite(eval_file(evals / "t.eval.yaml", target="traces"))
    with pytest.raises(ConfigError) as caught:
        plan_run(loaded, load_project(), RunOptions())
    assert str(caught.value) == (
        f"{repo}/.agentv/targets.yaml:8 targets[1].execution_traces: target 'traces': replay "
        "from `execution_traces` (agentv.trace.v1 artifacts) is not supported: replay "
        "`fixtures` or `transcripts`"
    )


def test_i24_1_agentv_transcripts_are_replayed_in_message_order(repo: Path) -> None:
    rows = [
        {"message_index": 2, "role": "assistant", "content": "Hello Ada"},
        {"message_index": 0, "role": "user", "content": "Say hello to Ada"},
        {
            "message_index": 1,
            "role": "assistant",
            "tool_calls": [{"tool": "Grep", "input": {"pattern": "Ada"}, "output": "Ada"}],
        },
    ]
    common = {
        "schema_version": "agentv.transcript.v1",
        "test_id": "greet",
        "target": "copilot-cli",
        "transcript_token_usage": {"input": 90, "output": 22},
        "transcript_duration_ms": 1750,
        "source": {"provider": "copilot", "session_id": "s"},
    }
    other = {**common, "target": "claude", "message_index": 0, "role": "assistant"}
    write(
        repo / "fixtures" / "t.jsonl",
        "".join(json.dumps({**common, **row}) + "\n" for row in rows)
        + json.dumps({**other, "content": "not this one"})
        + "\n",
    )
    write(
        repo / ".agentv" / "providers.yaml",
        "providers:\n  - id: replay\n    label: tr\n    transcripts: ../fixtures/t.jsonl\n"
        "    source_target: copilot-cli\n",
    )
    case = run(load_suite(eval_file(repo / "evals" / "x.eval.yaml", target="tr"))).results[0]
    assert (case.output, case.verdict) == ("Hello Ada", "pass")
    assert [c.tool for c in case.tool_calls] == ["Grep"]
    assert (case.token_usage.input, case.token_usage.output) == (90, 22)


def test_i24_1_a_broken_line_of_a_fixture_or_transcript_file_errors_the_case_with_its_line(
    repo: Path,
) -> None:
    write(repo / "fixtures" / "rec.jsonl", fixture_record("greet", "Hello Ada") + "\n\n{oops\n")
    write(repo / "fixtures" / "t.jsonl", "\n{not json\n")
    write(
        repo / ".agentv" / "targets.yaml",
        "targets:\n  - name: replay\n    provider: replay\n    fixtures: ../fixtures/rec.jsonl\n"
        "    source_target: live\n"
        "  - name: tr\n    provider: replay\n    transcripts: ../fixtures/t.jsonl\n"
        "    source_target: live\n",
    )
    messages = []
    for target in ("replay", "tr"):
        case = run(
            load_suite(eval_file(repo / "evals" / f"{target}.eval.yaml", target=target))
        ).results[0]
        assert case.verdict == "error" and case.error is not None
        messages.append(case.error.message)
    assert f"Invalid replay fixture JSONL at {repo}/fixtures/rec.jsonl:3: " in messages[0]
    assert f"Invalid transcript JSONL at {repo}/fixtures/t.jsonl:2: " in messages[1]


def copilot_session(directory: Path, cwd: str, answer: str, mtime: float) -> None:
    """A Copilot CLI session as Copilot writes it under ~/.copilot/session-state/<id>/."""
    events = [
        {"type": "session.start", "timestamp": "2026-07-05T00:00:00.000Z", "data": {}},
        {"type": "user.message", "data": {"content": "Say hello to Ada"}},
        {
            "type": "assistant.message",
            "data": {
                "content": "Looking",
                "toolRequests": [{"name": "readFile", "arguments": {"path": "a.txt"}}],
            },
        },
        {"type": "skill.invoked", "data": {"name": "greeter"}},
        {"type": "tool.execution_start", "data": {"toolCallId": "c1", "toolName": "Viewing a"}},
        {"type": "tool.execution_complete", "data": {"toolCallId": "c1", "result": "Ada"}},
        {"type": "assistant.message", "data": {"content": answer}},
        {
            "type": "session.shutdown",
            "timestamp": "2026-07-05T00:00:01.750Z",
            "data": {"modelMetrics": {"m": {"usage": {"inputTokens": 9, "outputTokens": 2}}}},
        },
    ]
    write(directory / "workspace.yaml", f"id: x\ncwd: {cwd}\n")
    log = write(directory / "events.jsonl", "".join(json.dumps(e) + "\n" for e in events))
    os.utime(log, (mtime, mtime))


def test_i24_1_copilot_log_reads_the_latest_copilot_session(repo: Path) -> None:
    state = repo.parent / "session-state"
    copilot_session(state / "older", "/w", "Hello Ada (older)", 1_000_000)
    copilot_session(state / "newer", "/w", "Hello Ada", 2_000_000)
    copilot_session(state / "elsewhere", "/other", "Hello Ada elsewhere", 3_000_000)
    write(
        repo / ".agentv" / "targets.yaml",
        "targets:\n"
        f"  - {{name: latest, provider: copilot-log, discover: latest, cwd: /w, "
        f"session_state_dir: {state}}}\n"
        f"  - {{name: pinned, provider: copilot-log, session_id: older, "
        f"session_state_dir: {state}}}\n"
        f"  - {{name: none, provider: copilot-log, discover: latest, cwd: /nowhere, "
        f"session_state_dir: {state}}}\n",
    )
    evals = repo / "evals"
    case = run(load_suite(eval_file(evals / "x.eval.yaml", target="latest"))).results[0]
    assert (case.output, case.verdict, case.error) == ("Hello Ada", "pass", None)
    assert [(c.tool, c.args, c.output) for c in case.tool_calls] == [
        ("Read", {"path": "a.txt", "file_path": "a.txt"}, None),
        ("Skill", {"skill": "greeter"}, None),
        ("Read", {}, "Ada"),
    ]
    assert (case.token_usage.input, case.token_usage.output) == (9, 2)
    assert case.duration_ms == 1750
    case = run(load_suite(eval_file(evals / "p.eval.yaml", target="pinned"))).results[0]
    assert case.output == "Hello Ada (older)"
    case = run(load_suite(eval_file(evals / "n.eval.yaml", target="none"))).results[0]
    assert case.verdict == "error"
    assert case.error is not None
    assert case.error.message.endswith(
        f"No Copilot CLI sessions found for cwd=/nowhere. Check that sessions exist in {state}"
    )
