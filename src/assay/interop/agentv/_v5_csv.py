"""AgentV v5 (promptfoo-style) CSV cases: each row a test, its columns vars, and the magic
columns `__expected[N]` (assertions written as `type(threshold):value`), `__metric`,
`__threshold`, `__description`, `__prefix`/`__suffix`, `__metadata:key[]` and
`__config:__expectedN:threshold`.

The rows come out as v5 tests (`vars`, `assert`, …) for the v5 reader; an assertion AgentV
cannot read either (inline JavaScript) is a located error.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from assay.config._yaml import Located, LocPath
from assay.results import JSON

__all__ = ["csv_rows"]

_DEFAULT_THRESHOLD = 0.75
_SUPPORTED = frozenset(
    {
        "contains",
        "contains-any",
        "contains-all",
        "icontains",
        "icontains-any",
        "icontains-all",
        "starts-with",
        "ends-with",
        "regex",
        "is-json",
        "equals",
        "latency",
        "cost",
    }
)
_LISTS = frozenset({"contains-any", "contains-all", "icontains-any", "icontains-all"})
_SHAPE = re.compile(r"^((?:not-)?[a-z][a-z0-9-]*)(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$")

Fail = Callable[[str, int, str], None]
"""Reports a problem: (file as shown, line, message)."""


def csv_rows(path: Path, name: str, fail: Fail) -> Iterator[tuple[JSON, dict[LocPath, Located]]]:
    """The rows of a CSV case file as v5 tests, each with its line."""
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        _ = reader.fieldnames  # reads the header: line_num now counts it
        line = reader.line_num
        for index, row in enumerate(reader):
            at = line + 1
            line = reader.line_num
            yield _row(row, index, _at(fail, name, at)), {(): Located(name, at)}


def _at(fail: Fail, name: str, line: int) -> Callable[[str], None]:
    return lambda message: fail(name, line, message)


def _row(row: dict[str, str | None], index: int, fail: Callable[[str], None]) -> JSON:
    parsed = _Row(fail)
    for key, value in row.items():
        parsed.column((key or "").strip(), value or "")
    return parsed.test_of(index)


class _Row:
    """One CSV row being read, column by column."""

    def __init__(self, fail: Callable[[str], None]) -> None:
        self.fail = fail
        self.test: dict[str, JSON] = {}
        self.variables: dict[str, JSON] = {}
        self.metadata: dict[str, JSON] = {}
        self.asserts: list[dict[str, JSON]] = []
        self.bars: dict[int, float] = {}
        self.prefix = self.suffix = self.metric = ""

    def column(self, key: str, value: str) -> None:
        if key in ("id", "input"):
            self.test[key] = value
        elif key.startswith("__"):
            self.magic(key, value)
        elif key:
            _assign(self.variables, key.removeprefix("vars."), value)

    def magic(self, key: str, value: str) -> None:
        if key.startswith("__expected"):
            spec = _assertion(value.strip(), self.fail) if value.strip() else None
            if spec is not None:
                self.asserts.append(spec)
        elif key == "__prefix":
            self.prefix = value
        elif key == "__suffix":
            self.suffix = value
        elif key == "__description":
            self.test["criteria"] = value
        elif key == "__metric":
            self.metric = value
        elif key == "__threshold" and _number(value) is not None:
            self.test["threshold"] = _number(value)
        elif key.startswith("__metadata:"):
            _metadata(self.metadata, key.removeprefix("__metadata:"), value)
        elif key.startswith("__config:"):
            _config(key, value, self.bars, self.fail)

    def test_of(self, index: int) -> JSON:
        test = self.test
        for i, spec in enumerate(self.asserts):
            if self.metric:
                spec["metric"] = self.metric if len(self.asserts) == 1 else f"{self.metric}-{i + 1}"
            if i in self.bars:
                spec["min_score"] = self.bars[i]
        if "input" in test:
            test["input"] = f"{self.prefix}{test['input']}{self.suffix}"
        if not test.get("id"):
            test["id"] = f"row-{index + 1}"
        if self.variables:
            test["vars"] = self.variables
        if self.asserts:
            test["assert"] = list(self.asserts)
        if self.metadata:
            test["metadata"] = self.metadata
        return test


def _assertion(text: str, fail: Callable[[str], None]) -> dict[str, JSON] | None:
    """One `__expected` cell as a v5 assertion; text without a known type is `equals`."""
    for head in ("grade:", "llm-rubric:"):
        if text.startswith(head):
            return {"type": "llm-rubric", "value": text.removeprefix(head).strip()}
    if text.startswith(("javascript:", "fn:", "eval:")):
        fail("inline JavaScript assertions are not supported by assay; write a code-grader")
        return None
    if text.startswith(("python:", "file://")):
        script = text.removeprefix("python:").removeprefix("file://").strip()
        return {"type": "script", "command": ["uv", "run", "python", script]}
    shape = _SHAPE.match(text)
    if shape is None:
        return {"type": "equals", "value": text}
    kind, bar, value = shape.group(1), shape.group(2), shape.group(3)
    base = kind.removeprefix("not-")
    if base not in _SUPPORTED:
        if value is not None or bar is not None:
            fail(f"unsupported __expected assertion '{base}'; use one of {sorted(_SUPPORTED)}")
            return None
        return {"type": "equals", "value": text}
    spec: dict[str, JSON] = {"type": kind}
    threshold = float(bar) if bar else (_DEFAULT_THRESHOLD if base == "starts-with" else None)
    if base in ("latency", "cost") and threshold is None:
        fail(f"__expected {base} needs a numeric limit, e.g. {base}(1)")
        return None
    if value is not None:
        spec["value"] = [v.strip() for v in value.split(",")] if base in _LISTS else value.strip()
    if base == "latency":
        spec["threshold"] = threshold
    elif base == "cost":
        spec["budget"] = threshold
    elif threshold is not None:
        spec["min_score"] = threshold
    return spec


def _config(key: str, value: str, bars: dict[int, float], fail: Callable[[str], None]) -> None:
    expected, _, option = key.removeprefix("__config:").partition(":")
    number = _number(value)
    found = re.fullmatch(r"__expected(\d*)", expected)
    if option != "threshold" or found is None or number is None:
        fail(f"column '{key}' must be __config:__expected[N]:threshold with a number")
        return
    bars[int(found.group(1)) - 1 if found.group(1) else 0] = number


def _metadata(metadata: dict[str, JSON], key: str, value: str) -> None:
    if not value.strip():
        return
    if key.endswith("[]"):
        items = re.split(r"(?<!\\),", value)
        metadata[key[:-2]] = [i.strip().replace("\\,", ",") for i in items if i.strip()]
    else:
        metadata[key] = value


def _assign(variables: dict[str, JSON], dotted: str, value: str) -> None:
    node = variables
    *parents, last = dotted.split(".")
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[last] = value


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None
