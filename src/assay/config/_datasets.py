"""Tests from external files: `tests: ./cases.jsonl`, `./cases.csv`, `./cases/*.yaml` (SPEC §2)."""

from __future__ import annotations

import csv
import glob
import json
from collections.abc import Callable, Iterator
from pathlib import Path

from assay._paths import is_file
from assay.config._yaml import MAX_DEPTH, Located, LocPath, load_yaml
from assay.errors import ConfigError, ConfigIssue
from assay.results import JSON

__all__ = ["CSV_JSON_FIELDS", "CSV_LIST_FIELDS", "TestEntries", "display_path", "iter_tests"]

CSV_LIST_FIELDS = ("context", "expected_outcomes", "tags")
"""CSV columns holding lists, written as `;`-separated values."""
CSV_JSON_FIELDS = ("assertions", "expected_tool_calls", "execution", "input_messages")
"""CSV columns holding JSON (objects or arrays)."""


def display_path(path: Path) -> str:
    """A path as users typed it: relative to the working directory when possible."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


TestEntries = dict[LocPath, Located]
"""Where the parts of one test came from, keyed by path within the test (`()`: the test)."""


def _nested_json(text: str) -> JSON:
    """`json.loads`, refusing nesting deeper than a YAML suite may have (`MAX_DEPTH`): Python's
    decoder recurses, and a line of 100,000 `[` crashed the load.

    Raises:
        json.JSONDecodeError: Not JSON.
        ValueError: Nested too deeply.
    """
    opened = text.count("[") + text.count("{")
    if opened > MAX_DEPTH and _depth(text) > MAX_DEPTH:
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels")
    value: JSON = json.loads(text)
    return value


def _depth(text: str) -> int:
    """The deepest bracket nesting of JSON text, outside strings (checked before parsing)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _jsonl(path: Path, name: str) -> Iterator[tuple[JSON, TestEntries]]:
    issues: list[ConfigIssue] = []
    with path.open(encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            if line.isspace():  # `not line.strip()` without copying the line (never empty)
                continue
            try:
                item = _nested_json(line)
            except json.JSONDecodeError as exc:
                issues.append(
                    ConfigIssue(name, lineno, "", f"invalid JSON: {exc.msg} (column {exc.colno})")
                )
                continue
            except ValueError as exc:
                issues.append(ConfigIssue(name, lineno, "", str(exc)))
                continue
            if not issues:  # after a bad line only the file's other bad lines matter
                # One entry per test: everything inside a JSONL test is on its line, and the
                # map's nearest-ancestor lookup finds it.
                yield item, {(): Located(name, lineno)}
    if issues:
        raise ConfigError(issues)


def _csv_cell(column: str, cell: str, name: str, line: int) -> JSON:
    if column in CSV_LIST_FIELDS:
        return [part.strip() for part in cell.split(";") if part.strip()]
    if column in CSV_JSON_FIELDS:
        try:
            return _nested_json(cell)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                [ConfigIssue(name, line, column, f"column '{column}' must hold JSON: {exc.msg}")]
            ) from None
        except ValueError as exc:
            raise ConfigError([ConfigIssue(name, line, column, str(exc))]) from None
    return cell


def _csv(path: Path, name: str) -> Iterator[tuple[JSON, TestEntries]]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        previous_end = 1  # the header is line 1
        for row in reader:
            start = previous_end + 1
            item: dict[str, JSON] = {}
            for column, cell in row.items():
                if column is None or cell is None or cell == "":
                    continue
                if column.startswith("metadata."):
                    metadata = item.setdefault("metadata", {})
                    assert isinstance(metadata, dict)
                    metadata[column.removeprefix("metadata.")] = cell
                elif column == "input_messages":
                    item["input"] = _csv_cell(column, cell, name, start)
                else:
                    item[column] = _csv_cell(column, cell, name, start)
            yield item, {(): Located(name, start)}
            previous_end = reader.line_num


def _yaml_tests(path: Path, name: str) -> Iterator[tuple[JSON, TestEntries]]:
    data, source = load_yaml(path, display=name)
    entries = source.entries
    if isinstance(data, dict) and "tests" in data:
        data = data["tests"]
        entries = {loc[1:]: where for loc, where in entries.items() if loc[:1] == ("tests",)}
    if not isinstance(data, list):
        raise ConfigError(
            [ConfigIssue(name, 1, "", "expected a list of tests (or a mapping with 'tests:')")]
        )
    per_test: list[TestEntries] = [{} for _ in data]
    for loc, where in entries.items():
        if loc and isinstance(loc[0], int):
            per_test[loc[0]][loc[1:]] = where
    yield from zip(data, per_test, strict=True)


_READERS: dict[str, Callable[[Path, str], Iterator[tuple[JSON, TestEntries]]]] = {
    ".jsonl": _jsonl,
    ".csv": _csv,
    ".yaml": _yaml_tests,
    ".yml": _yaml_tests,
}


def iter_tests(spec: str, base_dir: Path, origin: Located) -> Iterator[tuple[JSON, TestEntries]]:
    """The tests of a path or glob relative to the suite's directory, read one at a time.

    A large JSONL file is never held whole: each test is yielded as it is read. A file's
    problems raise when the reader reaches them (a file's JSON errors all at once, at its end).
    """
    pattern = spec if Path(spec).is_absolute() else str(base_dir / spec)
    matches = sorted(glob.glob(pattern, recursive=True)) if glob.has_magic(spec) else [pattern]
    if not matches:
        raise ConfigError(
            [ConfigIssue(origin.file, origin.line, "tests", f"no files match '{spec}'")]
        )
    for match in matches:
        path = Path(match)
        reader = _READERS.get(path.suffix.lower())
        if reader is None:
            raise ConfigError(
                [
                    ConfigIssue(
                        origin.file,
                        origin.line,
                        "tests",
                        f"cannot read tests from '{spec}': use .jsonl, .csv, .yaml or .yml",
                    )
                ]
            )
        if not is_file(path):
            raise ConfigError(
                [ConfigIssue(origin.file, origin.line, "tests", f"tests file '{spec}' not found")]
            )
        yield from reader(path, display_path(path))
