"""promptfoo's agent SDK providers as `command` targets that run the agent's own CLI.

promptfoo drives Claude Code, Codex and opencode through their SDKs; assay runs their CLIs
through the runner AgentV's coding-agent targets use (`assay.interop.agentv._agent_cli`), with
the provider's config as CLI flags: `anthropic:claude-agent-sdk` → `claude -p` (stream-json),
`openai:codex-sdk` → `codex exec --json`, `opencode:sdk` → `opencode run --format json`.
The prompt is sent as promptfoo renders it, in the config's `working_dir` or, where promptfoo
uses a fresh temporary directory (Claude and opencode without `working_dir`), in one too.
What the CLI cannot do as the SDK does is one warning per provider; a missing CLI fails the
cases at run time, not the import. `openai:agents:…` runs a JavaScript agent object and has
no target (see `agents_sdk_reason`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path

from assay.interop.promptfoo._providers import MappedProvider
from assay.results import JSON

__all__ = ["env_value", "map_agent"]

_RUNNER = ["python", "-m", "assay.interop.agentv._agent_cli"]
_PLACEHOLDER = re.compile(r"\{(PROMPT|PROMPT_FILE|OUTPUT_FILE|CASE_ID)\}")
_ENV_DEFAULT = re.compile(
    r"\{\{\s*env\.([A-Za-z_]\w*)\s*(?:\|\s*default\(\s*(['\"])(.*?)\2\s*\)\s*)?\}\}"
)
_READ_ONLY_CLAUDE = ["Read", "Grep", "Glob", "LS"]
"""The tools promptfoo's Claude Agent SDK provider enables when `working_dir` is set."""
_OPENCODE_TOOLS = (
    "bash",
    "edit",
    "write",
    "patch",
    "read",
    "grep",
    "glob",
    "list",
    "todowrite",
    "todoread",
    "webfetch",
)
_READ_ONLY_OPENCODE = {"read", "grep", "glob", "list"}


def env_value(value: str) -> str:
    """promptfoo's `{{ env.NAME }}` and `{{ env.NAME | default("x") }}` as assay's `${NAME}`
    and `${NAME:-x}` (read when the suite loads)."""

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(3)
        return f"${{{name}}}" if default is None else f"${{{name}:-{default}}}"

    return _ENV_DEFAULT.sub(one, value)


def _strings(value: JSON) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


