"""User code named in a suite: `module:qualname` references and command lines.

A leaf module: the `python` target and `code-grader` resolve functions, and the `command` target
and `code-grader` split commands, the same way and with the same messages.
"""

from __future__ import annotations

import importlib
import shlex
from collections.abc import Callable
from typing import Annotated

from pydantic import AfterValidator

from assay._strict_model import suggest

__all__ = [
    "CommandLine",
    "UnresolvedReference",
    "resolve_reference",
    "split_command",
    "user_code_imported",
]

_user_code_imported = False


def user_code_imported() -> bool:
    """Whether this process has imported a module a suite named (a `python` target, a
    `code-grader`): its objects may hold open files, which the `assay` executable flushes
    before it ends without Python's teardown (`assay.cli.console`)."""
    return _user_code_imported


class UnresolvedReference(ValueError):
    """A reference that cannot be imported or is not callable; the message says how to fix it."""

    def __init__(self, message: str, *, module_missing: bool = False) -> None:
        super().__init__(message)
        self.module_missing = module_missing
        """The module itself was not found (callers may add where they searched)."""


def resolve_reference(reference: str) -> Callable[..., object]:
    """Import `module:qualname` (dotted on both sides) and return the callable it names.

    Raises:
        UnresolvedReference: the module cannot be imported, an attribute is missing (with a "did you
            mean"), or the object is not callable.
    """
    global _user_code_imported  # noqa: PLW0603 -- one fact about the process
    module_name, _, qualname = reference.partition(":")
    _user_code_imported = True
    try:
        found: object = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise UnresolvedReference(
            f"cannot import module '{module_name}' ({exc})", module_missing=True
        ) from None
    except Exception as exc:
        raise UnresolvedReference(
            f"importing module '{module_name}' failed: {type(exc).__name__}: {exc}"
        ) from None
    owner = module_name
    for attribute in qualname.split("."):
        if not hasattr(found, attribute):
            public = {name for name in dir(found) if not name.startswith("_")}
            hint = suggest(attribute, public)
            raise UnresolvedReference(f"'{owner}' has no attribute '{attribute}'.{hint}")
        found = getattr(found, attribute)
        owner = f"{owner}.{attribute}" if owner != module_name else f"{owner}:{attribute}"
    if not callable(found):
        raise UnresolvedReference(
            f"'{reference}' is not callable (its type is {type(found).__name__})"
        )
    return found


def split_command(value: list[str] | str) -> list[str]:
    """A command as an argument list (a string is split like a shell would, without one).

    Raises:
        ValueError: the string cannot be split, or the command is empty.
    """
    try:
        argv = shlex.split(value) if isinstance(value, str) else list(value)
    except ValueError as exc:
        raise ValueError(f"cannot split the command string: {exc}") from None
    if not argv or not argv[0]:
        raise ValueError("the command is empty; give the program to run, e.g. [python, run.py]")
    return argv


def _splittable(value: list[str] | str) -> list[str] | str:
    split_command(value)
    return value


CommandLine = Annotated[list[str] | str, AfterValidator(_splittable)]
"""A command field of a config model: kept as written, checked when the file loads that it
splits into a program and its arguments (`split_command`)."""
