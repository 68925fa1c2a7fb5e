"""Plugins from installed packages: entry points found, loaded and checked the same way for
every kind (graders, targets, providers, reporters).

A package declares, in its `pyproject.toml`,

```toml
[project.entry-points."assay.graders"]
acme-words = "acme_assay:WordCount"
```

and the entry point's name is the type name suites use. Each kind's registry (built-ins plus
these) is built by the layer that owns the kind, with its own check of the loaded object;
this module only finds, imports and reports. Anything wrong with a plugin (an import that
fails, an object of the wrong kind, a name taken twice) is a `PluginError` naming the package,
its version and the entry point, never a traceback.
"""

from __future__ import annotations

import functools
import importlib.metadata
import inspect
import re
import typing
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Literal

from assay.errors import PluginError

__all__ = [
    "GROUPS",
    "PluginEntry",
    "PluginKind",
    "check_type_name",
    "load_plugins",
    "plugin_entries",
    "problem_with_model_class",
]

PluginKind = Literal["grader", "target", "provider", "reporter"]
"""What a plugin adds."""

GROUPS: dict[PluginKind, str] = {
    "grader": "assay.graders",
    "target": "assay.targets",
    "provider": "assay.providers",
    "reporter": "assay.reporters",
}
"""The entry-point group of each kind."""

_TYPE_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


@dataclass(frozen=True)
class PluginEntry:
    """One installed entry point of an assay group, before it is loaded."""

    kind: PluginKind
    name: str
    """The type (or format) name suites and commands use."""
    value: str
    """What it points at: `module:attribute`."""
    package: str
    """The distribution that declares it (as installed, e.g. `acme-assay`)."""
    version: str

    @property
    def where(self) -> str:
        """`package acme-assay 1.0, entry point acme-words = "acme_assay:WordCount" (group
        assay.graders)`: enough to find the line to fix."""
        return (
            f'package {self.package} {self.version}, entry point {self.name} = "{self.value}" '
            f"(group {GROUPS[self.kind]})"
        )


@functools.cache
def plugin_entries(kind: PluginKind) -> tuple[PluginEntry, ...]:
    """The installed entry points of `kind`, sorted by name then package (read once per
    process: installed packages do not change under a running process)."""
    found = []
    for point in importlib.metadata.entry_points(group=GROUPS[kind]):
        dist = point.dist
        package = dist.name if dist is not None else "(unknown package)"
        version = dist.version if dist is not None else "?"
        found.append(PluginEntry(kind, point.name, point.value, package, version))
    return tuple(sorted(found, key=lambda e: (e.name, e.package)))


def check_type_name(entry: PluginEntry) -> None:
    """Refuse a name suites could not write as a type (lowercase, digits and dashes).

    Raises:
        PluginError: the name is not of that form.
    """
    if not _TYPE_NAME.match(entry.name):
        raise PluginError(
            f"{entry.where}: '{entry.name}' is not a valid {entry.kind} name; use lowercase "
            "letters, digits and dashes (e.g. 'acme-words')"
        )


def _import(entry: PluginEntry) -> object:
    module, _, attribute = entry.value.partition(":")
    try:
        obj: object = importlib.import_module(module.strip())
        for part in attribute.strip().split(".") if attribute.strip() else ():
            obj = getattr(obj, part)
    except Exception as exc:  # a plugin's import may raise anything; report it, located
        reason = f"{type(exc).__name__}: {exc}"
        raise PluginError(
            f"{entry.where}: cannot be loaded ({reason}). Fix or uninstall the package "
            f"(pip uninstall {entry.package})"
        ) from None
    return obj


def load_plugins(
    kind: PluginKind,
    builtin: Collection[str],
    accept: Callable[[PluginEntry, object], str | None],
) -> Mapping[str, tuple[PluginEntry, object]]:
    """Import every plugin of `kind` and check it: its entry point and the object it gave,
    by name.

    `accept(entry, obj)` says what is wrong with a loaded object (None when it is right).

    Raises:
        PluginError: a plugin cannot be imported, is not what its kind needs, or takes a name
            a built-in or another plugin already has.
    """
    loaded: dict[str, tuple[PluginEntry, object]] = {}
    for entry in plugin_entries(kind):
        check_type_name(entry)
        if entry.name in builtin:
            raise PluginError(
                f"{entry.where}: '{entry.name}' is already a built-in {kind} type; the plugin "
                "must use another name"
            )
        if entry.name in loaded:
            other = loaded[entry.name][0]
            raise PluginError(
                f"{entry.where}: '{entry.name}' is also the {kind} type of {other.where}; "
                "two plugins cannot share a type name (uninstall one of them)"
            )
        obj = _import(entry)
        problem = accept(entry, obj)
        if problem is not None:
            raise PluginError(f"{entry.where}: {problem}")
        loaded[entry.name] = (entry, obj)
    return loaded


def problem_with_model_class(
    entry: PluginEntry, obj: object, base: type, base_name: str
) -> str | None:
    """What is wrong with `obj` as the class of a grader or target type named `entry.name`:
    it must be a concrete subclass of `base` declaring `type: Literal["<name>"]`."""
    if not isinstance(obj, type) or not issubclass(obj, base):
        return f"it gives {_described(obj)}, not a subclass of {base_name}"
    if inspect.isabstract(obj):
        missing = ", ".join(sorted(getattr(obj, "__abstractmethods__", ())))
        return f"its class {obj.__qualname__} is abstract (implement {missing})"
    field = getattr(obj, "model_fields", {}).get("type")
    names = typing.get_args(field.annotation) if field is not None else ()
    if names != (entry.name,):
        return (
            f"its class {obj.__qualname__} must declare the type name of its entry point: "
            f'type: Literal["{entry.name}"] = "{entry.name}"'
        )
    return None


def _described(obj: object) -> str:
    if isinstance(obj, type):
        return f"the class {obj.__module__}.{obj.__qualname__}"
    return f"{type(obj).__name__} {obj!r}"[:80]
