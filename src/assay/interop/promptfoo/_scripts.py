"""promptfoo's code-running assertion values as assay commands: `javascript` and `python`
assertions, and output `transform`s.

Each becomes a command running one of the wrappers shipped in this package (`wrappers/`)
under `node` or `python3`: the wrapper reads assay's grading context on stdin, calls the code
with promptfoo's `(output, context)` and answers in assay's code-grader contract. The import
writes a copy of the wrappers beside the suite (`promptfoo_wrappers/`) and the commands name
them, and any `file://` script, relative to the suite's directory — where code-graders run —
so the suite and its helpers move together, to another checkout or machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from assay.results import JSON

__all__ = ["WRAPPER_DIR", "Command", "script_command", "wrapper_files"]

WRAPPERS = Path(__file__).resolve().parent / "wrappers"
"""The wrappers in the installed package, copied beside each converted suite."""
WRAPPER_DIR = "promptfoo_wrappers"
"""Where the import writes them, relative to the suite."""
_JS = (".js", ".cjs", ".mjs")
_DOLLAR = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}")
"""What a suite reads as an environment variable when it loads (a JavaScript template
literal's `${name}` too): inline code holding it is written to a file instead."""
_RUNTIMES = {"javascript": ("node", "assertion.cjs"), "python": ("python3", "assertion.py")}


def wrapper_files() -> dict[str, str]:
    """The wrappers to write beside the suite: relative path → text."""
    return {
        f"{WRAPPER_DIR}/{name}": (WRAPPERS / name).read_text(encoding="utf-8")
        for _, name in _RUNTIMES.values()
    }


@dataclass
class Command:
    """The argv of a wrapper run, or why the value cannot run."""

    argv: list[str] | None = None
    problem: str | None = None
    memory_mb: int | None = 512
    """The code-grader's address-space limit: None for node, whose V8 reserves gigabytes of
    address space at start (its heap is capped with --max-old-space-size instead)."""
    files: dict[str, str] = field(default_factory=dict)
    """Files to write beside the suite for this command (inline code holding `${…}`)."""


def _reference(value: str, base: Path, out: Path) -> tuple[str, Path] | str:
    """(`file://path[:function]` relative to `out`, the path) of a `file://` value relative to
    `base`, or what is wrong."""
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
    try:
        shown = Path(os.path.relpath(path, out.resolve())).as_posix()
    except ValueError:  # another drive (Windows): only an absolute path reaches it
        shown = str(path)
    return f"file://{shown}{name}", path


def script_command(
    kind: str,
    value: JSON,
    base: Path,
    *,
    out: Path | None = None,
    threshold: JSON = None,
    config: JSON = None,
    transform: bool = False,
) -> Command:
    """The wrapper command for a `javascript`/`python` assertion value, or a `transform`
    (inline transforms are JavaScript, as in promptfoo; a `file://` one is run by its type).

    `base` is the promptfoo config's directory, `out` the suite's (default: the same)."""
    if not isinstance(value, str) or not value.strip():
        return Command(problem=f"{kind} needs its code or a file:// script as a string")
    runtime = kind
    if value.startswith("file://"):
        found = _reference(value, base, base if out is None else out)
        if isinstance(found, str):
            return Command(problem=found)
        value, path = found
        runtime = "python" if path.suffix == ".py" else "javascript"
    program, wrapper = _RUNTIMES[runtime]
    heap = ["--max-old-space-size=512"] if runtime == "javascript" else []
    argv = [program, *heap, f"{WRAPPER_DIR}/{wrapper}"]
    if transform:
        argv.append("--transform")
    if isinstance(threshold, int | float) and not isinstance(threshold, bool):
        argv += ["--threshold", f"{threshold:g}"]
    if config is not None:
        argv += ["--config", json.dumps(config, ensure_ascii=False, separators=(",", ":"))]
    memory = None if runtime == "javascript" else 512
    if not value.startswith("file://") and _DOLLAR.search(value):
        # `${x}` in the command would be read as an environment variable when the suite
        # loads; the wrapper reads the code from a file beside the suite instead
        digest = hashlib.sha256(value.encode()).hexdigest()[:12]
        name = f"{WRAPPER_DIR}/code/{digest}.{'py' if runtime == 'python' else 'js'}"
        return Command([*argv, "--code-file", name], memory_mb=memory, files={name: value})
    return Command([*argv, "--", value], memory_mb=memory)
