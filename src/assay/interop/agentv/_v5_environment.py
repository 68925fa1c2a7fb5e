"""AgentV v5's `environment` (a host or Docker testbed) and `extensions` (lifecycle hooks),
as assay's native `workspace:` (docs/migrating-from-agentv.md#v5).

AgentV v5 prepares a host `environment` by running its `setup` once on `workdir` and then
works in `workdir` itself, shared by every case; assay gives every case a fresh workspace.
So the environment becomes a `before_all` hook that runs the setup once per run exactly as
AgentV does, then copies the prepared `workdir` into the case's workspace (one warning says
so). Extensions become the hooks of their lifecycle point, run by node or bun
(assay.interop.agentv._v5_lifecycle). A Docker environment cannot run here: its cases get a
fresh workspace on this machine, with one warning naming what is not used; a Docker `setup`
(which runs inside the container) is an error.
"""

from __future__ import annotations

import base64
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

from assay.config._yaml import LocPath, load_yaml
from assay.errors import ConfigError
from assay.results import JSON

__all__ = ["EnvironmentReader", "docker_not_used"]

Report = Callable[[LocPath, str], None]

_MODULE = "assay.interop.agentv._v5_lifecycle"
_FILE = "file://"
_HOOKS = {
    "beforeAll": "before_all",
    "beforeEach": "before_each",
    "afterEach": "after_each",
    "afterAll": "after_all",
}
_RULES = ("skills", "hooks", "agents", "rules")
_HOOK_KEYS = frozenset({"command", "cwd", "timeout_ms", "timeoutMs", "reset"})
_HOST_KEYS = frozenset({"type", "workdir", "setup", "env"})
_DOCKER_KEYS = frozenset(
    {"type", "workdir", "context", "dockerfile", "image", "env", "resources", "mounts"}
    | {"secrets", "setup"}
)
_TYPESCRIPT = frozenset({".ts", ".mts", ".cts", ".tsx"})
_ENV = re.compile(r"\{\{\s*env\.([A-Za-z_]\w*)\s*\}\}")
_SILENT = (
    "a failing teardown hook is ignored, as in AgentV, but assay shows no message for it "
    "(AgentV prints a warning)"
)
HOOK_TIMEOUT_MS = 3_600_000
"""AgentV sets no time limit on a setup without `timeout_ms` or on an extension; assay's
hooks need one, so the generated hooks get an hour."""


def docker_not_used(settings: str, section: str) -> str:
    """The warning of an AgentV Docker testbed (v5 `environment`, v4 `workspace.docker`),
    which assay replaces with a fresh workspace on this machine; `settings` are the ones not
    used besides the image, `section` the docs section."""
    return (
        "assay runs the target and graders on this machine, in a fresh empty workspace per "
        f"case: the Docker image, {settings} are not used (see "
        f"docs/migrating-from-agentv.md#{section})"
    )


def _interpolate(value: JSON, env: dict[str, str]) -> JSON:
    """`{{ env.NAME }}` in every string (AgentV's: an unset variable is empty)."""
    if isinstance(value, str):
        return _ENV.sub(lambda m: env.get(m.group(1), ""), value)
    if isinstance(value, list):
        return [_interpolate(v, env) for v in value]
    if isinstance(value, dict):
        return {k: _interpolate(v, env) for k, v in value.items()}
    return value