class _Agent:
    """One agent provider being mapped: the runner spec, the command target, the notes."""

    def __init__(
        self, kind: str, ident: str, config: dict[str, JSON], base: Path, out: Path | None
    ):
        self.config = dict(config)
        self.base, self.out = base, out
        self.runner: dict[str, JSON] = {
            "kind": kind,
            "executable": kind,
            "label": f"promptfoo provider '{ident}'",
            "plain_prompt": True,
            "bypass_permissions": False,
            "missing_hint": f"put the `{kind}` CLI on PATH",
        }
        self.env: dict[str, str] = {}
        self.cwd: str | None = None
        self.dropped: list[str] = []
        self.differs: list[str] = []

    def pop(self, key: str) -> JSON:
        return self.config.pop(key, None)

    def text(self, key: str) -> str | None:
        value = self.pop(key)
        return env_value(value) if isinstance(value, str) else None

    def working_dir(self) -> str | None:
        """`working_dir` as the target's `cwd`; returned relative to the promptfoo config."""
        raw = self.text("working_dir")
        if raw is None:
            return None
        match = re.fullmatch(r"\$\{(\w+):-(.*)\}", raw)
        if match:  # `{{ env.X | default("./dir") }}`: the default, relative to the suite
            self.cwd = f"${{{match.group(1)}:-{self._relative(match.group(2))}}}"
        elif "${" in raw:
            self.cwd = raw
        else:
            raw = self._run_dir(raw)
            self.cwd = self._relative(raw)
        return raw

    def _run_dir(self, raw: str) -> str:
        """`raw` as a path of the config's directory, or of the nearest directory above it
        where it exists: promptfoo reads `working_dir` relative to the directory it runs in,
        which examples take to be a parent (`promptfoo eval -c examples/x/promptfooconfig.yaml`
        from the repository's root). The path is returned relative to the config's directory."""
        if Path(raw).is_absolute() or (self.base / raw).is_dir():
            return raw
        base = self.base.resolve()
        for parent in base.parents:
            if (parent / raw).is_dir():
                found = os.path.relpath(parent / raw, base)
                self.differs.append(
                    f"`working_dir: {raw}` does not exist beside the config; promptfoo reads it "
                    "relative to the directory it runs in, and it exists relative to "
                    f"{parent}, so the target runs in {parent / raw} (set the target's `cwd` "
                    "if promptfoo runs elsewhere)"
                )
                return found
        self.differs.append(
            f"`working_dir: {raw}` is read relative to the config's directory, where it "
            "does not exist (promptfoo reads it relative to the directory promptfoo runs "
            "in): set the target's `cwd`"
        )
        return raw

    def _relative(self, path: str) -> str:
        where = (self.base / path).resolve()
        if self.out is None:
            return str(where)
        try:
            return os.path.relpath(where, self.out.resolve())
        except ValueError:  # another drive (Windows)
            return str(where)

    def from_workdir(self, path: str, workdir: str | None) -> str:
        """A path of the config (relative to it) as the agent, started in `workdir`, sees it."""
        where = (self.base / path).resolve()
        if workdir is None or "${" in workdir:
            return str(where)
        return os.path.relpath(where, (self.base / workdir).resolve())

    def api_key(self, variable: str) -> None:
        """`apiKey: '{{ env.X }}'` hands X to the CLI as its own key variable."""
        key = self.pop("apiKey")
        if key is None:
            return
        value = env_value(str(key))
        if isinstance(key, str) and re.fullmatch(r"\$\{\w+(:-[^}]*)?\}", value):
            self.env[variable] = value
        else:
            self.dropped.append(
                "config.apiKey: a key written in the config is not copied into the suite; "
                f"export it as {variable}"
            )

    def drop_rest(self, why: Callable[[str], str]) -> None:
        self.dropped += [f"config.{key}: {why(key)}" for key in self.config]

    def mapped(self, summary: str) -> MappedProvider:
        spec: dict[str, JSON] = {
            "type": "command",
            "command": [
                *_RUNNER,
                _PLACEHOLDER.sub(
                    r"\\u007b\1}", json.dumps(self.runner, ensure_ascii=False, sort_keys=True)
                ),
                "{PROMPT_FILE}",
                "{CASE_ID}",
            ],
        }
        cwd = self.cwd if self.cwd is not None else self._relative(".")
        if cwd != ".":
            spec["cwd"] = cwd
        if self.env:
            spec["env"] = dict(self.env)
        note = summary
        if self.differs:
            note += "; unlike promptfoo's SDK call: " + "; ".join(self.differs)
        note += (
            "; `python` must be the interpreter assay is installed in, and a missing CLI "
            "fails the cases when they run"
        )
        return MappedProvider(spec, dropped=self.dropped, approximated=[note])


def map_agent(
    family: str, rest: str, config: dict[str, JSON], *, base: Path, out: Path | None
) -> MappedProvider | None:
    """The target for an agent SDK provider id, or None when `family:rest` is not one."""
    kind = rest.partition(":")[0]
    ident = f"{family}:{rest}" if rest else family
    if family == "anthropic" and kind in ("claude-agent-sdk", "claude-code"):
        return _claude(ident, config, base, out)
    if family == "openai" and kind == "codex-sdk":
        return _codex(ident, config, base, out)
    if family == "opencode":
        return _opencode(ident, config, base, out)
    if family == "openai" and kind == "agents":
        return MappedProvider(unmapped=agents_sdk_reason(config))
    return None


