"""Run one case on an AgentV `cli`, coding-agent, `replay` or `copilot-log` target, the way
AgentV invokes it (the last two read recorded outputs: replay fixtures or transcripts, a
Copilot CLI session log).

assay runs this file as the program of a `command` target (see
assay.interop.agentv._targets): `python _agent_cli.py SPEC PROMPT_FILE CASE_ID`, with the
target's working directory. It starts the command or the agent's CLI with AgentV's arguments,
reads the reply in that tool's format and prints assay's structured reply (SPEC §3) on stdout.
A failure is a message on stderr and a non-zero exit, which makes the case an error.
promptfoo's agent SDK providers run through it too (`python -m
assay.interop.agentv._agent_cli`, see assay.interop.promptfoo._agents): Claude Code with the
SDK's options as flags, Codex, and opencode, with the prompt as promptfoo renders it.

It imports the standard library only: one run of a `cli` target whose command is a shell
`printf` took ~0.1 s on a loaded 2-core machine (10 runs, 0.98 s), while the agents it starts
take seconds to minutes per case.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

_NOT_FOUND = 127


class Failure(Exception):
    """The case fails with this message (and exit status)."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


def _shell_quote(value: str) -> str:
    """AgentV's `shellEscape`: single quotes, and `''` for the empty string."""
    return "'" + value.replace("'", "'\"'\"'") + "'"


def _render(template: str, values: dict[str, str]) -> str:
    """`{NAME}` placeholders replaced; unknown ones kept as written (AgentV's renderTemplate)."""
    out, i = [], 0
    while i < len(template):
        if template[i] == "{":
            end = template.find("}", i)
            key = template[i + 1 : end] if end > 0 else ""
            if key and key.replace("_", "").isalpha() and key.isupper() and key in values:
                out.append(values[key])
                i = end + 1
                continue
        out.append(template[i])
        i += 1
    return "".join(out)


def _text(content: Any) -> str | None:
    """Text of a message content: a string, or the text blocks of a list joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            b.get("text") if isinstance(b, dict) else b if isinstance(b, str) else None
            for b in content
        ]
        texts = [p for p in parts if isinstance(p, str) and p]
        return "\n".join(texts) if texts else None
    return None


def _args(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return {"input": value}
        return parsed if isinstance(parsed, dict) else {"input": parsed}
    return {} if value is None else {"input": value}


# -- AgentV's `cli` provider -----------------------------------------------------------------


def _cli_reply(content: str) -> dict[str, Any]:
    """AgentV's CLI output (`{text}`, `{output: [messages]}` with `token_usage`, `cost_usd`,
    `duration_ms`, or plain text) as assay's structured reply."""
    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        return {"output": content}
    if not isinstance(data, dict):
        return {"output": content}
    reply: dict[str, Any] = {}
    messages = data.get("output", data.get("output_messages"))
    if isinstance(messages, list) and messages:
        converted, calls = [], []
        for m in messages:
            if not isinstance(m, dict) or not isinstance(m.get("role"), str):
                return {"output": content}
            message: dict[str, Any] = {"role": m["role"], "content": _text(m.get("content"))}
            tools = [
                {
                    "tool": str(c.get("tool")),
                    "args": _args(c.get("input")),
                    "output": c.get("output"),
                    **({"duration_ms": c["duration_ms"]} if _count(c.get("duration_ms")) else {}),
                }
                for c in m.get("tool_calls") or []
                if isinstance(c, dict) and isinstance(c.get("tool"), str)
            ]
            calls += tools
            converted.append(message)
        replies = [m["content"] for m in converted if m["role"] == "assistant" and m["content"]]
        reply = {"output": replies[-1] if replies else "", "messages": converted}
        reply["tool_calls"] = calls
    elif "text" in data:
        text = data["text"]
        reply = {"output": text if isinstance(text, str) else json.dumps(text)}
    else:
        return {"output": content}
    usage = data.get("token_usage")
    if isinstance(usage, dict) and _count(usage.get("input")) and _count(usage.get("output")):
        reply["token_usage"] = {"input": int(usage["input"]), "output": int(usage["output"])}
    for key in ("cost_usd", "duration_ms"):
        if _count(data.get(key)):
            reply[key] = data[key]
    return reply


