"""YAML loading that remembers where every value came from.

PyYAML's composed node tree carries line numbers; we construct plain Python data from it
ourselves so that each YAML path (`tests[2].assertions[0]`) maps to a file and line, duplicate
keys are caught (PyYAML silently keeps the last) and `${VAR}` / `${VAR:-default}` are
interpolated with a located error when a variable is unset.

Aliases are the one way a small file becomes large data: nine anchors of nine aliases each
(a "billion laughs", 495 bytes) expand to 387 million values. The builder counts the values it
makes through aliases and merge keys and stops with a located error past a bound, as it does
for a recursive alias and for nesting deeper than any suite needs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

import yaml

from assay.config._expansions import record as record_expansion
from assay.errors import ConfigError, ConfigIssue
from assay.results import JSON

__all__ = [
    "MAX_DEPTH",
    "LocPath",
    "Located",
    "SourceMap",
    "format_path",
    "interpolate_env",
    "load_yaml",
    "parse_yaml",
    "syntax_issue",
]

LocPath = tuple[str | int, ...]

_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MERGE = "tag:yaml.org,2002:merge"

MAX_DEPTH = 100
"""Deepest nesting of a YAML document (suites nest a few levels; JSON schemas a few more)."""

ALIAS_VALUES_FLOOR = 100_000
"""Values aliases and merge keys may add to any document..."""

ALIAS_VALUES_RATIO = 10
"""...and to a larger one, per value written in the file: a test list sharing one anchored
list of graders adds a few dozen values per test, a "billion laughs" millions per line."""

_SHOWN_DEPTH = 8
"""Parts of a deep path shown in a message."""

_TEXT_PER_VALUE = 100
"""Characters of text that count as one more value against the alias bound."""

_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

try:  # the C loader is several times faster on large suites
    _Loader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover — PyYAML built without libyaml
    _Loader = yaml.SafeLoader


def format_path(path: LocPath) -> str:
    """Render a YAML path the way users read it: `tests[2].assertions[0].value`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            # a NUL or a newline in a key: shown escaped, not printed
            name = part if part.isprintable() else part.encode("unicode_escape").decode("ascii")
            out += f".{name}" if out else name
    return out


@dataclass(frozen=True, slots=True)
class Located:
    """A file and line (slotted: loading a JSONL suite makes one per test)."""

    file: str
    line: int | None


@dataclass
class SourceMap:
    """Where each YAML path of a document came from (file and 1-based line)."""

    entries: dict[LocPath, Located] = field(default_factory=dict)
    default_file: str = ""

    def locate(self, path: LocPath) -> Located:
        """The location of `path`, or of its nearest located ancestor."""
        for end in range(len(path), -1, -1):
            found = self.entries.get(path[:end])
            if found is not None:
                return found
        return Located(self.default_file, None)

    def issue(self, path: LocPath, message: str) -> ConfigIssue:
        """A ConfigIssue located at `path`."""
        where = self.locate(path)
        return ConfigIssue(where.file, where.line, format_path(path), message)

    def rename(self, old: LocPath, new: LocPath) -> None:
        """Move the locations of `old` and everything under it to `new` (a renamed key)."""
        size = len(old)
        for path in [p for p in self.entries if p[:size] == old]:
            self.entries[new + path[size:]] = self.entries[path]

    def graft(self, prefix: LocPath, other: SourceMap) -> None:
        """Add another document's locations under `prefix` (tests loaded from another file)."""
        for path, where in other.entries.items():
            self.entries[prefix + path] = where


def interpolate_env(
    text: str, environ: Mapping[str, str], used: dict[str, str] | None = None
) -> str:
    """Replace `${VAR}` and `${VAR:-default}`; raises KeyError naming an unset variable.

    `used`, when given, receives each variable whose environment value (not a default) went
    into the text, so stored copies can take it back out (`assay.config._expansions`)."""

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = environ.get(name)
        if value is None or (value == "" and default is not None):
            if default is None:
                raise KeyError(name)
            return default
        if used is not None:
            used[name] = value
        return value

    return _ENV.sub(replace, text)


class _Refused(Exception):
    """Stops building a document that is too large, recursive or too deep: one located issue."""

    def __init__(self, issue: ConfigIssue) -> None:
        self.issue = issue
        super().__init__(str(issue))


