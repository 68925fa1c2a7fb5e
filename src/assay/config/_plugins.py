"""Plugin grader and target types in the suite models, so YAML uses them by their type name.

The models validate graders and targets with discriminated unions of the built-in classes
(`GraderSpec`, `TargetSpec`). When installed packages add types (entry points
`assay.graders`, `assay.targets`), every field holding one of those unions is switched to the
union of all registered types and its model rebuilt, once per process, when the models are
defined: validation, "did you mean" and `assay schema` then know the plugins exactly as they
know the built-ins. With no plugin installed nothing changes. Provider plugins
(`assay.providers`) are loaded at the same moment, so a broken one is reported the same way. A
plugin that cannot be loaded leaves the built-in unions in place and its error is raised by
`require_plugins`, which every entry point that reads a suite or project file calls.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from typing import Annotated, Any, Union

from pydantic import BaseModel

from assay._plugins import plugin_entries
from assay.errors import PluginError
from assay.graders._registry import GraderSpec, grader_spec, plugin_graders
from assay.providers import provider_presets
from assay.targets import TargetSpec, plugin_targets, target_spec

__all__ = ["install_plugin_types", "plugin_schema_problems", "require_plugins"]

_failure: list[PluginError] = []
"""The error of loading plugins, when it failed (raised again by `require_plugins`)."""


def _swapped(annotation: Any, swaps: dict[int, Any]) -> Any:
    """`annotation` with every union in `swaps` (by identity) replaced, at any depth."""
    if id(annotation) in swaps:
        return swaps[id(annotation)]
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if origin is None or not args:
        return annotation
    if origin is Annotated:
        inner = _swapped(args[0], swaps)
        return annotation if inner is args[0] else Annotated[(inner, *annotation.__metadata__)]
    new = tuple(_swapped(arg, swaps) for arg in args)
    if all(a is b for a, b in zip(new, args, strict=True)):
        return annotation
    if origin is Union or origin is types.UnionType:
        return Union[new]  # noqa: UP007  # built at run time
    return origin[new]


def install_plugin_types(models: Sequence[type[BaseModel]]) -> None:
    """Switch `models` (and the composite grader) to the unions that include plugin types.

    `models` are listed so that a model comes after every model it holds. Called once, as
    the suite models are defined; a plugin error is kept for `require_plugins`.
    """
    try:
        graders, targets = grader_spec(), target_spec()
        provider_presets()  # `provider:` names are checked by name, no model to rebuild
    except PluginError as exc:
        _failure.append(exc)
        return
    swaps = {id(GraderSpec): graders, id(TargetSpec): targets}
    if graders is GraderSpec and targets is TargetSpec:
        return
    from assay.graders.composite import Composite  # holds graders; imported only to rebuild it

    rebuilt: tuple[type[BaseModel], ...] = (Composite, *models)
    for model in rebuilt:  # each rebuilt: it may hold a rebuilt model
        for field in model.model_fields.values():
            field.annotation = _swapped(field.annotation, swaps)
        model.model_rebuild(force=True)


def require_plugins() -> None:
    """Raise the error of loading the installed plugins, if there was one.

    Raises:
        PluginError: a grader, target or provider plugin cannot be loaded (the message
            names the package and the entry point).
    """
    if _failure:
        raise _failure[0]


def plugin_schema_problems() -> list[str]:
    """Why plugin types are missing from the suite's JSON Schema: a type with an option that
    has no JSON Schema (a field typed as a callable) is left out of it by pydantic, silently,
    so `assay schema` warns about each one.

    Raises:
        PluginError: a grader or target plugin cannot be loaded.
    """
    require_plugins()
    problems = []
    for kind, types_ in (("grader", plugin_graders()), ("target", plugin_targets())):
        for name, cls in types_.items():
            try:
                cls.model_json_schema()
            except Exception as exc:  # pydantic's error for a type without a JSON Schema
                entry = next(e for e in plugin_entries(kind) if e.name == name)
                reason = str(exc).splitlines()[0]
                problems.append(
                    f"{entry.where}: the schema leaves out its {kind} type '{name}': an option "
                    f"of {cls.__qualname__} has no JSON Schema ({reason})"
                )
    return problems
