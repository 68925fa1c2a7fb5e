"""AgentV's `workspace` (suite or test), rewritten to assay's `workspace` (same keys, see
docs/migrating-from-agentv.md#workspaces): what differs is a located warning, what assay
lacks (static and pooled directories) a located error. A Docker workspace is a fresh one on
this machine, with a warning (as v5's Docker environment, assay.interop.agentv._v5_environment).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from assay.config._yaml import LocPath, load_yaml
from assay.errors import ConfigError
from assay.interop.agentv._v5_environment import docker_not_used
from assay.results import JSON

__all__ = ["rewrite_workspace"]

Report = Callable[[LocPath, str], None]

_HOOKS = ("before_all", "before_each", "after_each", "after_all")


def rewrite_workspace(
    value: JSON, path: LocPath, base_dir: Path, error: Report, warn: Report
) -> JSON:
    """The workspace as assay's (a `workspace: file.yaml` reference read and inlined)."""
    where = base_dir
    if isinstance(value, str):
        file = base_dir / value
        try:
            value = load_yaml(file)[0]
        except ConfigError as exc:
            error(path, f"cannot read the workspace file '{value}': {exc}")
            return None
        where = file.parent  # AgentV resolves its relative paths from its own directory
    if not isinstance(value, dict):
        return value
    spec = dict(value)
    if "docker" in spec:
        _docker(spec.pop("docker"), (*path, "docker"), error, warn)
    if "path" in spec:
        error(
            (*path, "path"),
            "AgentV's `workspace.path` is not supported: assay makes a fresh directory per "
            "case; copy the directory as `template`",
        )
    mode = spec.pop("mode", None)
    if mode == "static":
        error((*path, "mode"), "a static workspace is not supported: assay makes one per case")
    if spec.get("isolation") == "shared":
        spec["isolation"] = "per_test"
        warn(
            (*path, "isolation"),
            "assay gives every case a fresh workspace (AgentV shares one by default), so "
            "cases can run in parallel; `before_all`/`after_all` run once per case",
        )
    template = spec.get("template")
    if isinstance(template, str):
        given = Path(template)
        if given.suffix == ".code-workspace":
            given = given.parent  # AgentV copies the directory of a VS Code workspace file
        spec["template"] = _local(given, where, base_dir)
    if isinstance(spec.get("repos"), list):
        spec["repos"] = [
            _repo(repo, (*path, "repos", i), where, base_dir, error=error, warn=warn)
            for i, repo in enumerate(spec["repos"])
        ]
    if isinstance(spec.get("hooks"), dict):
        spec["hooks"] = _hooks(spec["hooks"], (*path, "hooks"), where, base_dir, warn)
    spec.setdefault("keep", "on_failure")  # AgentV keeps a failed case's workspace
    return spec


def _docker(docker: JSON, path: LocPath, error: Report, warn: Report) -> None:
    """v4's `workspace.docker` (AgentV runs each case's code graders in a container of
    `image`): as v5's Docker environment, a fresh workspace on this machine and a warning."""
    if not isinstance(docker, dict) or not isinstance(docker.get("image"), str):
        error(path, "`workspace.docker` must be a mapping with `image` (AgentV requires it)")
        return
    warn(path, docker_not_used("its timeout, memory and cpus limits", "workspaces"))


def _local(given: Path, where: Path, base_dir: Path) -> str:
    """A path of the workspace file as one relative to the suite (as written when it is the
    suite file itself)."""
    return str(given) if where == base_dir else str((where / given).resolve())


def _repo(
    repo: JSON, path: LocPath, where: Path, base_dir: Path, *, error: Report, warn: Report
) -> JSON:
    if not isinstance(repo, dict):
        return repo
    repo = dict(repo)
    base = repo.pop("base_commit", None)
    if base is not None:
        if repo.get("commit", base) != base:
            error((*path, "base_commit"), "`commit` and `base_commit` must match")
        repo["commit"] = base
    if repo.pop("sparse", None) is not None:
        warn((*path, "sparse"), "assay checks out the whole repository (no sparse checkout)")
    source = repo.get("repo")
    if isinstance(source, str) and (where / source).exists():
        repo["repo"] = _local(Path(source), where, base_dir)
    return repo


def _hooks(
    hooks: dict[str, JSON], path: LocPath, where: Path, base_dir: Path, warn: Report
) -> JSON:
    hooks = dict(hooks)
    for name in _HOOKS:
        hook = hooks.get(name)
        if not isinstance(hook, dict):
            continue
        hook = dict(hook)
        if "script" in hook and "command" not in hook:
            hook["command"] = hook.pop("script")
        if "timeoutMs" in hook and "timeout_ms" not in hook:
            hook["timeout_ms"] = hook.pop("timeoutMs")
        if isinstance(hook.get("command"), str):
            hook["command"] = hook["command"].split()  # AgentV splits a string on whitespace
        if isinstance(hook.get("cwd"), str):
            hook["cwd"] = _local(Path(hook["cwd"]), where, base_dir)
        elif where != base_dir:
            hook["cwd"] = str(where.resolve())  # AgentV's default: the workspace file's directory
        if hook.pop("reset", None) not in (None, "none"):
            warn(
                (*path, name, "reset"),
                "every case has a fresh workspace in assay, so there is nothing to reset",
            )
        if "command" not in hook:
            hooks.pop(name)
            continue
        if name.startswith("after_"):
            order = (
                "after the graders (AgentV: before them)"
                if name == "after_each"
                else ("at the end of each case")
            )
            warn(
                (*path, name),
                f"assay runs `{name}` {order}, and its failure makes the case an error "
                "(AgentV: a warning)",
            )
        hooks[name] = hook
    return hooks