class _Builder:
    def __init__(self, loader: yaml.SafeLoader, source: SourceMap, environ: Mapping[str, str]):
        self.loader = loader
        self.source = source
        self.environ = environ
        self.issues: list[ConfigIssue] = []
        self.interpolate = True
        self.written = 0
        """Values built from where they are written in the file."""
        self.aliased = 0
        """Values built again through an alias or a merge key."""
        self._expanding = 0  # > 0 while building a collection reached again through an alias
        self._built: set[int] = set()  # collection and long text nodes built once already
        self._open: set[int] = set()  # collection nodes being built (a recursive alias)
        self._flattened: dict[int, int] = {}  # mapping node -> its pairs once merges are in
        self._alias: tuple[LocPath, int] = ((), 0)  # the outermost alias being expanded

    def build(self, node: yaml.Node, path: LocPath) -> JSON:
        self.source.entries.setdefault(
            path, Located(self.source.default_file, node.start_mark.line + 1)
        )
        key = id(node)
        if not isinstance(node, yaml.CollectionNode):
            # A long text counts for its length: aliased a thousand times, it is a thousand
            # copies in the run's snapshot of the suite.
            size = 1 + len(node.value) // _TEXT_PER_VALUE
            again = size > 1 and key in self._built
            if size > 1:
                self._built.add(key)
            self._count(size, path, again=again)
            return self._leaf(node, path)
        if key in self._open:
            self._refuse(
                path,
                f"recursive YAML alias: the anchor on line {node.start_mark.line + 1} contains "
                "itself, so its value would be infinite; YAML data for assay must be a tree",
            )
        if len(path) > MAX_DEPTH:
            self._refuse(path[:_SHOWN_DEPTH], f"nested deeper than {MAX_DEPTH} levels")
        again = key in self._built
        if again and not self._expanding:
            self._alias = (path, node.start_mark.line + 1)
        self._expanding += again
        self._open.add(key)
        try:
            self._count(1, path, again=False)
            if isinstance(node, yaml.MappingNode):
                return self._mapping(node, path)
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        finally:
            self._open.discard(key)
            self._built.add(key)
            self._expanding -= again

    def _count(self, values: int, path: LocPath, *, again: bool) -> None:
        """Count values being built; refuse when aliases have added more than the bound."""
        if not (again or self._expanding):
            self.written += values
            return
        self.aliased += values
        bound = max(ALIAS_VALUES_FLOOR, ALIAS_VALUES_RATIO * self.written)
        if self.aliased > bound:
            where, anchor = self._alias if self._expanding else (path, 0)
            what = f"; this one repeats the anchor on line {anchor}" if anchor else ""
            # Located by the key the alias is written under: a list item's own entry is the
            # line of the anchor it repeats.
            written = where
            while written and isinstance(written[-1], int):
                written = written[:-1]
            at = self.source.locate(written)
            raise _Refused(
                ConfigIssue(
                    at.file,
                    at.line,
                    format_path(where[:_SHOWN_DEPTH]),
                    f"YAML aliases expand this file past {bound:,} values{what}. A few bytes "
                    "of anchors and aliases can stand for billions of values: write the data "
                    "out, or use fewer aliases of large anchors",
                )
            )

    def _refuse(self, path: LocPath, message: str) -> NoReturn:
        raise _Refused(self.source.issue(path, message))

    def _leaf(self, node: yaml.Node, path: LocPath) -> JSON:
        if node.tag == _TIMESTAMP:
            # Suites are JSON data: a date stays the text it was written as (`2024-03-05`),
            # as it would be in a JSONL or CSV test, instead of becoming a Python date.
            return self._scalar(node.value, path)
        value = self.loader.construct_object(node, deep=True)
        return self._scalar(value, path)

    def _scalar(self, value: JSON, path: LocPath) -> JSON:
        if self.interpolate and isinstance(value, str) and "${" in value:
            try:
                used: dict[str, str] = {}
                expanded = interpolate_env(value, self.environ, used)
                record_expansion(value, expanded, used)
                return expanded
            except KeyError as exc:
                self.issues.append(
                    self.source.issue(
                        path,
                        f"environment variable {exc.args[0]} is not set. Set it, or give a "
                        f"default: ${{{exc.args[0]}:-value}}",
                    )
                )
        return value

    def _merged_pairs(self, node: yaml.MappingNode, path: LocPath, chain: frozenset[int]) -> int:
        """How many pairs `node` has once its `<<:` merge keys are flattened, worked out
        before PyYAML flattens them: merges of merges multiply pairs as aliases do, and a
        mapping merged into itself would never end."""
        key = id(node)
        if key in self._flattened:
            return self._flattened[key]
        if key in chain:
            self._refuse(
                path,
                f"recursive YAML merge: the mapping on line {node.start_mark.line + 1} is "
                "merged into itself",
            )
        if len(chain) > MAX_DEPTH:
            self._refuse(path, f"YAML merge keys chained deeper than {MAX_DEPTH} levels")
        total = 0
        for key_node, value_node in node.value:
            if key_node.tag != _MERGE:
                total += 1
                continue
            merged = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            for item in merged:
                if isinstance(item, yaml.MappingNode):
                    total += self._merged_pairs(item, path, chain | {key})
        self._flattened[key] = total
        return total

    def _mapping(self, node: yaml.MappingNode, path: LocPath) -> dict[str, JSON]:
        own = {id(k) for k, _ in node.value if k.tag != _MERGE}
        if len(own) != len(node.value):
            self._count(self._merged_pairs(node, path, frozenset()) - len(own), path, again=True)
        self.loader.flatten_mapping(node)  # resolve `<<: *anchor` merge keys
        out: dict[str, JSON] = {}
        merged: set[str] = set()
        for key_node, value_node in node.value:
            key = self.loader.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                key = str(key)
            child = (*path, key)
            line = Located(self.source.default_file, key_node.start_mark.line + 1)
            if id(key_node) not in own:
                merged.add(key)
            elif key in merged:  # an explicit key overrides a merged one, as YAML intends
                merged.discard(key)
                del out[key]
            if key in out:
                first = self.source.entries[child]
                self.issues.append(
                    ConfigIssue(
                        line.file,
                        line.line,
                        format_path(child),
                        f"duplicate key '{key}' (first defined on line {first.line}); "
                        "remove one of them",
                        column=key_node.start_mark.column + 1,
                    )
                )
                continue
            self.source.entries[child] = line
            out[key] = self.build(value_node, child)
        return out


