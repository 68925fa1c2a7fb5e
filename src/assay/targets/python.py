"""The `python` target: call a function of the user's code with each case, in process."""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from assay._references import UnresolvedReference, resolve_reference
from assay._user_code import timed_user_call
from assay.errors import TargetError, UsageError
from assay.results import JSON, TargetOutput
from assay.targets._base import Target, TargetRequest
from assay.targets._output import parse_target_output, with_duration

__all__ = ["PythonTarget", "call_function"]

_FUNCTION_REF = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")

UserFunction = Callable[[dict[str, JSON]], object]

# Imported functions by (reference, python_path, suite dir). Kept outside the model so that
# equality of target configs does not depend on whether `setup` has run.
_imported: dict[tuple[str, tuple[str, ...], Path], UserFunction] = {}


async def call_function(
    function: UserFunction, request: TargetRequest, source: str
) -> TargetOutput:
    """Call a user function with the case mapping and parse its reply (SPEC §3): the one
    calling convention of `python` targets and of callables given to `assay.evaluate`.

    Raises:
        TargetError: The function raised (the message gives the exception type and message)
            or returned a value of the wrong shape.
    """
    case = request.as_mapping()
    try:
        # Off this loop (docs/running.md): a timeout ends the case whatever the function does;
        # timed where it runs, so waiting for this loop (busy grading other cases) is not
        # the function's time.
        result, elapsed_ms = await timed_user_call(function, case)
    except TargetError:
        raise
    except Exception as exc:
        name = type(exc).__name__
        raise TargetError(f"{source} raised {name}: {exc}", kind=name) from exc
    output = parse_target_output(result, source=source)
    return with_duration(output, elapsed_ms)


class PythonTarget(Target):
    """Calls `module:function` (sync or async) with the case mapping of `TargetRequest.as_mapping`.

    The function returns a string or the structured output mapping (SPEC §3). Sync functions run
    on a daemon worker thread, async ones on assay's user-code event loop (`assay._user_code`),
    so neither blocks other cases nor outlives a timeout; an exception makes the case an `error`.
    """

    type: Literal["python"]
    """Target type discriminator."""
    function: str
    """The function to call, as `package.module:function` (`module:Class.method` also works)."""
    python_path: list[str] = Field(default_factory=list)
    """Directories put in front of `sys.path` before importing, relative to the suite file's
    directory (which is itself always importable)."""

    @field_validator("function")
    @classmethod
    def _check_reference(cls, value: str) -> str:
        if not _FUNCTION_REF.fullmatch(value):
            raise ValueError(
                f"'{value}' is not a function reference; write 'package.module:function', "
                "e.g. 'my_agent.bot:answer'"
            )
        return value

    def describe(self) -> str:
        """The function reference, e.g. `python my_agent.bot:answer`."""
        return f"python {self.function}"

    def check(self, base_dir: Path) -> None:
        """Import the function's module (once per process) and find the function, without
        calling it: importing runs the module's top-level code, as the run's set-up would.

        Raises:
            UsageError: The module cannot be imported, or the attribute is missing or not
                callable.
        """
        self._resolve(base_dir)

    async def setup(self, base_dir: Path) -> None:
        """Import the function once (`check`).

        Raises:
            UsageError: The module cannot be imported, or the attribute is missing or not
                callable.
        """
        self.check(base_dir)

    async def call(self, request: TargetRequest) -> TargetOutput:
        """Call the function with the case and parse what it returns.

        Raises:
            TargetError: The function raised (the message gives the exception type and
                message) or returned a value of the wrong shape.
        """
        return await call_function(
            self._resolve(request.base_dir), request, f"function '{self.function}'"
        )

    def _resolve(self, base_dir: Path) -> UserFunction:
        key = (self.function, tuple(self.python_path), base_dir.resolve())
        if key not in _imported:
            _imported[key] = self._import(base_dir)
        return _imported[key]

    def _import(self, base_dir: Path) -> UserFunction:
        where = f"python target '{self.function}'"
        search = [(base_dir / entry).resolve() for entry in self.python_path] + [base_dir.resolve()]
        for directory in reversed(search):
            if str(directory) not in sys.path:
                sys.path.insert(0, str(directory))
        # Finders cache directory listings; a module written since the last import must be seen.
        importlib.invalidate_caches()
        try:
            target = resolve_reference(self.function)
        except UnresolvedReference as exc:
            searched = ", ".join(str(d) for d in search)
            fix = (
                f". Searched {searched} and the installed packages; add the module's directory "
                "to `python_path`."
            )
            raise UsageError(f"{where}: {exc}{fix if exc.module_missing else ''}") from exc
        return target
