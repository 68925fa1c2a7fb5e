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
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

from assay.errors import PluginError

__all__ = [
    "GROUPS",
    "REGISTRIES",
    "PluginEntry",
    "PluginKind",
    "PluginSpec",
    "check_type_name",
    "checked_plugins",
    "described",
    "installed_entry_points",
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
def installed_entry_points() -> dict[str, tuple[importlib.metadata.EntryPoint, ...]]:
    """The installed entry points of assay's groups, by group, read once per process
    (installed packages do not change under a running process): one scan of the installed
    distributions, ~2-6 ms, where each group read on its own would scan them again."""
    points = importlib.metadata.entry_points()
    return {group: tuple(points.select(group=group)) for group in GROUPS.values()}


@functools.cache
def plugin_entries(kind: PluginKind) -> tuple[PluginEntry, ...]:
    """The installed entry points of `kind`, sorted by name then package."""
    found = []
    for point in installed_entry_points()[GROUPS[kind]]:
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


@dataclass(frozen=True)
class PluginSpec:
    """How one kind's registry takes plugins: the names its built-ins hold, and the check of
    a loaded object (what is wrong with it, or None)."""

    kind: PluginKind
    builtin: Collection[str]
    accept: Callable[[PluginEntry, object], str | None]


REGISTRIES: dict[PluginKind, str] = {
    "grader": "assay.graders:GRADER_PLUGINS",
    "target": "assay.targets:TARGET_PLUGINS",
    "provider": "assay.providers:PROVIDER_PLUGINS",
    "reporter": "assay.report:REPORTER_PLUGINS",
}
"""Where each kind's `PluginSpec` is (`module:name`, imported by `assay plugins` only): a kind
whose layer had no registry would be listed without being loaded. Adding one is one line
here."""


def checked_plugins(spec: PluginSpec) -> Iterator[tuple[PluginEntry, object, PluginError | None]]:
    """Every installed plugin of `spec.kind` imported and checked: the entry, what it gave
    (None when it failed) and its error (None when it is usable). One broken plugin does not
    hide the others (`assay plugins` lists them all)."""
    seen: dict[str, PluginEntry] = {}
    for entry in plugin_entries(spec.kind):
        try:
            obj = _checked(spec, entry, seen)
        except PluginError as exc:
            yield entry, None, exc
        else:
            seen[entry.name] = entry
            yield entry, obj, None


def _checked(spec: PluginSpec, entry: PluginEntry, seen: Mapping[str, PluginEntry]) -> object:
    check_type_name(entry)
    if entry.name in spec.builtin:
        raise PluginError(
            f"{entry.where}: '{entry.name}' is already a built-in {spec.kind} type; the plugin "
            "must use another name"
        )
    if entry.name in seen:
        raise PluginError(
            f"{entry.where}: '{entry.name}' is also the {spec.kind} type of "
            f"{seen[entry.name].where}; two plugins cannot share a type name (uninstall one)"
        )
    obj = _import(entry)
    problem = spec.accept(entry, obj)
    if problem is not None:
        raise PluginError(f"{entry.where}: {problem}")
    return obj


def load_plugins(spec: PluginSpec) -> dict[str, object]:
    """Import every installed plugin of `spec.kind` and check it: what each gave, by name.

    Raises:
        PluginError: a plugin cannot be imported, is not what its kind needs, or takes a name
            a built-in or another plugin already has (the first such plugin, by name).
    """
    loaded: dict[str, object] = {}
    for entry, obj, error in checked_plugins(spec):
        if error is not None:
            raise error
        loaded[entry.name] = obj
    return loaded


def problem_with_model_class(
    entry: PluginEntry, obj: object, base: type, base_name: str
) -> str | None:
    """What is wrong with `obj` as the class of a grader or target type named `entry.name`:
    it must be a concrete subclass of `base` declaring `type: Literal["<name>"]`."""
    if not isinstance(obj, type) or not issubclass(obj, base):
        return f"it gives {described(obj)}, not a subclass of {base_name}"
    if inspect.isabstract(obj):
        missing = ", ".join(sorted(getattr(obj, "__abstractmethods__", ())))
        return f"its class {obj.__qualname__} is abstract (implement {missing})"
    if not getattr(obj, "__pydantic_complete__", True):
        return (
            f"its class {obj.__qualname__} is not fully defined (an annotation names a type "
            f"that cannot be found); define that type, then call {obj.__qualname__}"
            ".model_rebuild()"
        )
    field = getattr(obj, "model_fields", {}).get("type")
    names = typing.get_args(field.annotation) if field is not None else ()
    if names != (entry.name,):
        return (
            f"its class {obj.__qualname__} must declare the type name of its entry point: "
            f'type: Literal["{entry.name}"] = "{entry.name}"'
        )
    return None


def described(obj: object) -> str:
    """What an entry point gave, for a message: `the class acme.Words`, `the function
    acme.write`, or the object's type and a bounded repr."""
    name = getattr(obj, "__qualname__", None)
    module = getattr(obj, "__module__", None)
    if isinstance(name, str) and isinstance(module, str):
        kind = "class" if isinstance(obj, type) else "function" if callable(obj) else "object"
        return f"the {kind} {module}.{name}"
    return f"{type(obj).__name__} {obj!r:.60}"