def agents_sdk_reason(config: dict[str, JSON]) -> str:
    """Why `openai:agents:…` has no target, and what to do instead."""
    agent = config.get("agent")
    where = f" (`agent: {agent}`)" if isinstance(agent, str) else ""
    return (
        "promptfoo runs an agent object of the OpenAI Agents SDK for JavaScript"
        f"{where} in its own Node.js process, with the tools and handoffs that file defines; "
        "assay cannot load that object. Give the agent a small entry script that runs it on "
        "the prompt and prints the final output, and call that from a `command` target "
        "(or an `exec:` provider)"
    )


# -- Claude Agent SDK ------------------------------------------------------------------------


def _claude(ident: str, config: dict[str, JSON], base: Path, out: Path | None) -> MappedProvider:
    agent = _Agent("claude", ident, config, base, out)
    agent.pop("apiKeyRequired")  # promptfoo's own start-up check
    agent.api_key("ANTHROPIC_API_KEY")
    workdir = agent.working_dir()
    if workdir is None:
        agent.runner["fresh_cwd"] = True  # promptfoo: a temporary directory, no tools
    _claude_model(agent)
    _claude_tools(agent, workdir)
    _claude_mcp(agent)
    _claude_files(agent, workdir)
    _claude_extra_args(agent)
    runtime = agent.pop("executable")
    if runtime is not None:
        agent.differs.append(f"`executable: {runtime}` (the SDK's JavaScript runtime) has no use")
    if agent.pop("ask_user_question") is not None:
        agent.dropped.append(
            "config.ask_user_question: Claude Code in print mode has no one to ask; an "
            "AskUserQuestion call gets no answer (promptfoo answers it automatically)"
        )
    agent.drop_rest(lambda key: "no matching `claude` CLI option; set it by hand")
    return agent.mapped(
        f"`{ident}` runs the `claude` CLI (Claude Code in print mode, stream-json) with the "
        "provider's options as flags"
    )


