"""promptfoo's code-running assertion values as assay commands: `javascript` and `python`
assertions, and output `transform`s.

Each becomes a command running one of the wrappers shipped in this package (`wrappers/`)
under `node` or `python3`: the wrapper reads assay's grading context on stdin, calls the code
with promptfoo's `(output, context)` and answers in assay's code-grader contract. The wrapper
is named by its absolute path in the installed package, and a `file://` script by its absolute
path, so the converted suite runs from wherever it is written (and must be converted again
after assay moves to another environment).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from assay.results import JSON

__all__ = ["Command", "script_command"]

WRAPPERS = Path(__file__).resolve().parent / "wrappers"
_JS = (".js", ".cjs", ".mjs")
_RUNTIMES = {
    "javascript": ("node", WRAPPERS / "assertion.cjs"),
    "python": ("python3", WRAPPERS / "assertion.py"),
}


@dataclass
class Command:
    """The argv of a wrapper run, or why the value cannot run."""

    argv: list[str] | None = None
    problem: str | None = None
    memory_mb: int | None = 512
    """The code-grader's address-space limit: None for node, whose V8 reserves gigabytes of
    address space at start (its heap is capped with --max-old-space-size instead)."""


def _reference(value: str, base: Path) -> tuple[str, Path] | str:
    """(`file:///abs/path[:function]`, the path) of a `file://` value, or what is wrong."""
    spec = value.removeprefix("file://")
    name = ""
    head, sep, tail = spec.rpartition(":")
    if sep and len(head) > 1 and head.endswith((*_JS, ".py", ".ts")):
        spec, name = head, f":{tail}"
    path = (base / spec).resolve()
    if path.suffix in (".ts", ".mts", ".cts"):
        return f"'{spec}' is TypeScript; compile it and point the assertion at the .js file"
    if path.suffix not in (*_JS, ".py"):
        return f"'{spec}' is neither a JavaScript (.js, .cjs, .mjs) nor a Python (.py) file"
    if not path.is_file():
        return f"'{spec}' does not exist (looked at {path})"
    return f"file://{path}{name}", path


def script_command(
    kind: str,
    value: JSON,
    base: Path,
    *,
    threshold: JSON = None,
    config: JSON = None,
    transform: bool = False,
) -> Command:
    """The wrapper command for a `javascript`/`python` assertion value, or a `transform`
    (inline transforms are JavaScript, as in promptfoo; a `file://` one is run by its type)."""
    if not isinstance(value, str) or not value.strip():
        return Command(problem=f"{kind} needs its code or a file:// script as a string")
    runtime = kind
    if value.startswith("file://"):
        found = _reference(value, base)
        if isinstance(found, str):
            return Command(problem=found)
        value, path = found
        runtime = "python" if path.suffix == ".py" else "javascript"
    program, wrapper = _RUNTIMES[runtime]
    heap = ["--max-old-space-size=512"] if runtime == "javascript" else []
    argv = [program, *heap, str(wrapper)]
    if transform:
        argv.append("--transform")
    if isinstance(threshold, int | float) and not isinstance(threshold, bool):
        argv += ["--threshold", f"{threshold:g}"]
    if config is not None:
        argv += ["--config", json.dumps(config, ensure_ascii=False, separators=(",", ":"))]
    return Command([*argv, "--", value], memory_mb=None if runtime == "javascript" else 512)
