"""AgentV's custom assertion types: a type no grader has names a script found by convention.

AgentV registers every `.agentv/assertions/<type>.{ts,js,mts,mjs}` (and, since v5,
`.agentv/graders/` and `.agentv/judges/`) from the eval file's directory up to the
filesystem root as a code grader run with `bun run <file>`; built-in types win over a file of
the same name, and a nearer directory over a farther one.
"""

from __future__ import annotations

import shlex
from pathlib import Path

__all__ = ["bun_command", "custom_assertion", "custom_command"]

_DIRS = ("assertions", "graders", "judges")
_SUFFIXES = (".ts", ".js", ".mts", ".mjs")


def custom_assertion(base_dir: Path, name: str) -> Path | None:
    """The script AgentV runs for assertion type `name`, or None."""
    if not name or "/" in name or name.startswith("."):
        return None
    start = base_dir.resolve()
    for sub in _DIRS:  # AgentV discovers assertions before graders (first registered wins)
        for directory in (start, *start.parents):
            for suffix in _SUFFIXES:
                found = directory / ".agentv" / sub / f"{name}{suffix}"
                if found.is_file():
                    return found
    return None


def custom_command(name: str, script: Path) -> list[str]:
    """`bun run <script>`, as AgentV runs it; without bun on PATH the grading (not the load)
    fails with a message naming the type and the file."""
    return bun_command(["run", str(script)], f"custom assertion type {name} ({script})")


def bun_command(args: list[str], what: str) -> list[str]:
    """`bun <args>` through `sh`, so that a missing bun fails the grading (not the load) with
    a message saying what needed it."""
    missing = f"{what} runs with bun, as AgentV runs it, and bun is not on PATH; install bun"
    check = f"command -v bun >/dev/null 2>&1 || {{ echo {shlex.quote(missing)} >&2; exit 127; }}"
    return ["sh", "-c", f'{check}; exec bun "$@"', "sh", *args]