def load_yaml(
    path: Path, *, display: str | None = None, environ: Mapping[str, str] | None = None
) -> tuple[JSON, SourceMap]:
    """Parse one YAML file into plain data and its source map.

    Raises:
        ConfigError: unreadable file, YAML syntax error, duplicate key, unset variable,
            aliases expanding past the bound, a recursive alias, nesting past `MAX_DEPTH`.
    """
    name = display or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError([ConfigIssue(name, None, "", "file not found")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([ConfigIssue(name, None, "", f"cannot read file: {exc}")]) from None
    return parse_yaml(text, name, environ=environ)


def parse_yaml(
    text: str, name: str, *, environ: Mapping[str, str] | None = None, interpolate: bool = True
) -> tuple[JSON, SourceMap]:
    """`load_yaml` of text already read; `name` is the file shown in messages. Without
    `interpolate`, `${VAR}` stays as written (another tool's file).

    Raises:
        ConfigError: as `load_yaml`, but for reading the file.
    """
    source = SourceMap(default_file=name)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, source
        builder = _Builder(loader, source, os.environ if environ is None else environ)
        builder.interpolate = interpolate
        data = builder.build(node, ())
    except _Refused as exc:
        raise ConfigError([exc.issue]) from None
    except RecursionError:  # a chain of merge keys PyYAML flattens recursively
        raise ConfigError(
            [ConfigIssue(name, None, "", f"YAML nested deeper than {MAX_DEPTH} levels")]
        ) from None
    except yaml.MarkedYAMLError as exc:
        raise ConfigError([syntax_issue(name, exc)]) from None
    except yaml.YAMLError as exc:
        raise ConfigError([ConfigIssue(name, None, "", f"invalid YAML: {exc}")]) from None
    finally:
        loader.dispose()
    if builder.issues:
        raise ConfigError(builder.issues)
    return data, source


_UNCLOSED = {
    "while scanning a quoted scalar": "the quoted text starting here",
    "while parsing a flow sequence": "the [ list starting here",
    "while parsing a flow mapping": "the { mapping starting here",
}
"""What a parser context is, in the words of a user who forgot to close it."""


def syntax_issue(name: str, exc: yaml.MarkedYAMLError) -> ConfigIssue:
    """A YAML syntax error at the line and column of the mistake, with how to fix it.

    The parser reports where it gave up; for a quote or bracket never closed that is the end
    of the file, so the issue points at where the quote or bracket opens instead.
    """
    problem = (exc.problem or "").strip()
    context = (exc.context or "").strip()
    mark = exc.problem_mark or exc.context_mark
    if "end of stream" in problem and exc.context_mark is not None:
        mark, where = exc.context_mark, exc.problem_mark
        ends = f" (the file ends at line {where.line + 1})" if where is not None else ""
        what = _UNCLOSED.get(context, context.removeprefix("while "))
        message = f"{what} is never closed{ends}"
        hint = "Close it"
    else:
        opened = exc.context_mark
        message = problem
        if context and opened is not None and opened is not mark:
            message += f" ({context}, from line {opened.line + 1} column {opened.column + 1})"
        elif context:
            message += f" ({context})"
        if "maximum nesting depth" in problem:
            message = "nested deeper than the YAML parser allows (1,000 levels)"
            hint = "Flatten the data"
        elif "tab" in problem:
            hint = "Indent with spaces: YAML does not allow tabs in indentation"
        elif "mapping values are not allowed" in problem:
            hint = "Quote a value that contains ': '"
        else:
            hint = "Check the indentation and quoting of this line and the one before"
    line = mark.line + 1 if mark is not None else None
    column = mark.column + 1 if mark is not None else None
    return ConfigIssue(name, line, "", f"invalid YAML: {message}. {hint}", column=column)
