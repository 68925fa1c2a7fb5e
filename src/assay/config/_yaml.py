"""YAML loading that remembers where every value came from.

PyYAML's composed node tree carries line numbers; we construct plain Python data from it
ourselves so that each YAML path (`tests[2].assertions[0]`) maps to a file and line, duplicate
keys are caught (PyYAML silently keeps the last) and `${VAR}` / `${VAR:-default}` are
interpolated with a located error when a variable is unset.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from assay.config._expansions import record as record_expansion
from assay.errors import ConfigError, ConfigIssue
from assay.results import JSON

__all__ = ["LocPath", "Located", "SourceMap", "format_path", "interpolate_env", "load_yaml"]

LocPath = tuple[str | int, ...]

_TIMESTAMP = "tag:yaml.org,2002:timestamp"

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
            out += f".{part}" if out else str(part)
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


class _Builder:
    def __init__(self, loader: yaml.SafeLoader, source: SourceMap, environ: Mapping[str, str]):
        self.loader = loader
        self.source = source
        self.environ = environ
        self.issues: list[ConfigIssue] = []

    def build(self, node: yaml.Node, path: LocPath) -> JSON:
        self.source.entries.setdefault(
            path, Located(self.source.default_file, node.start_mark.line + 1)
        )
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        if node.tag == _TIMESTAMP:
            # Suites are JSON data: a date stays the text it was written as (`2024-03-05`),
            # as it would be in a JSONL or CSV test, instead of becoming a Python date.
            return self._scalar(node.value, path)
        value = self.loader.construct_object(node, deep=True)
        return self._scalar(value, path)

    def _scalar(self, value: JSON, path: LocPath) -> JSON:
        if isinstance(value, str) and "${" in value:
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

    def _mapping(self, node: yaml.MappingNode, path: LocPath) -> dict[str, JSON]:
        own = {id(k) for k, _ in node.value if k.tag != "tag:yaml.org,2002:merge"}
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
        ConfigError: unreadable file, YAML syntax error, duplicate key, unset variable.
    """
    name = display or str(path)
    source = SourceMap(default_file=name)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError([ConfigIssue(name, None, "", "file not found")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([ConfigIssue(name, None, "", f"cannot read file: {exc}")]) from None
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, source
        builder = _Builder(loader, source, os.environ if environ is None else environ)
        data = builder.build(node, ())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        raise ConfigError(
            [ConfigIssue(name, line, "", f"invalid YAML: {problem}. Check indentation and quoting")]
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError([ConfigIssue(name, None, "", f"invalid YAML: {exc}")]) from None
    finally:
        loader.dispose()
    if builder.issues:
        raise ConfigError(builder.issues)
    return data, source