def _claude_model(agent: _Agent) -> None:
    """Model, prompts, limits, the permission mode and session persistence."""
    runner = agent.runner
    for key in ("model", "fallback_model", "custom_system_prompt", "append_system_prompt"):
        value = agent.text(key)
        if value is not None:
            runner[key] = value
    for key in ("max_turns", "max_budget_usd"):
        value = agent.pop(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            runner[key] = value
    thinking = agent.pop("max_thinking_tokens")
    if isinstance(thinking, int):
        agent.env["MAX_THINKING_TOKENS"] = str(thinking)
    mode = agent.text("permission_mode")
    agent.pop("allow_dangerously_skip_permissions")
    if mode == "bypassPermissions":
        runner["bypass_permissions"] = True
    elif mode is not None:
        runner["permission_mode"] = mode
    if agent.pop("persist_session") is False:
        runner["no_session_persistence"] = True


def _claude_files(agent: _Agent, workdir: str | None) -> None:
    """Settings sources, structured output, extra directories, plugins, sandbox, subagents."""
    runner = agent.runner
    sources = agent.pop("setting_sources")
    if isinstance(sources, list):
        runner["setting_sources"] = list[JSON](_strings(sources))
    else:
        agent.differs.append(
            "the CLI reads the user's, the project's and local settings files, which the SDK "
            "reads only when `setting_sources` names them"
        )
    output_format = agent.pop("output_format")
    if isinstance(output_format, dict) and isinstance(output_format.get("schema"), dict):
        runner["json_schema"] = json.dumps(output_format["schema"], ensure_ascii=False)
    elif output_format is not None:
        agent.dropped.append("config.output_format: only `{type: json_schema, schema}` converts")
    dirs = [agent.from_workdir(d, workdir) for d in _strings(agent.pop("additional_directories"))]
    if dirs:
        runner["add_dirs"] = list[JSON](dirs)
    plugins = agent.pop("plugins")
    paths = [
        agent.from_workdir(p["path"], workdir)
        for p in (plugins if isinstance(plugins, list) else [])
        if isinstance(p, dict) and isinstance(p.get("path"), str)
    ]
    if paths:
        runner["plugin_dirs"] = list[JSON](paths)
    sandbox = agent.pop("sandbox")
    if isinstance(sandbox, dict):
        runner["settings"] = json.dumps({"sandbox": sandbox}, ensure_ascii=False)
    agents = agent.pop("agents")
    if isinstance(agents, dict):
        runner["agents"] = json.dumps(agents, ensure_ascii=False)


def _claude_tools(agent: _Agent, workdir: str | None) -> None:
    """promptfoo's tool set: read-only tools with a working directory (none without one),
    `custom_allowed_tools` instead, `append_allowed_tools` added, or every tool."""
    custom = agent.pop("custom_allowed_tools")
    tools = _strings(custom) if custom is not None else (_READ_ONLY_CLAUDE if workdir else [])
    tools = [*tools, *(t for t in _strings(agent.pop("append_allowed_tools")) if t not in tools)]
    tools += [t for t in _strings(agent.pop("allowed_tools")) if t not in tools]
    runner = agent.runner
    if agent.pop("allow_all_tools") is True:
        runner["builtin_tools"] = "default"
    else:
        runner["builtin_tools"] = ",".join(t for t in tools if not t.startswith("mcp__"))
    if tools:
        runner["allowed_tools"] = list[JSON](tools)
    denied = _strings(agent.pop("disallowed_tools"))
    if denied:
        runner["disallowed_tools"] = list[JSON](denied)


def _claude_mcp(agent: _Agent) -> None:
    """`mcp.servers` as Claude Code's `--mcp-config` (and only those servers)."""
    mcp = agent.pop("mcp")
    strict = agent.pop("strict_mcp_config")
    servers = mcp.get("servers") if isinstance(mcp, dict) else None
    if not isinstance(servers, list):
        if mcp is not None:
            agent.dropped.append("config.mcp: expected `{servers: [...]}`")
        return
    config: dict[str, JSON] = {}
    for i, server in enumerate(servers):
        if not isinstance(server, dict):
            continue
        name = str(server.get("name") or f"server{i + 1}")
        if isinstance(server.get("command"), str):
            entry: dict[str, JSON] = {"command": server["command"]}
            for key in ("args", "env"):
                if server.get(key) is not None:
                    entry[key] = server[key]
        elif isinstance(server.get("url"), str):
            entry = {"type": "http", "url": server["url"]}
            if isinstance(server.get("headers"), dict):
                entry["headers"] = server["headers"]
            agent.differs.append(
                f"MCP server '{name}' is given to Claude Code as a streamable-HTTP server "
                "(set `type: sse` in the target's --mcp-config for an SSE one)"
            )
        else:
            agent.dropped.append(f"config.mcp.servers[{i}]: neither `command` nor `url`")
            continue
        config[name] = entry
    agent.runner["mcp_config"] = json.dumps({"mcpServers": config}, ensure_ascii=False)
    if strict is not False:
        agent.runner["strict_mcp_config"] = True


def _claude_extra_args(agent: _Agent) -> None:
    """`extra_args: {flag: value}` as `--flag value` (`null`: a bare `--flag`)."""
    extra = agent.pop("extra_args")
    if not isinstance(extra, dict):
        return
    args: list[JSON] = []
    for flag, value in extra.items():
        args.append(f"--{flag}")
        if value is not None:
            args.append(str(value))
    agent.runner["extra_args"] = args


# -- Codex SDK -------------------------------------------------------------------------------


def _codex(ident: str, config: dict[str, JSON], base: Path, out: Path | None) -> MappedProvider:
    agent = _Agent("codex", ident, config, base, out)
    runner = agent.runner
    agent.api_key("OPENAI_API_KEY")
    workdir = agent.working_dir()
    if workdir is None:
        agent.differs.append(
            "without `working_dir` Codex runs in the promptfoo config's directory (promptfoo "
            "starts it in the directory promptfoo runs in)"
        )
    for key in ("model", "model_reasoning_effort"):
        value = agent.text(key)
        if value is not None:
            runner[key] = value
    args: list[JSON] = []
    sandbox = agent.text("sandbox_mode")
    if sandbox is not None:
        args += ["--sandbox", sandbox]
    for directory in _strings(agent.pop("additional_directories")):
        args += ["--add-dir", agent.from_workdir(directory, workdir)]
    if args:
        runner["args"] = args
    _codex_fixed(agent)
    cli_env = agent.pop("cli_env")
    if isinstance(cli_env, dict):
        for name, value in cli_env.items():
            agent.env[str(name)] = env_value(str(value))
    _codex_sessions(agent)
    agent.drop_rest(lambda key: "no matching `codex exec` option; set it by hand")
    return agent.mapped(
        f"`{ident}` runs the `codex` CLI (`codex exec --json`) with the provider's options as flags"
    )


def _codex_fixed(agent: _Agent) -> None:
    """Options the runner always sets: approval `never`, no git-repository check."""
    approval = agent.text("approval_policy")
    if approval not in (None, "never"):
        agent.differs.append(
            f"approval_policy '{approval}': the CLI runs with `--ask-for-approval never`"
        )
    if agent.pop("skip_git_repo_check") is False:
        agent.differs.append("the CLI runs with `--skip-git-repo-check`")


def _codex_sessions(agent: _Agent) -> None:
    """Thread reuse, streaming and tracing: the CLI starts one session per case."""
    for key in ("persist_threads", "thread_pool_size", "thread_id"):
        if agent.pop(key) is not None:
            agent.dropped.append(
                f"config.{key}: each case runs in a new Codex session (`codex exec`)"
            )
    for key in ("enable_streaming", "deep_tracing"):
        if agent.pop(key) is not None:
            agent.dropped.append(
                f"config.{key}: assay reads the CLI's JSON events once the run ends; "
                "streaming and OpenTelemetry tracing are not carried over"
            )


# -- opencode SDK ----------------------------------------------------------------------------


def _opencode(ident: str, config: dict[str, JSON], base: Path, out: Path | None) -> MappedProvider:
    agent = _Agent("opencode", ident, config, base, out)
    runner = agent.runner
    content: dict[str, JSON] = {}
    provider = agent.text("provider_id")
    model = agent.text("model")
    if model is not None:
        runner["model"] = f"{provider}/{model}" if provider and "/" not in model else model
    key = agent.pop("apiKey")
    if key is not None:
        value = env_value(str(key))
        variable = re.fullmatch(r"\$\{(\w+)\}", value)
        if provider and variable:  # opencode's own `{env:NAME}` reference
            content["provider"] = {provider: {"options": {"apiKey": f"{{env:{variable[1]}}}"}}}
        else:
            agent.dropped.append(
                "config.apiKey: a key written in the config is not copied into the suite; "
                "export the provider's key variable"
            )
    workdir = agent.working_dir()
    if workdir is None:
        runner["fresh_cwd"] = True  # promptfoo: a temporary directory, no tools
    tools: dict[str, JSON] = {
        t: bool(workdir) and t in _READ_ONLY_OPENCODE for t in _OPENCODE_TOOLS
    }
    given = agent.pop("tools")
    if isinstance(given, dict):
        tools.update({str(k): v for k, v in given.items()})
    content["tools"] = tools
    for key in ("permission", "mcp"):
        value = agent.pop(key)
        if isinstance(value, dict):
            content[key] = value
    runner["config_content"] = content
    name = agent.text("agent")
    if name is not None:
        runner["agent"] = name
    server = agent.text("baseUrl")
    if server is not None:
        runner["extra_args"] = ["--attach", server]
    if agent.pop("format") is not None:
        agent.dropped.append(
            "config.format: `opencode run` has no structured-output option; the answer is "
            "the model's text (add an `is-json` check, or ask for JSON in the prompt)"
        )
    agent.drop_rest(lambda key: "no matching `opencode run` option; set it by hand")
    return agent.mapped(
        f"`{ident}` runs the `opencode` CLI (`opencode run --format json`), its tools and "
        "permissions set through OPENCODE_CONFIG_CONTENT as promptfoo sets them"
    )
