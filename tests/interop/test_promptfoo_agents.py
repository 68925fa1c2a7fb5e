"""promptfoo's agent SDK providers (Claude Agent SDK, Codex SDK, opencode) and its gateway and
hosted families, converted by `assay import promptfoo` (issue 25 item 2).

The agent targets run for real: a fake `claude` / `codex` / `opencode` executable on PATH
records the arguments, working directory, stdin and environment it was started with, and
answers in the CLI's own JSON event format.
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
import yaml

from assay.config import LoadedSuite, load_project, load_suite
from assay.interop.promptfoo import Conversion, convert_promptfoo
from assay.runner import RunOptions, execute, plan_run
from assay.store import MemorySink
from assay.testing import FakeOpenAIServer
from tests.conftest import write

FAKE_CLI = """\
#!{python}
import json, os, sys
record = {{
    "argv": sys.argv[1:],
    "cwd": os.getcwd(),
    "stdin": sys.stdin.read() if not sys.stdin.isatty() else None,
    "config_content": os.environ.get("OPENCODE_CONFIG_CONTENT"),
    "env": {{k: os.environ.get(k) for k in ("CODEX_HOME", "MAX_THINKING_TOKENS")}},
}}
with open(os.environ["FAKE_CLI_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(record) + "\\n")
{check}
for event in {events}:
    print(json.dumps(event))
"""
CLAUDE_EVENTS = [
    {
        "type": "assistant",
        "message": {"content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
    },
    {
        "type": "user",
        "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]},
    },
    {"type": "assistant", "message": {"content": [{"type": "text", "text": "Found it."}]}},
    {
        "type": "result",
        "result": "Found it.",
        "structured_output": {"has_bugs": True},
        "total_cost_usd": 0.25,
        "usage": {"input_tokens": 12, "output_tokens": 3},
    },
]
OPENCODE_EVENTS = [
    {"type": "step_start", "part": {"type": "step-start"}},
    {
        "type": "tool_use",
        "part": {"tool": "read", "state": {"input": {"filePath": "a.py"}, "output": "print()"}},
    },
    {"type": "text", "part": {"type": "text", "text": "Python."}},
    {"type": "step_finish", "part": {"cost": 0.01, "tokens": {"input": 7, "output": 2}}},
]
CODEX_EVENTS = [
    {"type": "item.completed", "item": {"type": "agent_message", "text": "Done."}},
    {"type": "turn.completed", "usage": {"input_tokens": 4, "output_tokens": 1}},
]


def fake_cli(bindir: Path, name: str, events: list[dict[str, Any]], check: str = "") -> None:
    script = write(
        bindir / name,
        FAKE_CLI.format(python=sys.executable, events=repr(events), check=check),
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def agents_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH: the fake CLIs' directory, then the interpreter assay is installed in (`python`),
    then the system's; the fakes log each start to the returned file."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    python_dir = Path(sys.executable).parent
    if not (python_dir / "python").exists():
        pytest.skip("no `python` next to the interpreter")
    monkeypatch.setenv("PATH", os.pathsep.join([str(bindir), str(python_dir), "/usr/bin:/bin"]))
    log = tmp_path / "cli.log"
    monkeypatch.setenv("FAKE_CLI_LOG", str(log))
    return log


def convert(config: Path, out: Path) -> tuple[Conversion, LoadedSuite]:
    """The conversion, and the suite as `assay run` loads the written file (`${VAR}` read)."""
    out.mkdir(exist_ok=True)
    conversion = convert_promptfoo(config, display=config.name, output_dir=out)
    suite = write(out / "converted.eval.yaml", yaml.safe_dump(conversion.suite, sort_keys=False))
    return conversion, load_suite(suite)


def run(loaded: LoadedSuite, target: str) -> Any:
    sink = MemorySink()
    plan = plan_run(loaded, load_project(), RunOptions(target=target))
    asyncio.run(execute(plan, sink))
    (case,) = sink.run.results
    return case


def started(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


AGENTS_CONFIG = """\
prompts: ['Review {{file}} for bugs.']
providers:
  - id: anthropic:claude-agent-sdk
    label: claude-edit
    config:
      working_dir: ./workspace
      model: claude-sonnet-4-6
      max_turns: 5
      max_thinking_tokens: 2048
      permission_mode: acceptEdits
      append_allowed_tools: ['Write', 'mcp__weather__get-forecast']
      disallowed_tools: ['Bash']
      append_system_prompt: Be brief.
      mcp:
        servers:
          - name: weather
            command: npx
            args: ['-y', 'weather-server']
      output_format:
        type: json_schema
        schema: {type: object, properties: {has_bugs: {type: boolean}}}
      setting_sources: ['project']
      extra_args: {verbose: null}
      ask_user_question: {behavior: first_option}
  - id: anthropic:claude-agent-sdk
    label: claude-plain
  - id: opencode:sdk
    label: opencode-read
    config:
      provider_id: openai
      model: gpt-4o-mini
      apiKey: '{{env.OPENAI_API_KEY}}'
      working_dir: ./workspace
      format: {type: json_schema, schema: {type: object}}
  - id: opencode:sdk
    label: opencode-plain
    config: {provider_id: openai, model: gpt-4o-mini}
  - id: openai:codex-sdk
    label: codex
    config:
      model: gpt-5.2-codex
      model_reasoning_effort: high
      sandbox_mode: read-only
      working_dir: '{{ env.CODEX_DIR | default("./workspace") }}'
      skip_git_repo_check: true
      persist_threads: true
      cli_env: {CODEX_HOME: ./codex-home}
  - id: openai:agents:helper
    config: {agent: file://./agents/helper.ts}
tests:
  - vars: {file: a.py}
"""


def agents_config(tmp_path: Path) -> Path:
    write(tmp_path / "pf" / "workspace" / "a.py", "print()\n")
    return write(tmp_path / "pf" / "promptfooconfig.yaml", AGENTS_CONFIG)


def test_i25_2_claude_agent_sdk_runs_the_claude_cli_with_the_providers_options(
    agents_env: Path, tmp_path: Path
) -> None:
    fake_cli(tmp_path / "bin", "claude", CLAUDE_EVENTS)
    out = tmp_path / "suite"
    conversion, loaded = convert(agents_config(tmp_path), out)
    target = conversion.suite["targets"]["claude-edit"]
    assert target["type"] == "command"
    assert target["command"][:3] == ["python", "-m", "assay.interop.agentv._agent_cli"]
    assert target["cwd"] == os.path.relpath(tmp_path / "pf" / "workspace", out)
    assert target["env"] == {"MAX_THINKING_TOKENS": "2048"}

    case = run(loaded, "claude-edit")
    assert case.verdict == "pass", case.error
    assert case.output == '{"has_bugs": true}'  # the schema's answer, as the SDK returns it
    assert [(c.tool, c.output) for c in case.tool_calls] == [("Read", "x")]
    assert (case.token_usage.input, case.token_usage.output, case.cost_usd) == (12, 3, 0.25)
    (call,) = started(agents_env)
    assert call["stdin"] == "Review a.py for bugs."  # as promptfoo renders it, no wrapper
    assert call["cwd"] == str(tmp_path / "pf" / "workspace")
    assert call["env"]["MAX_THINKING_TOKENS"] == "2048"
    schema = {"type": "object", "properties": {"has_bugs": {"type": "boolean"}}}
    mcp = {"mcpServers": {"weather": {"command": "npx", "args": ["-y", "weather-server"]}}}
    assert call["argv"] == [
        "-p",
        "--output-format",
        "stream-json",
        "--include-partial-messages",
        "--verbose",
        "--model",
        "claude-sonnet-4-6",
        "--max-turns",
        "5",
        "--permission-mode",
        "acceptEdits",
        "--tools",
        "Read,Grep,Glob,LS,Write",  # promptfoo's read-only set with working_dir, plus Write
        "--append-system-prompt",
        "Be brief.",
        "--mcp-config",
        json.dumps(mcp),
        "--json-schema",
        json.dumps(schema),
        "--allowedTools",
        "Read,Grep,Glob,LS,Write,mcp__weather__get-forecast",
        "--disallowedTools",
        "Bash",
        "--setting-sources",
        "project",
        "--strict-mcp-config",
        "--verbose",
    ]
    warned = [str(w) for w in conversion.warnings if "claude-agent-sdk" in str(w)]
    assert any(
        w.startswith("promptfooconfig.yaml:5 providers[0].config: left out:")
        and "config.ask_user_question: Claude Code in print mode has no one to ask" in w
        for w in warned
    ), warned


def test_i25_2_claude_without_working_dir_gets_no_tools_in_a_fresh_directory(
    agents_env: Path, tmp_path: Path
) -> None:
    fake_cli(tmp_path / "bin", "claude", CLAUDE_EVENTS)
    conversion, loaded = convert(agents_config(tmp_path), tmp_path / "suite")
    case = run(loaded, "claude-plain")
    assert case.verdict == "pass", case.error
    (call,) = started(agents_env)
    assert Path(call["cwd"]).name.startswith("assay-claude-")
    assert call["argv"][call["argv"].index("--tools") + 1] == ""  # no tools at all
    assert "--allowedTools" not in call["argv"]
    assert "--dangerously-skip-permissions" not in call["argv"]
    (note,) = [
        str(w) for w in conversion.warnings if "providers[1]" in str(w) and "approximated" in str(w)
    ]
    assert "settings files" in note  # what differs from the SDK, said once


def test_i25_2_opencode_sdk_runs_opencode_run_with_promptfoos_tool_set(
    agents_env: Path, tmp_path: Path
) -> None:
    fake_cli(tmp_path / "bin", "opencode", OPENCODE_EVENTS)
    conversion, loaded = convert(agents_config(tmp_path), tmp_path / "suite")
    case = run(loaded, "opencode-read")
    assert case.verdict == "pass", case.error
    assert case.output == "Python."
    assert [(c.tool, c.args, c.output) for c in case.tool_calls] == [
        ("read", {"filePath": "a.py"}, "print()")
    ]
    assert (case.token_usage.input, case.token_usage.output, case.cost_usd) == (7, 2, 0.01)
    case = run(loaded, "opencode-plain")
    assert case.verdict == "pass", case.error
    read, plain = started(agents_env)
    prompt = "Review a.py for bugs."
    assert read["argv"] == ["run", "--format", "json", "--model", "openai/gpt-4o-mini", prompt]
    assert read["cwd"] == str(tmp_path / "pf" / "workspace")
    content = json.loads(read["config_content"])
    assert {t for t, on in content["tools"].items() if on} == {"read", "grep", "glob", "list"}
    assert content["provider"] == {"openai": {"options": {"apiKey": "{env:OPENAI_API_KEY}"}}}
    assert not any(json.loads(plain["config_content"])["tools"].values())  # no tools
    assert Path(plain["cwd"]).name.startswith("assay-opencode-")
    (dropped,) = [str(w) for w in conversion.warnings if "config.format" in str(w)]
    assert "providers[2]" in dropped


def test_i25_2_codex_sdk_runs_codex_exec_in_the_working_dir(
    agents_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CODEX_DIR", raising=False)
    fake_cli(tmp_path / "bin", "codex", CODEX_EVENTS)
    conversion, loaded = convert(agents_config(tmp_path), tmp_path / "suite")
    target = conversion.suite["targets"]["codex"]
    relative = os.path.relpath(tmp_path / "pf" / "workspace", tmp_path / "suite")
    assert target["cwd"] == f"${{CODEX_DIR:-{relative}}}"  # promptfoo's env default kept
    case = run(loaded, "codex")
    assert case.verdict == "pass", case.error
    assert case.output == "Done."
    (call,) = started(agents_env)
    assert call["cwd"] == str(tmp_path / "pf" / "workspace")
    assert call["env"]["CODEX_HOME"] == "./codex-home"
    assert call["argv"] == [
        "--ask-for-approval",
        "never",
        "exec",
        "--json",
        "--color",
        "never",
        "--skip-git-repo-check",
        "--model",
        "gpt-5.2-codex",
        "-c",
        "model_reasoning_effort=high",
        "--sandbox",
        "read-only",
        "-",
    ]
    assert call["stdin"] == "Review a.py for bugs."
    assert any("config.persist_threads" in str(w) for w in conversion.warnings)


def test_i25_2_a_missing_agent_cli_errors_the_cases_not_the_import(
    agents_env: Path, tmp_path: Path
) -> None:
    _, loaded = convert(agents_config(tmp_path), tmp_path / "suite")
    assert "claude-edit" in loaded.suite.targets  # the import and the load succeed
    case = run(loaded, "claude-edit")
    assert case.verdict == "error"
    assert case.error is not None
    assert case.error.message.endswith(
        "promptfoo provider 'anthropic:claude-agent-sdk': executable 'claude' not found on "
        "PATH; install it, or put the `claude` CLI on PATH"
    )


def test_i25_2_openai_agents_sdk_is_left_out_saying_why(tmp_path: Path) -> None:
    conversion, _ = convert(agents_config(tmp_path), tmp_path / "suite")
    (left,) = [str(w) for w in conversion.warnings if "openai:agents" in str(w)]
    assert left.startswith("promptfooconfig.yaml:48 providers[5]: left out:")
    assert "OpenAI Agents SDK for JavaScript (`agent: file://./agents/helper.ts`)" in left
    assert "`command` target" in left


GATEWAYS_CONFIG = """\
prompts: ['Hi']
providers:
  - huggingface:chat:meta-llama/Llama-3.3-70B-Instruct
  - id: huggingface:text-generation:gemma-7b-it
    config: {apiEndpoint: 'https://abc.endpoints.huggingface.cloud', max_new_tokens: 50}
  - id: truefoundry:openai-main/gpt-5
    config:
      temperature: 0.5
      metadata: {user_id: u1}
      mcp_servers: [{integration_fqn: common-tools}]
  - id: helicone:openai/gpt-4o-mini
    config: {baseUrl: 'http://gateway.local:9000', router: production}
  - id: cloudflare-gateway:openai:gpt-4o-mini
    config: {accountId: '{{env.CF_ACCOUNT}}', gatewayId: gw1}
  - cloudflare-gateway:anthropic:claude-haiku-4-5
  - id: databricks:databricks-meta-llama-4-scout-instruct
    config: {workspaceUrl: 'https://acme.cloud.databricks.com', isPayPerToken: true}
  - id: llama
    config: {baseUrl: 'http://localhost:8081', temperature: 0.1}
  - id: replicate:meta/llama-4-scout-instruct
    config: {temperature: 0.2, max_tokens: 64}
  - replicate:replicate/hello-world:5c7d5dc6
  - watsonx:ibm/granite-3-3-8b-instruct
  - replicate:image:stability-ai/sdxl
"""


def test_i25_2_gateway_and_hosted_families_map_with_the_whole_model_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in ("CF_ACCOUNT", "CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID"):
        monkeypatch.setenv(variable, "x")
    monkeypatch.setenv("REPLICATE_API_TOKEN", "r8")
    config = write(tmp_path / "promptfooconfig.yaml", GATEWAYS_CONFIG)
    conversion, loaded = convert(config, tmp_path)  # every target loads
    assert len(loaded.suite.targets) == 10
    targets = list(conversion.suite["targets"].values())
    assert targets[:9] == [
        {"type": "openai", "provider": "huggingface", "model": "meta-llama/Llama-3.3-70B-Instruct"},
        {
            "type": "openai",
            "provider": "huggingface",
            "model": "gemma-7b-it",
            "base_url": "https://abc.endpoints.huggingface.cloud/v1",
            "max_tokens": 50,
        },
        {
            "type": "openai",
            "provider": "truefoundry",
            "model": "openai-main/gpt-5",
            "temperature": 0.5,
            "extra_body": {"mcp_servers": [{"integration_fqn": "common-tools"}]},
        },
        {
            "type": "openai",
            "base_url": "http://gateway.local:9000/router/production",
            "api_key_env": "HELICONE_API_KEY",
            "model": "openai/gpt-4o-mini",
        },
        {
            "type": "openai",
            "base_url": "https://gateway.ai.cloudflare.com/v1/${CF_ACCOUNT}/gw1/openai",
            "api_key_env": "OPENAI_API_KEY",
            "model": "gpt-4o-mini",
        },
        {
            "type": "anthropic",
            "base_url": "https://gateway.ai.cloudflare.com/v1/${CLOUDFLARE_ACCOUNT_ID}/"
            "${CLOUDFLARE_GATEWAY_ID}/anthropic",
            "model": "claude-haiku-4-5",
        },
        {
            "type": "openai",
            "base_url": "https://acme.cloud.databricks.com/serving-endpoints",
            "api_key_env": "DATABRICKS_TOKEN",
            "model": "databricks-meta-llama-4-scout-instruct",
        },
        {
            "type": "openai",
            "base_url": "http://localhost:8081/v1",
            "api_key_env": None,
            "model": "default",
            "temperature": 0.1,
        },
        {
            "type": "http",
            "url": "https://api.replicate.com/v1/models/meta/llama-4-scout-instruct/predictions",
            "headers": {"Authorization": "Bearer ${REPLICATE_API_TOKEN}", "Prefer": "wait"},
            "body": {"input": {"prompt": "{{ prompt }}", "temperature": 0.2, "max_new_tokens": 64}},
            "output_path": "$.output[*]",
        },
    ]
    versioned = targets[9]
    assert versioned["url"] == "https://api.replicate.com/v1/predictions"
    assert versioned["body"] == {"version": "5c7d5dc6", "input": {"prompt": "{{ prompt }}"}}
    assert len(targets) == 10
    text = [str(w) for w in conversion.warnings]
    assert any("providers[2]" in w and "X-TFY-METADATA" in w for w in text)
    assert any("providers[1]" in w and "chat template" in w for w in text)
    assert any("providers[7]" in w and "/completion" in w for w in text)
    (watsonx,) = [w for w in text if "watsonx" in w]
    assert "left out" in watsonx and "IAM token" in watsonx
    (image,) = [w for w in text if "replicate:image" in w]
    assert "left out" in image


def test_i25_2_a_converted_gateway_target_calls_its_route_with_its_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HELICONE_API_KEY", "helicone-secret")
    with FakeOpenAIServer(api_key="helicone-secret") as server:
        config = write(
            tmp_path / "promptfooconfig.yaml",
            f"prompts: ['Say hi']\nproviders:\n  - id: helicone:openai/gpt-4o-mini\n"
            f"    config: {{baseUrl: '{server.url}'}}\ntests:\n  - assert: "
            "[{type: contains, value: hi}]\n",
        )
        _, loaded = convert(config, tmp_path)
        case = run(loaded, "helicone-openai-gpt-4o-mini")
        seen = server.seen[-1]
    assert case.verdict == "pass", case.error
    assert seen.path == "/ai/chat/completions"  # promptfoo's default route of the gateway
    assert seen.headers["authorization"] == "Bearer helicone-secret"


def test_i25_2_a_working_dir_missing_next_to_the_config_is_warned(tmp_path: Path) -> None:
    config = write(
        tmp_path / "promptfooconfig.yaml",
        "prompts: [Hi]\nproviders:\n  - id: opencode:sdk\n"
        "    config: {provider_id: openai, model: gpt-4o-mini, working_dir: examples/basic}\n",
    )
    conversion = convert_promptfoo(config, display=config.name, output_dir=tmp_path)
    (note,) = [str(w) for w in conversion.warnings]
    assert note.startswith("promptfooconfig.yaml:3 providers[0]: approximated:")
    assert "`working_dir: examples/basic` is read relative to the config's directory" in note
    assert conversion.suite["targets"]["opencode-sdk"]["cwd"] == "examples/basic"


@pytest.mark.parametrize("out", ["suite", "elsewhere/deeper/suite"])
def test_i25_2_a_working_dir_relative_to_the_directory_promptfoo_runs_in_is_found(
    agents_env: Path, tmp_path: Path, out: str
) -> None:
    """promptfoo reads `working_dir` relative to where it runs; an example run from its
    repository's root names `examples/x/codebase`, which the import finds above the config and
    the converted suite runs in, wherever the suite is written."""
    repo = tmp_path / "repo"
    write(repo / "examples" / "agentic" / "codebase" / "a.py", "print()\n")
    config = write(
        repo / "examples" / "agentic" / "promptfooconfig.yaml",
        "prompts: ['Review the code.']\nproviders:\n  - id: openai:codex-sdk\n"
        "    config: {working_dir: examples/agentic/codebase}\n",
    )
    fake_cli(tmp_path / "bin", "codex", CODEX_EVENTS)
    suite_dir = tmp_path / out
    suite_dir.mkdir(parents=True)
    conversion, loaded = convert(config, suite_dir)
    codebase = repo / "examples" / "agentic" / "codebase"
    cwd = conversion.suite["targets"]["openai-codex-sdk"]["cwd"]
    assert (suite_dir / cwd).resolve() == codebase.resolve()
    (note,) = [str(w) for w in conversion.warnings if "working_dir" in str(w)]
    assert f"exists relative to {repo}" in note
    case = run(loaded, "openai-codex-sdk")
    assert case.verdict == "pass", case.error
    (call,) = started(agents_env)
    assert Path(call["cwd"]).resolve() == codebase.resolve()
