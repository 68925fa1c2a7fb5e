"""Where AgentV looks for its project files, and how it reads `${{ VAR }}` and `.env` files.

AgentV searches from the eval file's directory upward to the repository root (the nearest
directory holding `.git` from the working directory up, else the working directory; an eval
file outside it is searched up to the filesystem root) for `.agentv/targets.yaml` and
`.agentv/config.yaml`, and loads every `.env` file on that path (the nearest wins, the real
environment wins over all of them). `${{ VAR }}` in targets files is whole-value only: a string
that is exactly one reference is replaced, anything else is a literal.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["AgentVEnv", "directory_chain", "find_repo_root", "whole_reference"]

_WHOLE_REFERENCE = re.compile(r"^\$\{\{\s*([A-Za-z0-9_]+)\s*\}\}$")
_DOTENV_LINE = re.compile(
    r"^\s*(?:export\s+)?([\w.-]+)\s*[=:]\s*(\"(?:[^\"\\]|\\.)*\"|'[^']*'|`[^`]*`|[^#]*?)\s*(?:#.*)?$"
)


def whole_reference(value: object) -> str | None:
    """The variable name when `value` is exactly one `${{ VAR }}` reference (spaces around it
    allowed, as AgentV trims), else None."""
    if not isinstance(value, str):
        return None
    match = _WHOLE_REFERENCE.match(value.strip())
    return match.group(1) if match else None


def find_repo_root(start: Path) -> Path:
    """The nearest directory from `start` upward that holds `.git` (a directory, or the file
    of a worktree), else `start` itself: AgentV's `findRepoRoot`."""
    start = start.resolve()
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return start


def directory_chain(start: Path, repo_root: Path) -> list[Path]:
    """`start`, then each parent up to and including `repo_root` (then the filesystem root if
    `start` is outside it, and `repo_root` last): AgentV's `buildDirectoryChain`."""
    chain: list[Path] = []
    for directory in (start.resolve(), *start.resolve().parents):
        chain.append(directory)
        if directory == repo_root:
            break
    if repo_root not in chain:
        chain.append(repo_root)
    return chain


def _read_dotenv(path: Path) -> dict[str, str]:
    """The assignments of one `.env` file, as the `dotenv` package AgentV uses reads them:
    `KEY=value`, optional `export`, quotes stripped, `\\n` expanded in double quotes."""
    values: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return values
    for line in text.splitlines():
        match = _DOTENV_LINE.match(line)
        if not match:
            continue
        key, raw = match.group(1), match.group(2).strip()
        if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'`":
            quote, raw = raw[0], raw[1:-1]
            if quote == '"':
                raw = raw.replace("\\n", "\n").replace("\\r", "\r")
        values[key] = raw
    return values


@dataclass
class AgentVEnv(Mapping[str, str]):
    """The variables `${{ VAR }}` reads: the process environment over the `.env` files found
    from the eval file's directory up to the repository root and the working directory."""

    environ: Mapping[str, str]
    dotenv: dict[str, str] = field(default_factory=dict)
    """Values only `.env` files give, nearest file first."""
    dotenv_files: list[Path] = field(default_factory=list)

    @classmethod
    def for_eval(cls, eval_dir: Path, repo_root: Path) -> AgentVEnv:
        """The environment AgentV runs an eval file of `eval_dir` with."""
        directories = [*directory_chain(eval_dir, repo_root), Path.cwd().resolve()]
        env = cls(os.environ)
        for directory in dict.fromkeys(directories):
            candidate = directory / ".env"
            if candidate.is_file():
                env.dotenv_files.append(candidate)
                for key, value in _read_dotenv(candidate).items():
                    env.dotenv.setdefault(key, value)
        return env

    def __getitem__(self, key: str) -> str:
        if key in self.environ:
            return self.environ[key]
        return self.dotenv[key]

    def __iter__(self) -> Iterator[str]:
        return iter({**self.dotenv, **self.environ})

    def __len__(self) -> int:
        return len({**self.dotenv, **self.environ})

    def export(self, names: list[str]) -> None:
        """Put the `.env` values of `names` into the process environment where it lacks them,
        as AgentV does: the API keys and settings a target reads at run time come from there."""
        for name in names:
            if name not in os.environ and name in self.dotenv:
                os.environ[name] = self.dotenv[name]
