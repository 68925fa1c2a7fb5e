"""AgentV v5's output transforms: `options.transform` of a test (or `default_test`) and an
assertion's `transform`, a JavaScript function of the output whose result is graded instead.

A transform is `file://path[:function]` (a module found on the eval file's search roots) or
inline JavaScript (an expression, or a function body when it spans several lines), called
with `(output, context)`; a string result replaces the output, another value is graded as its
JSON text. assay runs it with the JavaScript wrapper it ships for promptfoo's transforms
(`--transform`), under bun as AgentV does, inside a `transform` grader around each grader it
applies to.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from assay.config._yaml import LocPath, format_path
from assay.interop.agentv._custom_types import bun_command
from assay.interop.agentv._files import SearchRoots
from assay.interop.promptfoo._scripts import WRAPPERS
from assay.results import JSON

__all__ = ["TransformWrapper"]

_FILE = "file://"
_MOVED = ("name", "weight", "required")
"""What a wrapped grader's `transform` wrapper takes over: the result is the wrapper's."""


class TransformWrapper:
    """Turns a transform spec into a command and wraps graders in `transform` graders."""

    def __init__(self, base_dir: Path, error: Callable[[LocPath, str], None]) -> None:
        self.roots = SearchRoots(base_dir)
        self.error = error

    def command(self, spec: JSON, path: LocPath) -> list[str] | None:
        """The wrapper command of a transform, or None (an error said why)."""
        if not isinstance(spec, str) or not spec.strip():
            self.error(path, "a transform is `file://path[:function]` or JavaScript code")
            return None
        value = spec.strip()
        if value.startswith(_FILE):
            name, function = _split(value.removeprefix(_FILE))
            found = self.roots.find(name)
            if found is None:
                where = self.roots.looked_at(name)
                self.error(path, f"transform file '{name}' not found (looked at {where})")
                return None
            value = f"{_FILE}{found.resolve()}" + (f":{function}" if function else "")
        wrapper = str(WRAPPERS / "assertion.cjs")
        what = f"the transform at {format_path(path)}"
        return bun_command([wrapper, "--transform", "--", value], what)

    @staticmethod
    def wrap(graders: list[JSON], command: list[str]) -> list[JSON]:
        """Each grader (plain strings folded into one rubric first, as v4 folds them) inside
        a `transform` grader that runs `command` on the output."""
        out: list[JSON] = []
        criteria: list[JSON] = []
        for grader in graders:
            if isinstance(grader, str):
                if not criteria:
                    out.append({"type": "rubrics", "criteria": criteria})
                criteria.append(grader)
            else:
                out.append(grader)
        if len(criteria) > 1:
            rubric = next(g for g in out if isinstance(g, dict) and g.get("criteria") is criteria)
            rubric["weight"] = len(criteria)  # as v4 weighs N plain strings
        return [wrap_one(g, command) for g in out]


def wrap_one(grader: JSON, command: list[str]) -> JSON:
    """`grader` graded on the transformed output."""
    if not isinstance(grader, dict):
        return grader
    inner = dict(grader)
    outer: dict[str, JSON] = {"type": "transform", "command": command}
    outer["name"] = str(inner.get("name", inner.get("type", "transform")))
    for key in _MOVED:
        if key in inner and key != "name":
            outer[key] = inner.pop(key)
    outer["assertion"] = inner
    return outer


def _split(reference: str) -> tuple[str, str | None]:
    """`path/x.ts:fn` → (`path/x.ts`, `fn`): a colon after a script's name names a function."""
    colon = reference.rfind(":")
    if colon > 1 and Path(reference[:colon]).suffix in (".js", ".mjs", ".cjs", ".ts", ".mts"):
        return reference[:colon], reference[colon + 1 :]
    return reference, None
