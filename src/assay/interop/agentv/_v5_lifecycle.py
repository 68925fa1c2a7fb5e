"""AgentV v5's `environment` setup and `extensions`, run as one of assay's workspace hooks.

The v5 reader (assay.interop.agentv._v5_environment) turns them into workspace hooks that
run `python -m assay.interop.agentv._v5_lifecycle PLAN`: PLAN (JSON, base64-encoded) lists
the steps of one hook point, and the hook's stdin is assay's context (`workspace_path`, `test_id`,
`eval_run_id`, `case_input`, `case_metadata`). The steps do what AgentV does:

- `environment` (host): the setup command runs once per run, in AgentV's working directory
  with its stdin payload and `AGENTV_ENVIRONMENT_WORKDIR`, on the `workdir` itself (a lock
  keyed by the run makes the cases running in parallel wait for it, and a failed setup fails
  every case with the same message); then the prepared `workdir` is copied, `.git`
  included, into the case's workspace.
- a `file://module:hook` extension: the module's exported hook function is called by node
  (bun for TypeScript) with AgentV's context object; in `afterEach`/`afterAll` a failure is
  reported and ignored, as AgentV does.
- `agentv:agent-rules`: the configured skills, hooks, agents and rules are copied into the
  workspace's `.agentv/agent-rules/<kind>/` (paths inside the workspace stay where they are).
- a provider's `hooks` (`before_all` … `after_all`): the command runs as AgentV's workspace
  scripts do; in `after_each`/`after_all` a failure is reported and ignored.

Only the standard library is imported: this runs once per case and hook point.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["main"]

_CALL_HOOK = """
import { pathToFileURL } from 'node:url';
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const context = JSON.parse(Buffer.concat(chunks).toString() || '{}');
const file = process.env.ASSAY_AGENTV_EXTENSION;
const name = process.env.ASSAY_AGENTV_HOOK;
const mod = await import(pathToFileURL(file).href);
const fallback = mod.default && typeof mod.default === 'object' ? mod.default[name] : undefined;
const hook = mod[name] ?? fallback;
if (typeof hook !== 'function') {
  console.error(`extension ${file} does not export function ${name}`);
  process.exit(2);
}
const result = await hook(context, { hookName: name });
process.stdout.write(JSON.stringify(result ?? null));
"""
"""Imports the extension module and calls its hook (AgentV's runFileExtension)."""

_STDERR_TAIL = 2000
_STATE_TTL_S = 7 * 24 * 3600
"""How long the record of a run's environment setup is kept (a run resumed within it does
not set the environment up again)."""
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
"""AgentV's hook argument placeholders (interpolateArgs)."""


class StepError(Exception):
    """A step failed: the hook's error message."""


def _details(stdout: bytes | str, stderr: bytes | str) -> str:
    def text(data: bytes | str) -> str:
        return (data.decode("utf-8", "replace") if isinstance(data, bytes) else data).strip()

    out = text(stderr) or text(stdout)
    return out[-_STDERR_TAIL:]


def _setup_once(env_plan: dict[str, Any], run_id: str) -> None:
    """Run the environment's setup on `workdir` once for run `run_id` (AgentV's
    prepareHostEnvironment); later callers wait for it and share its outcome."""
    workdir = Path(env_plan["workdir"])
    key = hashlib.sha256(json.dumps([run_id, env_plan], sort_keys=True).encode()).hexdigest()
    state = Path(tempfile.gettempdir()) / "assay-agentv-environments"
    state.mkdir(exist_ok=True)
    _forget_old_runs(state)
    done = state / f"{key[:32]}.json"
    with open(state / f"{key[:32]}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            failure = json.loads(done.read_text())["error"]
            if failure:
                raise StepError(failure)
            return
        try:
            _prepare(workdir, env_plan.get("setup"), env_plan.get("env") or {})
        except StepError as exc:
            done.write_text(json.dumps({"error": str(exc)}))
            raise
        done.write_text(json.dumps({"error": None}))


def _forget_old_runs(state: Path) -> None:
    """Delete the lock and outcome files of runs that started over a week ago."""
    cutoff = time.time() - _STATE_TTL_S
    for entry in state.iterdir():
        with contextlib.suppress(OSError):
            if entry.stat().st_mtime < cutoff:
                entry.unlink()


def _prepare(workdir: Path, setup: dict[str, Any] | None, extra: dict[str, str]) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    if not setup:
        return
    command: list[str] = setup["command"]
    env = {**os.environ, **extra, "AGENTV_ENVIRONMENT_WORKDIR": str(workdir)}
    payload = json.dumps({"environment": {"type": "host", "workdir": str(workdir)}}, indent=2)
    timeout_ms = setup.get("timeout_ms")
    shown = " ".join(command)
    try:
        done = subprocess.run(
            command,
            input=payload.encode(),
            capture_output=True,
            cwd=setup["cwd"],
            env=env,
            timeout=timeout_ms / 1000 if timeout_ms else None,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise StepError(
            f"environment.setup timed out after {timeout_ms} ms ({shown}): "
            f"{_details(exc.stdout or b'', exc.stderr or b'')}"
        ) from None
    except OSError as exc:
        raise StepError(f"environment.setup could not start ({shown}): {exc}") from None
    if done.returncode != 0:
        details = _details(done.stdout, done.stderr)
        raise StepError(
            f"environment.setup failed with exit code {done.returncode} ({shown})"
            + (f": {details}" if details else "")
        )


def _copy_workdir(workdir: Path, workspace: Path) -> None:
    """The prepared workdir as the case's workspace (`.git` included, links kept)."""
    try:
        shutil.copytree(workdir, workspace, symlinks=True, dirs_exist_ok=True)
    except (OSError, shutil.Error) as exc:
        raise StepError(f"copying environment.workdir {workdir} failed: {exc}") from None


def _call_extension(step: dict[str, Any], context: dict[str, Any]) -> Any:
    """Call a `file://module:hook` extension; its return value (or None)."""
    file = step["path"]
    runtime = step["runtime"]
    argv = [runtime, "-e", _CALL_HOOK]
    if runtime == "node":
        argv = [runtime, "--input-type=module", "-e", _CALL_HOOK]
    env = {**os.environ, "ASSAY_AGENTV_EXTENSION": file, "ASSAY_AGENTV_HOOK": step["hook"]}
    try:
        done = subprocess.run(
            argv,
            input=json.dumps(context).encode(),
            capture_output=True,
            env=env,
            check=False,
        )
    except OSError as exc:
        raise StepError(
            f"extension {file}:{step['hook']} needs `{runtime}`, which could not start: "
            f"{exc.strerror or exc}"
        ) from None
    if done.returncode != 0:
        raise StepError(
            f"extension {file}:{step['hook']} failed (exit {done.returncode}): "
            f"{_details(done.stdout, done.stderr)}"
        )
    text = done.stdout.decode("utf-8", "replace").strip()
    with contextlib.suppress(ValueError):
        return json.loads(text.splitlines()[-1]) if text else None
    return None


def _run_command(step: dict[str, Any], hook_context: dict[str, Any], teardown: bool) -> None:
    """A provider's lifecycle hook, as AgentV's executeWorkspaceScript runs it: `{{name}}`
    in its arguments replaced, the context as JSON on stdin, its timeout (default 60 s
    before a case, 30 s after)."""
    metadata = hook_context.get("case_metadata")
    case_input = hook_context.get("case_input")
    values = {
        "workspace_path": str(hook_context.get("workspace_path") or ""),
        "test_id": str(hook_context.get("test_id") or ""),
        "eval_run_id": str(hook_context.get("eval_run_id") or ""),
        "case_input": case_input if isinstance(case_input, str) else json.dumps(case_input),
        "case_metadata": json.dumps(metadata) if metadata else "",
    }
    argv = [_PLACEHOLDER.sub(lambda m: values.get(m[1], m[0]), arg) for arg in step["command"]]
    timeout_ms = step.get("timeout_ms") or (30_000 if teardown else 60_000)
    what = f"provider hook {step['point']} ({' '.join(step['command'])})"
    try:
        done = subprocess.run(
            argv,
            input=json.dumps(hook_context).encode(),
            capture_output=True,
            cwd=step["cwd"],
            timeout=timeout_ms / 1000,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise StepError(f"{what} timed out after {timeout_ms} ms") from None
    except OSError as exc:
        raise StepError(f"{what} could not start: {exc.strerror or exc}") from None
    if done.returncode != 0:
        details = _details(b"", done.stderr) or f"exited with code {done.returncode}"
        raise StepError(f"{what} failed: {details}")


def _agent_rules(step: dict[str, Any], context: dict[str, Any]) -> dict[str, list[str]]:
    """Stage the configured paths into the workspace (AgentV's runAgentRulesExtension);
    the paths found or staged, by kind."""
    workspace = Path(context["workspace_path"])
    eval_dir = Path(context["eval_dir"])
    found: dict[str, list[str]] = {}
    discover = {
        "skills": [".claude/skills", ".agents/skills", ".codex/skills", ".pi/skills", "skills"],
        "hooks": [".claude/hooks", ".agents/hooks", ".codex/hooks", ".pi/hooks", "hooks"],
        "agents": [".agents/agents", ".codex/agents", "agents"],
        "rules": ["AGENTS.md", "CLAUDE.md", "rules"],
    }
    for kind, candidates in discover.items():
        configured: list[str] = step.get(kind) or []
        if not configured:
            paths = [str(workspace / c) for c in candidates if (workspace / c).exists()]
        else:
            paths = []
            root = workspace / ".agentv" / "agent-rules" / kind
            root.mkdir(parents=True, exist_ok=True)
            for entry in configured:
                source = (eval_dir / entry).resolve()
                if not source.exists():
                    raise StepError(f"agentv:agent-rules {kind} path not found: {entry}")
                if source.is_relative_to(workspace.resolve()):
                    paths.append(str(source))
                    continue
                dest = root / source.name
                if source.is_dir():
                    shutil.copytree(source, dest, symlinks=True, dirs_exist_ok=True)
                else:
                    shutil.copy2(source, dest)
                paths.append(str(dest))
        if paths:
            found[kind] = paths
    return found


def run(plan: dict[str, Any], hook_context: dict[str, Any]) -> None:
    """Run the steps of one hook point.

    Raises:
        StepError: A step failed where AgentV fails the case (set-up hooks).
    """
    workspace = Path(str(hook_context.get("workspace_path")))
    case_input = hook_context.get("case_input")
    context: dict[str, Any] = {
        "hook_name": plan["hook"],
        "workspace_path": str(workspace),
        "test_id": hook_context.get("test_id"),
        "eval_run_id": hook_context.get("eval_run_id"),
        "eval_dir": plan["eval_dir"],
        "case_input": case_input if isinstance(case_input, str) else json.dumps(case_input),
        "case_metadata": hook_context.get("case_metadata") or {},
    }
    env_plan = plan.get("environment")
    if env_plan:
        _setup_once(env_plan, str(hook_context.get("eval_run_id")))
        _copy_workdir(Path(env_plan["workdir"]), workspace)
    teardown = plan["hook"] in ("afterEach", "afterAll")
    for step in plan.get("extensions", []):
        try:
            if step["kind"] == "command":
                _run_command(step, hook_context, teardown)
                continue
            if step["kind"] == "agent-rules":
                paths = _agent_rules(step, context)
                if paths:
                    context["agent_rules_paths"] = paths
                    context["provider_context"] = {
                        **context.get("provider_context", {}),
                        "agent_rules_paths": paths,
                    }
                continue
            result = _call_extension(step, context)
            if isinstance(result, dict) and isinstance(result.get("provider_context"), dict):
                context["provider_context"] = {
                    **context.get("provider_context", {}),
                    **result["provider_context"],
                }
        except StepError as exc:
            if not teardown:
                raise
            # AgentV: a teardown hook's failure is reported, not the case's error
            print(f"warning: {exc}", file=sys.stderr)


def main(argv: list[str]) -> int:
    """`python -m assay.interop.agentv._v5_lifecycle PLAN` with assay's hook context on
    stdin; exit 1 with the reason on stderr when a step fails."""
    plan = json.loads(base64.urlsafe_b64decode(argv[1]))
    raw = sys.stdin.read()
    hook_context = json.loads(raw) if raw.strip() else {}
    try:
        run(plan, hook_context)
    except StepError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