class EnvironmentReader:
    """Reads a v5 file's `environment` and `extensions` into assay `workspace` mappings."""

    def __init__(self, base_dir: Path, error: Report, warn: Report) -> None:
        self.base_dir = base_dir
        self.error = error
        self.warn = warn
        self.extensions: list[dict[str, JSON]] = []
        self.provider_hooks: list[dict[str, JSON]] = []
        self.hooks_path: LocPath | None = None
        """Where the provider's `hooks` are (for the warning when nothing runs them)."""

    def read_extensions(self, raw: JSON, path: LocPath) -> None:
        """The suite's `extensions`, kept for every workspace built after."""
        if not isinstance(raw, list):
            self.error(path, "`extensions` must be a list")
            return
        for i, entry in enumerate(raw):
            step = self._extension(entry, (*path, i))
            if step is not None:
                self.extensions.append(step)
        if self.extensions:
            once = sorted({str(s["hook"]) for s in self.extensions} & {"beforeAll", "afterAll"})
            where = (
                f"`{'`/`'.join(once)}` run once per case in that case's own workspace (AgentV: "
                "once per suite, in the workspace the cases share); "
                if once
                else ""
            )
            after = {str(s["hook"]) for s in self.extensions} & {"afterEach", "afterAll"}
            self.warn(
                path,
                f"extensions run as workspace hooks: {where}what a hook returns (`metadata`, "
                "`provider_context`, `output`) is not recorded in the case's result"
                + (f"; {_SILENT}" if after else ""),
            )

    def read_provider_hooks(self, raw: JSON, path: LocPath) -> None:
        """A provider's `hooks`: AgentV runs them around each case in its workspace."""
        if not isinstance(raw, dict):
            self.error(path, "`hooks` must map before_all, before_each, after_each, after_all")
            return
        for point, hook in raw.items():
            where = (*path, point)
            if point not in _HOOKS.values():
                self.error(
                    where, "a provider hook is before_all, before_each, after_each or after_all"
                )
                continue
            if not isinstance(hook, dict):
                self.error(where, "a hook is a mapping with `command`")
                continue
            step = self._provider_hook(hook, where)
            if step is not None:
                step["point"] = point
                self.provider_hooks.append(step)
                self.hooks_path = path
                if point.startswith("after_"):
                    self.warn(where, _SILENT)

    def _provider_hook(self, hook: dict[str, JSON], path: LocPath) -> dict[str, JSON] | None:
        for key in (k for k in hook if k not in _HOOK_KEYS):
            self.error((*path, key), f"`{key}` is not a key of a hook (command, cwd, timeout_ms)")
        command = hook.get("command")
        if isinstance(command, str):
            command = command.split()  # AgentV splits a string on whitespace
        if not (isinstance(command, list) and command and all(isinstance(a, str) for a in command)):
            self.error((*path, "command"), "`command` must be a program and its arguments")
            return None
        if hook.get("reset") not in (None, "none"):
            self.warn(
                (*path, "reset"),
                "every case has a fresh workspace in assay, so there is nothing to reset",
            )
        cwd = hook.get("cwd")
        step: dict[str, JSON] = {
            "kind": "command",
            "command": list(command),
            "cwd": str((self.base_dir / cwd).resolve() if isinstance(cwd, str) else self.base_dir),
        }
        timeout = hook.get("timeout_ms", hook.get("timeoutMs"))
        if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
            step["timeout_ms"] = timeout
        return step

    def _extension(self, entry: JSON, path: LocPath) -> dict[str, JSON] | None:
        if isinstance(entry, dict):
            return self._agent_rules(entry, path)
        if not isinstance(entry, str):
            self.error(
                path,
                "an extension is `file://module:hook`, `agentv:agent-rules` or a mapping with "
                "`id: agentv:agent-rules`",
            )
            return None
        return self._extension_string(entry, path)

    def _agent_rules(self, entry: dict[str, JSON], path: LocPath) -> dict[str, JSON] | None:
        if entry.get("id") != "agentv:agent-rules":
            self.error((*path, "id"), "an extension mapping must have `id: agentv:agent-rules`")
            return None
        hook = entry.get("hook", "beforeAll")
        if hook not in _HOOKS:
            self.error((*path, "hook"), f"`hook` must be one of {', '.join(_HOOKS)}")
            return None
        config = entry.get("config")
        source = config if isinstance(config, dict) else entry
        step: dict[str, JSON] = {"kind": "agent-rules", "hook": hook}
        for kind in _RULES:
            value = source.get(kind)
            if isinstance(value, str):
                step[kind] = [value]
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                step[kind] = list(value)
            elif value is not None:
                self.error((*path, kind), f"`{kind}` must be a path or a list of paths")
        return step

    def _extension_string(self, entry: str, path: LocPath) -> dict[str, JSON] | None:
        if entry == "agentv:agent-rules":
            return {"kind": "agent-rules", "hook": "beforeAll"}
        if entry.startswith("agentv:agent-rules:"):
            hook = entry.removeprefix("agentv:agent-rules:")
            if hook not in _HOOKS:
                self.error(path, f"the hook must be one of {', '.join(_HOOKS)}")
                return None
            return {"kind": "agent-rules", "hook": hook}
        if not entry.startswith(_FILE) or entry.rfind(":") <= len(_FILE):
            self.error(
                path,
                "an extension is `file://path/to/module.mjs:beforeAll` (or beforeEach, "
                "afterEach, afterAll) or `agentv:agent-rules`",
            )
            return None
        file, hook = entry[len(_FILE) :].rsplit(":", 1)
        if hook not in _HOOKS:
            self.error(path, f"the extension must name one of {', '.join(_HOOKS)}, not '{hook}'")
            return None
        module = (self.base_dir / file).resolve()
        if not module.is_file():
            self.error(path, f"extension module '{file}' not found (looked at {module})")
            return None
        runtime = "bun" if module.suffix in _TYPESCRIPT else "node"
        return {"kind": "file", "path": str(module), "hook": hook, "runtime": runtime}

    def _recipe(self, raw: JSON, path: LocPath) -> tuple[JSON, Path] | None:
        """The recipe (read from its file when referenced) and the directory its relative
        paths start from; None when it cannot be read (said)."""
        if not isinstance(raw, str):
            return raw, self.base_dir
        if not raw.strip().startswith(_FILE):
            self.error(path, "`environment` is a recipe mapping or a `file://` reference")
            return None
        name = raw.strip().removeprefix(_FILE)
        file = self.base_dir / name
        try:
            recipe = load_yaml(file, display=name)[0]
        except ConfigError as exc:
            self.error(path, f"cannot read the environment recipe '{name}': {exc}")
            return None
        if isinstance(recipe, dict) and "environment" in recipe:
            self.error(
                path,
                f"the recipe file '{name}' must hold the recipe itself, not a mapping with "
                "`environment`",
            )
            return None
        return recipe, file.parent  # AgentV resolves a recipe file's paths from its directory

    def environment(self, raw: JSON, path: LocPath, env: dict[str, str]) -> dict[str, JSON] | None:
        """The plan of an `environment` (`{type: docker}` alone: nothing runs here), or
        None when it is in error (said)."""
        found = self._recipe(raw, path)
        if found is None:
            return None
        raw, base = _interpolate(found[0], env), found[1]
        if not isinstance(raw, dict):
            self.error(
                path, "`environment` must be a mapping with `type` (host or docker) and `workdir`"
            )
            return None
        kind = raw.get("type")
        if kind not in ("host", "docker"):
            self.error((*path, "type"), "`type` must be 'host' or 'docker'")
            return None
        workdir = raw.get("workdir")
        if not isinstance(workdir, str) or not workdir.strip():
            self.error((*path, "workdir"), "`workdir` must be a non-empty path")
            return None
        allowed = _HOST_KEYS if kind == "host" else _DOCKER_KEYS
        for key in (k for k in raw if k not in allowed):
            self.error((*path, key), f"`{key}` is not a key of a {kind} environment recipe")
        valid, setup = self._setup(raw.get("setup"), (*path, "setup"))
        extra = raw.get("env")
        if extra is not None and not (
            isinstance(extra, dict) and all(isinstance(v, str) for v in extra.values())
        ):
            self.error((*path, "env"), "`env` must map variable names to strings")
            return None
        if not valid:
            return None
        if kind == "docker":
            return self._docker(raw, path, setup)
        resolved = (base / workdir.strip()).resolve()
        self.warn(
            path,
            "assay copies `workdir` (after `setup` ran on it once per run) into a fresh "
            "workspace for each case, where the target and code graders run; AgentV works in "
            "`workdir` itself, shared by every case, so here cases do not see each other's "
            "edits and `workdir` keeps its set-up state",
        )
        plan: dict[str, JSON] = {"type": "host", "workdir": str(resolved)}
        if setup is not None:
            cwd = setup.pop("cwd", None)
            setup["cwd"] = str((resolved / cwd).resolve()) if isinstance(cwd, str) else str(base)
            plan["setup"] = setup
        if isinstance(extra, dict):
            plan["env"] = extra
        return plan

    def _docker(
        self, raw: dict[str, JSON], path: LocPath, setup: dict[str, JSON] | None
    ) -> dict[str, JSON] | None:
        if not raw.get("image") and not raw.get("context"):
            self.error(path, "a docker environment needs `image` or `context`")
            return None
        if setup is not None:
            self.error(
                (*path, "setup"),
                "a docker environment's `setup` runs inside the container, and assay runs no "
                "containers: run it on this machine in a `workspace` hook instead",
            )
            return None
        self.warn((*path, "type"), docker_not_used("resources, mounts, secrets and env", "v5"))
        return {"type": "docker"}

    def _setup(self, raw: JSON, path: LocPath) -> tuple[bool, dict[str, JSON] | None]:
        """Whether `setup` is valid, and its command, cwd and timeout_ms (None: none)."""
        if raw is None:
            return True, None
        if not isinstance(raw, dict):
            self.error(path, "`setup` must be a mapping with `command`")
            return False, None
        ok = True
        for key in (k for k in raw if k not in ("command", "cwd", "timeout_ms")):
            hint = {
                "args": "put the arguments in `command`",
                "env": "use `environment.env`",
                "timeout_seconds": "use `timeout_ms`",
            }.get(key, "the keys are command, cwd and timeout_ms")
            self.error((*path, key), f"`setup.{key}` is not supported by AgentV: {hint}")
            ok = False
        command = raw.get("command")
        if not (
            isinstance(command, list)
            and command
            and all(isinstance(a, str) and a.strip() for a in command)
        ):
            self.error(
                (*path, "command"),
                "`command` must be a non-empty list (the program, then its arguments); use "
                "[bash, -lc, '...'] for a shell",
            )
            ok = False
        timeout = raw.get("timeout_ms")
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
        ):
            self.error((*path, "timeout_ms"), "`timeout_ms` must be a positive number")
            ok = False
        if not ok:
            return False, None
        out: dict[str, JSON] = {"command": command}
        if isinstance(raw.get("cwd"), str):
            out["cwd"] = raw["cwd"]
        if timeout is not None:
            out["timeout_ms"] = timeout
        return True, out

    def workspace(self, environment: dict[str, JSON] | None) -> JSON:
        """assay's `workspace` for a case with this environment plan (None: no environment)
        and the suite's extensions; None when there is nothing to set up."""
        if environment is None and not self.extensions:
            return None
        hooks: dict[str, JSON] = {}
        for agentv, assay in _HOOKS.items():
            steps = [s for s in self.extensions if s["hook"] == agentv]
            provider = [s for s in self.provider_hooks if s["point"] == assay]
            # AgentV: a provider's before hooks run after the extensions, its after hooks first
            steps = [*steps, *provider] if assay.startswith("before") else [*provider, *steps]
            plan: dict[str, JSON] = {"hook": agentv, "eval_dir": str(self.base_dir.resolve())}
            if agentv == "beforeAll" and environment and environment["type"] == "host":
                plan["environment"] = environment
            elif not steps:
                continue
            plan["extensions"] = list(steps)
            # base64: assay replaces `{{workspace_path}}`-like text in a hook's arguments
            encoded = base64.urlsafe_b64encode(json.dumps(plan).encode()).decode()
            command: list[JSON] = [sys.executable, "-m", _MODULE, encoded]
            hooks[assay] = {"command": command, "timeout_ms": HOOK_TIMEOUT_MS}
        # AgentV leaves `workdir` as the cases left it: a failed case's workspace is kept
        workspace: dict[str, JSON] = {"keep": "on_failure"}
        if hooks:
            workspace["hooks"] = hooks
        return workspace
