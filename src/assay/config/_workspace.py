"""The `workspace:` block of a suite or a test: a fresh directory per case for agents that
edit files (SPEC §2, AgentV's `workspace`), described here, set up by the runner.

The keys mirror AgentV's so its files map one to one (docs/suite-reference.md#workspace).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from assay._references import CommandLine, split_command
from assay._strict_model import StrictModel

__all__ = ["Workspace", "WorkspaceHook", "WorkspaceHooks", "WorkspaceRepo"]

SETUP_TIMEOUT_MS = 60_000
"""Default of `before_all` / `before_each` (AgentV's)."""
TEARDOWN_TIMEOUT_MS = 30_000
"""Default of `after_each` / `after_all` (AgentV's)."""


class WorkspaceHook(StrictModel):
    """A command run at one point of a workspace's life.

    It reads `{workspace_path, test_id, eval_run_id, case_input, case_metadata}` as JSON on
    stdin, and `{{workspace_path}}`, `{{test_id}}`, `{{eval_run_id}}`, `{{case_input}}` and
    `{{case_metadata}}` in its arguments are replaced by those values.
    """

    command: CommandLine
    """The program and its arguments, run without a shell (a string is split like a shell
    would)."""
    timeout_ms: Annotated[int, Field(gt=0)] | None = None
    """Kill the command (and what it started) after this many milliseconds; default 60000 for
    `before_*`, 30000 for `after_*`."""
    cwd: str | None = None
    """Working directory, relative to the suite's directory (default: that directory, as in
    AgentV); the workspace is `{{workspace_path}}`."""

    @property
    def argv(self) -> list[str]:
        """The command as an argument list, placeholders not yet replaced."""
        return split_command(self.command)


class WorkspaceHooks(StrictModel):
    """Commands run around each case. Every case has a workspace of its own, so `before_all`
    and `after_all` run once per workspace too: `before_all`, `before_each`, the target, the
    graders, `after_each`, `after_all`."""

    enabled: bool = True
    """False skips every hook (the template and repos are still set up)."""
    before_all: WorkspaceHook | None = None
    """Runs first, once the template and repos are in place; a failure is the case's error."""
    before_each: WorkspaceHook | None = None
    """Runs after `before_all`, before the target; a failure is the case's error."""
    after_each: WorkspaceHook | None = None
    """Runs once the case is graded; a failure is the case's error."""
    after_all: WorkspaceHook | None = None
    """Runs last, before the workspace is deleted; a failure is the case's error."""


class WorkspaceRepo(StrictModel):
    """A git repository cloned into the workspace."""

    path: Annotated[str, Field(min_length=1)]
    """Directory inside the workspace to clone into (`.` for the workspace itself, which
    must then be empty: use no `template`)."""
    repo: Annotated[str, Field(min_length=1)]
    """What to clone: a path relative to the suite's directory, a URL, or GitHub's
    `owner/name` shorthand."""
    commit: str | None = None
    """Branch, tag or commit to check out (default: the clone's default branch)."""
    ancestor: Annotated[int, Field(ge=0)] = 0
    """Check out this many first-parent commits before `commit`."""


class Workspace(StrictModel):
    """A fresh directory for each case: the template copied, repositories cloned, hooks run.

    The target runs in it (a `command` target's working directory; a `python` target gets
    its path as `workspace` in the case mapping), code graders run in it, and it is deleted
    once the case is graded unless `keep` says otherwise. A test's `workspace` replaces the
    suite's key by key (`hooks` as a whole).
    """

    template: str | None = None
    """Directory copied into each workspace (without its `.git`), relative to the suite's
    directory."""
    repos: list[WorkspaceRepo] = Field(default_factory=list)
    """Git repositories cloned into each workspace, after the template is copied."""
    hooks: WorkspaceHooks | None = None
    """Commands run around each case."""
    keep: Literal["never", "on_failure", "always"] = "never"
    """Whether a workspace outlives its case: `on_failure` keeps the workspaces of cases that
    did not pass (for debugging); a kept workspace's path is in the case result
    (`workspaces`) and printed at the end of the run."""
    root: str | None = None
    """Directory the workspaces are created in, relative to the suite's directory (default:
    the system's temporary directory)."""
    isolation: Literal["per_test"] = "per_test"
    """Every case (and every repeat of it) gets a workspace of its own, so cases may run in
    parallel; AgentV's `shared` is not supported."""
