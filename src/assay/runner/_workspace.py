"""A case's workspace (`workspace:` in the suite): made fresh for each sample, hooks run around
the case, deleted afterwards unless kept. See docs/suite-reference.md#workspace.

Each sample gets a directory of its own from `mkdtemp`, so cases running in parallel never
share one. Hooks run like the `command` target's commands: without a shell, in their own
process group, killed with everything they started on timeout or cancellation.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from assay._processes import exit_reason, feed, read, run_group
from assay.config import Workspace, WorkspaceHook, WorkspaceRepo
from assay.config._workspace import SETUP_TIMEOUT_MS, TEARDOWN_TIMEOUT_MS
from assay.results import JSON

__all__ = ["CaseWorkspace", "WorkspaceError"]

GIT_TIMEOUT_S = 300.0
"""A clone or checkout taking longer is stopped (AgentV's bound)."""
_STDERR_TAIL = 500
_PLACEHOLDER = re.compile(
    r"\{\{\s*(workspace_path|test_id|eval_run_id|case_input|case_metadata)\s*\}\}"
)
_SHORTHAND = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
"""GitHub's `owner/name`, as AgentV accepts it in `repos[].repo`."""


class WorkspaceError(Exception):
    """Setting up or tearing down a workspace failed: the case's error, with the reason."""


def _tail(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace").strip()
    if not text:
        return " (no stderr)"
    return f": {text if len(text) <= _STDERR_TAIL else '…' + text[-_STDERR_TAIL:]}"


async def _run(argv: list[str], stdin: bytes, cwd: Path, timeout_s: float, what: str) -> None:
    """Run a command to its end.

    Raises:
        WorkspaceError: It could not start, timed out or exited non-zero (with stderr's end).
    """
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        raise WorkspaceError(f"{what} could not start: {exc.strerror or exc}") from None
    stderr = bytearray()
    io = [
        asyncio.ensure_future(feed(process.stdin, stdin)),
        asyncio.ensure_future(read(process.stderr, stderr, tail=4096)),
    ]
    try:
        await run_group(process, io, timeout_s)
    except TimeoutError:
        raise WorkspaceError(
            f"{what} timed out after {timeout_s:g}s and was killed{_tail(bytes(stderr))}"
        ) from None
    if process.returncode != 0:
        raise WorkspaceError(f"{what} {exit_reason(process.returncode)}{_tail(bytes(stderr))}")


@dataclass
class CaseWorkspace:
    """One sample's workspace: `create` it, run the target and graders in `path`, `finish`."""

    spec: Workspace
    suite_dir: Path
    case_id: str
    run_id: str
    case_input: JSON
    metadata: dict[str, JSON]
    path: Path | None = None

    def _context(self) -> dict[str, JSON]:
        """What hooks read on stdin (AgentV's names)."""
        return {
            "workspace_path": str(self.path),
            "test_id": self.case_id,
            "eval_run_id": self.run_id,
            "case_input": self.case_input,
            "case_metadata": self.metadata,
        }

    async def create(self) -> Path:
        """Make the directory, copy the template, clone the repos, run `before_all` and
        `before_each`.

        Raises:
            WorkspaceError: Any step failed (the directory, if made, is in `path`).
        """
        root = self.suite_dir / self.spec.root if self.spec.root else None
        if root is not None:
            root.mkdir(parents=True, exist_ok=True)
        safe = re.sub(r"[^\w.-]+", "-", self.case_id)[:40]
        self.path = Path(tempfile.mkdtemp(prefix=f"assay-ws-{safe}-", dir=root))
        if self.spec.template is not None:
            template = self.suite_dir / self.spec.template
            if not template.is_dir():
                raise WorkspaceError(f"workspace template {template} is not a directory")
            try:
                await asyncio.to_thread(_copy_template, template, self.path)
            except OSError as exc:
                raise WorkspaceError(
                    f"copying workspace template {template} failed: {exc}"
                ) from None
        for repo in self.spec.repos:
            await self._clone(repo)
        hooks = self.spec.hooks
        if hooks is not None and hooks.enabled:
            if hooks.before_all is not None:
                await self._hook("before_all", hooks.before_all, SETUP_TIMEOUT_MS)
            if hooks.before_each is not None:
                await self._hook("before_each", hooks.before_each, SETUP_TIMEOUT_MS)
        return self.path

    async def teardown(self) -> str | None:
        """Run `after_each` then `after_all` (each even if the other failed); the reason of
        the first failure, or None. Not called when `create` failed (as in AgentV, a case
        whose set-up failed gets no teardown)."""
        hooks = self.spec.hooks
        if self.path is None or hooks is None or not hooks.enabled:
            return None
        failures: list[str] = []
        for name in ("after_each", "after_all"):
            hook: WorkspaceHook | None = getattr(hooks, name)
            if hook is None:
                continue
            try:
                await self._hook(name, hook, TEARDOWN_TIMEOUT_MS)
            except WorkspaceError as exc:
                failures.append(str(exc))
        return failures[0] if failures else None

    async def finish(self, passed: bool) -> str | None:
        """Delete the directory (off the event loop: a `node_modules` takes a while), or keep
        it as `keep` says; the kept path, or None."""
        if self.path is None:
            return None
        keep = self.spec.keep
        if keep == "always" or (keep == "on_failure" and not passed):
            return str(self.path)
        await asyncio.to_thread(self.discard)
        return None

    def discard(self) -> None:
        """Delete the directory whatever `keep` says (a cancelled case)."""
        if self.path is not None:
            shutil.rmtree(self.path, ignore_errors=True)

    async def _hook(self, name: str, hook: WorkspaceHook, default_ms: int) -> None:
        context = self._context()
        values = {
            key: value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            for key, value in context.items()
        }
        values["case_input"] = values["case_input"] if context["case_input"] is not None else ""
        argv = [_PLACEHOLDER.sub(lambda m: values[m[1]], arg) for arg in hook.argv]
        cwd = self.suite_dir / hook.cwd if hook.cwd else self.suite_dir
        timeout_s = (hook.timeout_ms or default_ms) / 1000
        stdin = json.dumps(context, ensure_ascii=False, default=str).encode()
        await _run(argv, stdin, cwd, timeout_s, f"workspace hook {name} ('{argv[0]}')")

    async def _clone(self, repo: WorkspaceRepo) -> None:
        assert self.path is not None
        source = repo.repo
        local = self.suite_dir / source
        if local.exists():
            source = str(local.resolve())
        elif _SHORTHAND.fullmatch(source) and "://" not in source:
            source = f"https://github.com/{source}.git"
        dest = (self.path / repo.path).resolve()
        what = f"git clone of {repo.repo} into {repo.path}"
        await _run(
            ["git", "clone", "--quiet", source, str(dest)], b"", self.path, GIT_TIMEOUT_S, what
        )
        ref = repo.commit or "HEAD"
        if repo.ancestor:
            ref = f"{ref}~{repo.ancestor}"
        if ref != "HEAD":
            await _run(
                ["git", "-c", "advice.detachedHead=false", "checkout", "--quiet", ref],
                b"",
                dest,
                GIT_TIMEOUT_S,
                f"git checkout of {ref} in {repo.path}",
            )


def _copy_template(template: Path, dest: Path) -> None:
    """Copy the template's content (its `.git` left out, symlinks kept as links)."""
    shutil.copytree(
        template, dest, symlinks=True, ignore=shutil.ignore_patterns(".git"), dirs_exist_ok=True
    )