def _count(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


def run_cli(spec: dict[str, Any], prompt: str, case_id: str) -> dict[str, Any]:
    """AgentV's CliProvider: the template rendered with shell-quoted values and run by the
    shell; the reply is always read from `{OUTPUT_FILE}`."""
    scratch = Path(tempfile.gettempdir())
    stem = f"agentv-{case_id or 'unknown'}-{int(time.time() * 1000)}-{secrets.token_hex(4)}"
    output_file, prompt_file = scratch / f"{stem}.json", scratch / f"{stem}.prompt.txt"
    keep = bool(spec.get("keep_temp_files"))
    prompt_file.write_text(prompt, encoding="utf-8")
    values = {
        "PROMPT": _shell_quote(prompt),
        "PROMPT_FILE": _shell_quote(str(prompt_file)),
        "EVAL_ID": _shell_quote(case_id),
        "ATTEMPT": _shell_quote("0"),
        "FILES": "",
        "OUTPUT_FILE": _shell_quote(str(output_file)),
    }
    command = _render(str(spec["command"]), values)
    try:
        done = subprocess.run(  # noqa: S602  # AgentV runs its CLI commands through the shell
            command, shell=True, capture_output=True, text=True, errors="replace", check=False
        )
        if done.returncode != 0:
            detail = done.stderr.strip() or done.stdout.strip()
            code = done.returncode if done.returncode >= 0 else "unknown"
            raise Failure(
                f"{detail} (exit code {code})" if detail else f"CLI exited with code {code}"
            )
        try:
            content = output_file.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise Failure(f"Failed to read output file '{output_file}': {exc.strerror}") from None
    finally:
        if not keep:
            output_file.unlink(missing_ok=True)
            prompt_file.unlink(missing_ok=True)
    return _cli_reply(content)


# -- AgentV's `replay` provider ---------------------------------------------------------------

_FIXTURE_SCHEMA = "agentv.replay_fixture.v1"


def run_replay(spec: dict[str, Any], case_id: str, attempt: int) -> dict[str, Any]:
    """AgentV's ReplayProvider: the recorded output of this case, looked up in `fixtures`
    (one `agentv.replay_fixture.v1` record per line, matched by suite or eval path, test id,
    source target, attempt and variant; exactly one must match) or in `transcripts` (AgentV's
    transcript rows, one message per line, matched by test id and source target)."""
    path = Path(str(spec["path"]))
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise Failure(f"{spec['label']}: cannot read replay file {path}: {exc}") from None
    if spec["source"] == "transcripts":
        return _transcript_reply(spec, text, case_id)
    lookup = {
        "suite": spec.get("suite"),
        "eval_path": spec.get("eval_path"),
        "test_id": case_id,
        "source_target": spec["source_target"],
        "attempt": attempt,
        "variant": spec.get("variant"),
    }
    matches = [r for r in _fixture_records(path, text) if _fixture_matches(r, lookup)]
    if len(matches) != 1:
        key = " ".join(f"{k}={v}" for k, v in lookup.items() if v is not None)
        found = "no record" if not matches else f"{len(matches)} duplicate records"
        raise Failure(f"{spec['label']}: replay fixture lookup found {found} for {key} in {path}")
    record = matches[0]
    recorded: dict[str, Any] = {
        k: record[k] for k in ("token_usage", "cost_usd", "duration_ms") if k in record
    }
    return _recorded_reply(record["output"], recorded)


def _jsonl(text: str, kind: str, path: object) -> Iterator[tuple[int, Any]]:
    """The non-blank lines of a JSONL file, decoded, with their line numbers; a line that is
    not JSON fails the case with "Invalid {kind} JSONL at {path}:{line}"."""
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise Failure(f"Invalid {kind} JSONL at {path}:{number}: {exc}") from None
        yield number, value


def _fixture_records(path: Path, text: str) -> list[dict[str, Any]]:
    records = []
    for number, record in _jsonl(text, "replay fixture", path):
        ok = (
            isinstance(record, dict)
            and record.get("schema_version") == _FIXTURE_SCHEMA
            and all(isinstance(record.get(k), str) for k in ("suite", "test_id", "source_target"))
            and isinstance(record.get("output"), list)
        )
        if not ok:
            raise Failure(
                f"Invalid replay fixture record at {path}:{number}: needs schema_version "
                f"'{_FIXTURE_SCHEMA}', suite, test_id, source_target and an output list"
            )
        records.append(record)
    return records


def _fixture_matches(record: dict[str, Any], lookup: dict[str, Any]) -> bool:
    """AgentV's replayLookupIdentityMatches."""
    if lookup["suite"] and record["suite"] != lookup["suite"]:
        return False
    recorded_path = record.get("eval_path")
    if recorded_path and not (
        lookup["eval_path"] and _same_eval_path(str(recorded_path), str(lookup["eval_path"]))
    ):
        return False
    return (
        record["test_id"] == lookup["test_id"]
        and record["source_target"] == lookup["source_target"]
        and (record.get("attempt") or 0) == lookup["attempt"]
        and (record.get("variant") or None) == (lookup["variant"] or None)
    )


def _same_eval_path(recorded: str, lookup: str) -> bool:
    def normal(value: str) -> str:
        value = value.replace("\\", "/").removeprefix("./")
        while "//" in value:
            value = value.replace("//", "/")
        return value

    return normal(recorded) == normal(lookup) or (
        os.path.isabs(lookup) and normal(lookup).endswith("/" + normal(recorded))
    )


def _transcript_reply(spec: dict[str, Any], text: str, case_id: str) -> dict[str, Any]:
    rows = []
    for _, row in _jsonl(text, "transcript", spec["path"]):
        if (
            isinstance(row, dict)
            and row.get("test_id") == case_id
            and row.get("target") == spec["source_target"]
        ):
            rows.append(row)
    if not rows:
        raise Failure(
            f"{spec['label']}: transcript replay lookup found no record for test_id={case_id} "
            f"source_target={spec['source_target']} in {spec['path']}"
        )
    rows.sort(key=lambda r: r.get("message_index") or 0)
    first = rows[0]
    recorded = {
        field: first[key]
        for key, field in (
            ("transcript_token_usage", "token_usage"),
            ("transcript_cost_usd", "cost_usd"),
            ("transcript_duration_ms", "duration_ms"),
        )
        if first.get(key) is not None
    }
    keys = ("role", "content", "tool_calls", "duration_ms")
    return _recorded_reply([{k: r[k] for k in keys if k in r} for r in rows], recorded)


def _recorded_reply(messages: list[Any], recorded: dict[str, Any]) -> dict[str, Any]:
    """A recorded AgentV response (its messages, token usage, cost and duration) as assay's
    structured reply, read as AgentV's CLI output is."""
    if not messages:
        return {"output": ""}
    return _cli_reply(json.dumps({"output": messages, **recorded}))


# -- AgentV's `copilot-log` provider -----------------------------------------------------------

_COPILOT_TOOLS = {
    "Skill": "Skill",
    "skill": "Skill",
    "Read File": "Read",
    "readFile": "Read",
    "Read": "Read",
    "readTextFile": "Read",
    "writeTextFile": "Write",
    "Write File": "Write",
    "editFile": "Edit",
    "Edit File": "Edit",
    "runTerminalCommand": "Bash",
}
"""AgentV's normalizeToolCall for `copilot-log`: Copilot's tool names as AgentV's canonical
ones (`Using skill: NAME` and `Viewing …` by prefix, in `_copilot_tool`)."""


def run_copilot_log(spec: dict[str, Any]) -> dict[str, Any]:
    """AgentV's CopilotLogProvider: the Copilot CLI session transcript (`events.jsonl`) of
    `session_dir`, of `session_id` under the session-state directory, or of the session
    updated last there (`discover: latest`, optionally only sessions whose `workspace.yaml`
    has `cwd`), as the reply of every case."""
    state = Path(spec.get("session_state_dir") or Path.home() / ".copilot" / "session-state")
    if spec.get("session_dir"):
        session = Path(str(spec["session_dir"]))
    elif spec.get("session_id"):
        session = state / str(spec["session_id"])
    elif spec.get("discover") == "latest":
        found = _latest_copilot_session(state, spec.get("cwd"))
        if found is None:
            where = f" for cwd={spec['cwd']}" if spec.get("cwd") else ""
            raise Failure(
                f"No Copilot CLI sessions found{where}. Check that sessions exist in {state}"
            )
        session = found
    else:
        raise Failure(f"{spec['label']}: set `session_dir`, `session_id` or `discover: latest`")
    events = session / "events.jsonl"
    try:
        text = events.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise Failure(f"Failed to read Copilot session transcript at {events}: {exc}") from None
    messages, recorded = _copilot_events(text)
    return _recorded_reply(messages, recorded)


def _latest_copilot_session(state: Path, cwd: Any) -> Path | None:
    """AgentV's discoverCopilotSessions, limit 1: the session directories with a
    `workspace.yaml` (its `cwd` matching when given), the one whose `events.jsonl` changed
    last first."""
    try:
        entries = sorted(state.iterdir())
    except OSError:
        return None
    sessions: list[tuple[float, Path]] = []
    for session in entries:
        try:
            workspace = (session / "workspace.yaml").read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if cwd and _yaml_scalar(workspace, "cwd") != cwd:
            continue
        try:
            updated = (session / "events.jsonl").stat().st_mtime
        except OSError:
            updated = 0.0
        sessions.append((updated, session))
    sessions.sort(key=lambda s: s[0], reverse=True)
    return sessions[0][1] if sessions else None


def _yaml_scalar(text: str, key: str) -> str:
    """A top-level `key: value` of a small YAML file (Copilot's `workspace.yaml`)."""
    for line in text.splitlines():
        name, sep, value = line.partition(":")
        if sep and name == key:
            return value.strip().strip("'\"")
    return ""


def _copilot_tool(name: str, args: Any, output: Any = None) -> dict[str, Any]:
    tool, given = _COPILOT_TOOLS.get(name), args if isinstance(args, dict) else None
    if tool is None and name.startswith("Using skill: ") and name != "Using skill: ":
        tool, given = "Skill", {**(given or {}), "skill": name.removeprefix("Using skill: ")}
    elif tool is None and name.startswith("Viewing "):
        tool = "Read"
    if tool == "Read" and given is not None and "file_path" not in given:
        path = given.get("path", given.get("filePath"))
        given = {**given, "file_path": path} if path is not None else given
    call: dict[str, Any] = {"tool": tool or name, "input": given if given is not None else args}
    if output is not None:
        call["output"] = output
    return call


def _copilot_events(text: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """AgentV's parseCopilotEvents: the messages (`_copilot_message`), and from
    `session.start` and `session.shutdown` the session's duration and every model's tokens."""
    messages: list[dict[str, Any]] = []
    started: dict[str, tuple[str, Any]] = {}
    usage, used, times = {"input": 0, "output": 0}, False, [None, None]
    for raw in text.splitlines():
        try:
            event = json.loads(raw) if raw.strip() else None
        except json.JSONDecodeError:
            continue
        if not isinstance(event, dict) or not event.get("type"):
            continue
        data, kind = _mapping(event.get("data")), event["type"]
        if kind == "session.start":
            times[0] = event.get("timestamp") or data.get("startTime")
        elif kind == "session.shutdown":
            times[1] = event.get("timestamp")
            for metrics in _mapping(data.get("modelMetrics")).values():
                tokens = _mapping(metrics).get("usage")
                if isinstance(tokens, dict):
                    used = True
                    usage["input"] += int(tokens.get("inputTokens") or 0)
                    usage["output"] += int(tokens.get("outputTokens") or 0)
        else:
            message = _copilot_message(kind, data, started)
            if message is not None:
                messages.append(message)
    recorded: dict[str, Any] = {"token_usage": usage} if used else {}
    try:
        start, end = (datetime.fromisoformat(str(t)) for t in times)
        recorded["duration_ms"] = max((end - start).total_seconds() * 1000, 0)
    except (TypeError, ValueError):  # a session without both timestamps has no duration
        pass
    return messages, recorded


def _copilot_message(
    kind: str, data: dict[str, Any], started: dict[str, tuple[str, Any]]
) -> dict[str, Any] | None:
    """The message of one Copilot event: a user or assistant message (with its tool
    requests), an invoked skill, or a finished tool execution with its result (`started`
    keeps the tool executions begun and not finished)."""
    if kind == "user.message":
        return {"role": "user", "content": _str(data.get("content")) or ""}
    if kind == "assistant.message":
        requests = [r for r in data.get("toolRequests") or [] if isinstance(r, dict)]
        calls = [
            _copilot_tool(str(r.get("name") or r.get("toolName") or ""), r.get("arguments"))
            for r in requests
        ]
        message: dict[str, Any] = {"role": "assistant", "content": _str(data.get("content"))}
        return {**message, "tool_calls": calls} if calls else message
    if kind == "skill.invoked":
        skill = {"tool": "Skill", "input": {"skill": str(data.get("name") or "")}}
        return {"role": "assistant", "tool_calls": [skill]}
    call_id = str(data.get("toolCallId") or "")
    if kind == "tool.execution_start" and call_id:
        started[call_id] = (str(data.get("toolName") or ""), data.get("arguments"))
    elif kind == "tool.execution_complete" and call_id in started:
        name, args = started.pop(call_id)
        return {"role": "assistant", "tool_calls": [_copilot_tool(name, args, data.get("result"))]}
    return None


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


# -- coding agents ---------------------------------------------------------------------------


def _executable(spec: dict[str, Any]) -> str:
    name = str(spec["executable"])
    found = shutil.which(name)
    if found is None:
        where = "" if os.sep in name else " on PATH"
        hint = spec.get("missing_hint") or (
            f"set `executable:` of target '{spec['target']}' in {spec['targets_file']}"
        )
        raise Failure(
            f"{spec['label']}: executable '{name}' not found{where}; install it, or {hint}",
            _NOT_FOUND,
        )
    return found


def _run_agent(
    argv: list[str], stdin: str | None, env: dict[str, str], label: str, cwd: str | None
) -> str:
    done = subprocess.run(  # the agent's CLI, as the user configured it
        argv,
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        errors="replace",
        env=env,
        check=False,
        stdin=None if stdin is not None else subprocess.DEVNULL,
    )
    if done.returncode != 0:
        detail = done.stderr.strip() or done.stdout.strip()
        suffix = f": {detail[-4000:]}" if detail else ""
        raise Failure(f"{label} exited with code {done.returncode}{suffix}")
    return done.stdout


def _events(stdout: str) -> list[dict[str, Any]]:
    events = []
    for raw in stdout.splitlines():
        line = raw.strip()
        if line.startswith("{"):
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(event, dict):
                events.append(event)
    return events


def _claude(spec: dict[str, Any], prompt: str) -> dict[str, Any]:
    argv = [_executable(spec), "-p", "--output-format", "stream-json"]
    argv += ["--include-partial-messages", "--verbose"]
    if spec.get("bypass_permissions", True):
        argv.append("--dangerously-skip-permissions")
    if spec.get("model"):
        argv += ["--model", str(spec["model"])]
    if spec.get("max_turns") is not None:
        argv += ["--max-turns", str(spec["max_turns"])]
    argv += _claude_options(spec)
    env = {k: v for k, v in os.environ.items() if k != "CLAUDECODE"}
    return _claude_reply(
        _events(
            _run_agent(argv, prompt, env, f"{spec['label']} (Claude CLI)", spec.get("workspace"))
        )
    )


_CLAUDE_FLAGS = (
    ("permission_mode", "--permission-mode"),
    ("builtin_tools", "--tools"),
    ("custom_system_prompt", "--system-prompt"),
    ("append_system_prompt", "--append-system-prompt"),
    ("fallback_model", "--fallback-model"),
    ("max_budget_usd", "--max-budget-usd"),
    ("mcp_config", "--mcp-config"),
    ("json_schema", "--json-schema"),
    ("settings", "--settings"),
    ("agents", "--agents"),
)
"""Claude Code options (as the Agent SDK sets them) given one value each."""


def _claude_options(spec: dict[str, Any]) -> list[str]:
    """The Agent SDK's options that the CLI takes as flags (promptfoo's claude-agent-sdk
    provider sets them; an AgentV target sets none)."""
    argv: list[str] = []
    for key, flag in _CLAUDE_FLAGS:
        if spec.get(key) is not None:
            argv += [flag, str(spec[key])]
    for key, flag in (
        ("allowed_tools", "--allowedTools"),
        ("disallowed_tools", "--disallowedTools"),
    ):
        if spec.get(key):
            argv += [flag, ",".join(spec[key])]
    if spec.get("setting_sources") is not None:
        argv += ["--setting-sources", ",".join(spec["setting_sources"])]
    for key, flag in (("add_dirs", "--add-dir"), ("plugin_dirs", "--plugin-dir")):
        for value in spec.get(key) or []:
            argv += [flag, str(value)]
    if spec.get("strict_mcp_config"):
        argv.append("--strict-mcp-config")
    if spec.get("no_session_persistence"):
        argv.append("--no-session-persistence")
    return argv + [str(a) for a in spec.get("extra_args", [])]


def _claude_reply(events: list[dict[str, Any]]) -> dict[str, Any]:
    """Claude's stream-json events: assistant messages (text and tool_use blocks), the
    tool_result blocks of user messages, and the final result's cost, duration and usage."""
    messages: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}
    reply: dict[str, Any] = {}
    for event in events:
        message = event.get("message")
        blocks = message.get("content") if isinstance(message, dict) else None
        blocks = [b for b in blocks if isinstance(b, dict)] if isinstance(blocks, list) else []
        if event.get("type") == "assistant":
            text = _text([b for b in blocks if b.get("type") == "text"])
            for b in blocks:
                if b.get("type") == "tool_use":
                    calls[str(b.get("id"))] = {
                        "tool": str(b.get("name")),
                        "args": _args(b.get("input")),
                    }
            messages.append({"role": "assistant", "content": text})
        elif event.get("type") == "user":
            for b in blocks:
                call = calls.get(str(b.get("tool_use_id")))
                if b.get("type") == "tool_result" and call is not None:
                    call["output"] = _text(b.get("content")) or b.get("content")
        elif event.get("type") == "result":
            reply.update(_claude_result(event))
    texts = [m["content"] for m in messages if m["content"]]
    reply["output"] = texts[-1] if texts else reply.get("output", "")
    if "structured" in reply:  # the schema's answer is the reply, as the SDK returns it
        reply["output"] = reply.pop("structured")
    return {**reply, "messages": messages, "tool_calls": list(calls.values())}


def _claude_result(event: dict[str, Any]) -> dict[str, Any]:
    reply: dict[str, Any] = {}
    for key, field in (("total_cost_usd", "cost_usd"), ("duration_ms", "duration_ms")):
        if _count(event.get(key)):
            reply[field] = event[key]
    usage = event.get("usage")
    if isinstance(usage, dict):
        keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        given = [usage[k] for k in keys if _count(usage.get(k))]
        output = usage.get("output_tokens")
        reply["token_usage"] = {
            "input": int(sum(given)),
            "output": int(output or 0) if _count(output) else 0,
        }
    if isinstance(event.get("result"), str):
        reply["output"] = event["result"]
    if isinstance(event.get("structured_output"), dict | list):  # with --json-schema
        reply["structured"] = json.dumps(event["structured_output"], ensure_ascii=False)
    return reply


def _codex(spec: dict[str, Any], prompt: str) -> dict[str, Any]:
    argv = [_executable(spec), "--ask-for-approval", "never", "exec", "--json"]
    argv += ["--color", "never", "--skip-git-repo-check"]
    if spec.get("model"):
        argv += ["--model", str(spec["model"])]
    if spec.get("model_reasoning_effort"):
        argv += ["-c", f"model_reasoning_effort={spec['model_reasoning_effort']}"]
    argv += [*spec.get("args", []), "-"]
    if spec.get("system_prompt"):
        prompt = f"{spec['system_prompt']}\n\n{prompt}"
    events = _events(
        _run_agent(
            argv, prompt, dict(os.environ), f"{spec['label']} (Codex CLI)", spec.get("workspace")
        )
    )
    texts, calls, reply = [], [], {}
    for event in events:
        item = event.get("item")
        if event.get("type") == "item.completed" and isinstance(item, dict):
            if item.get("type") in ("agent_message", "response", "output"):
                text = _text(item.get("text", item.get("content")))
                if text:
                    texts.append(text)
            elif item.get("type") == "command_execution":
                args = {"command": item.get("command")}
                calls.append(
                    {
                        "tool": "command_execution",
                        "args": args,
                        "output": item.get("aggregated_output"),
                    }
                )
        usage = event.get("usage")
        if event.get("type") == "turn.completed" and isinstance(usage, dict):
            reply["token_usage"] = {
                "input": int(usage.get("input_tokens") or 0),
                "output": int(usage.get("output_tokens") or 0),
            }
    if not texts:
        raise Failure(
            f"{spec['label']}: Codex CLI JSON response did not include an assistant message"
        )
    return {**reply, "output": texts[-1], "tool_calls": calls}


def _copilot(spec: dict[str, Any], prompt: str) -> dict[str, Any]:
    argv = [_executable(spec), "-s", "--allow-all-tools", "--no-color"]
    if spec.get("model"):
        argv += ["--model", str(spec["model"])]
    if spec.get("system_prompt"):
        prompt = f"{spec['system_prompt']}\n\n{prompt}"
    argv += [*spec.get("args", []), "-p", prompt]
    stdout = _run_agent(
        argv, None, dict(os.environ), f"{spec['label']} (Copilot CLI)", spec.get("workspace")
    )
    return {"output": stdout.strip()}


def _pi(spec: dict[str, Any], prompt: str) -> dict[str, Any]:
    argv = [_executable(spec)]
    if spec.get("subprovider"):
        argv += ["--provider", str(spec["subprovider"])]
    if spec.get("model"):
        argv += ["--model", str(spec["model"])]
    env = dict(os.environ)
    key = os.environ.get(str(spec.get("api_key_env") or ""), "")
    if key and str(spec.get("subprovider", "")).lower() == "azure":
        env["AZURE_OPENAI_API_KEY"] = key
    elif key:
        argv += ["--api-key", key]
    argv += ["--mode", "json", "--print", "--no-session"]
    for option in ("tools", "thinking"):
        if spec.get(option):
            argv += [f"--{option}", str(spec[option])]
    if spec.get("system_prompt"):
        prompt = f"{spec['system_prompt']}\n\n{prompt}"
    argv += [*spec.get("args", []), prompt.replace("@", "\\@")]
    return _pi_reply(
        _events(_run_agent(argv, None, env, f"{spec['label']} (pi CLI)", spec.get("workspace")))
    )


def _pi_reply(events: list[dict[str, Any]]) -> dict[str, Any]:
    """pi's JSON events: the messages of `agent_end`, else each `message_end`'s message."""
    ended = [
        e["messages"]
        for e in events
        if e.get("type") == "agent_end" and isinstance(e.get("messages"), list)
    ]
    messages = (
        ended[-1] if ended else [e["message"] for e in events if e.get("type") == "message_end"]
    )
    texts, calls = [], []
    for m in messages:
        if not isinstance(m, dict) or m.get("role") != "assistant":
            continue
        content = m.get("content")
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        text = _text([b for b in blocks if b.get("type") == "text"]) if blocks else _text(content)
        if text:
            texts.append(text)
        calls += [
            {"tool": str(b.get("name")), "args": _args(b.get("arguments"))}
            for b in blocks
            if b.get("type") == "toolCall"
        ]
    return {"output": texts[-1] if texts else "", "tool_calls": calls}


def _opencode(spec: dict[str, Any], prompt: str) -> dict[str, Any]:
    """`opencode run --format json`: its configuration (tools, permissions, MCP servers) comes
    from `OPENCODE_CONFIG_CONTENT`, which opencode applies over its config files."""
    argv = [_executable(spec), "run", "--format", "json"]
    if spec.get("model"):
        argv += ["--model", str(spec["model"])]
    if spec.get("agent"):
        argv += ["--agent", str(spec["agent"])]
    argv += [*(str(a) for a in spec.get("extra_args", [])), prompt]
    env = dict(os.environ)
    if spec.get("config_content") is not None:
        env["OPENCODE_CONFIG_CONTENT"] = json.dumps(spec["config_content"], ensure_ascii=False)
    events = _events(
        _run_agent(argv, None, env, f"{spec['label']} (opencode CLI)", spec.get("workspace"))
    )
    return _opencode_reply(events)


def _opencode_reply(events: list[dict[str, Any]]) -> dict[str, Any]:
    """opencode's JSON events: `text` parts (the answer), `tool_use` parts (the calls with
    their input and output), `step_finish` parts (tokens and cost, summed over the steps);
    an `error` event fails the case."""
    texts, calls = [], []
    tokens, cost = {"input": 0, "output": 0}, 0.0
    for event in events:
        part = _mapping(event.get("part"))
        kind = event.get("type")
        if kind == "error":
            raise Failure(f"opencode reported an error: {json.dumps(event.get('error', event))}")
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "tool_use":
            state = _mapping(part.get("state"))
            calls.append(
                {
                    "tool": str(part.get("tool")),
                    "args": _args(state.get("input")),
                    "output": state.get("output"),
                }
            )
        elif kind == "step_finish":
            used = _mapping(part.get("tokens"))
            for key in tokens:
                tokens[key] += int(used.get(key) or 0) if _count(used.get(key)) else 0
            cost += float(part["cost"]) if _count(part.get("cost")) else 0.0
    return {
        "output": "\n".join(t for t in texts if t),
        "tool_calls": calls,
        "token_usage": tokens,
        "cost_usd": cost,
    }


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


_AGENTS = {
    "claude": _claude,
    "codex": _codex,
    "copilot": _copilot,
    "pi": _pi,
    "opencode": _opencode,
}


def _agent(spec: dict[str, Any], prompt: str, case_id: str) -> dict[str, Any]:
    """AgentV's prompt document (`[[ ## user_query ## ]]` then the question) sent to the agent
    (the prompt as it is when `plain_prompt` is set: promptfoo sends it so), in a fresh
    temporary directory when the caller gives it one (Codex without `cwd`; an agent SDK
    provider of promptfoo without `working_dir`)."""
    del case_id
    document = prompt if spec.get("plain_prompt") else f"[[ ## user_query ## ]]\n\n{prompt.strip()}"
    agent = _AGENTS[str(spec["kind"])]
    if not spec.get("fresh_cwd"):
        return agent(spec, document)
    prefix = "agentv-codex-" if spec["kind"] == "codex" else f"assay-{spec['kind']}-"
    with tempfile.TemporaryDirectory(prefix=prefix) as workspace:
        return agent({**spec, "workspace": workspace}, document)


def main(argv: list[str]) -> int:
    """`SPEC PROMPT_FILE CASE_ID` → the reply on stdout, or a message on stderr."""
    spec = json.loads(argv[0])
    prompt = Path(argv[1]).read_text(encoding="utf-8")
    try:
        if spec["kind"] == "replay":  # the case mapping on stdin gives the repeat (attempt)
            case = json.loads(sys.stdin.read() or "{}")
            reply = run_replay(spec, argv[2], int(case.get("repeat_index") or 0))
        elif spec["kind"] == "copilot-log":
            reply = run_copilot_log(spec)
        else:
            run = run_cli if spec["kind"] == "cli" else _agent
            reply = run(spec, prompt, argv[2])
    except Failure as exc:
        print(str(exc), file=sys.stderr)
        return exc.status
    except OSError as exc:
        print(f"{spec.get('label', 'AgentV target')}: {exc}", file=sys.stderr)
        return 1
    json.dump(reply, sys.stdout, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
