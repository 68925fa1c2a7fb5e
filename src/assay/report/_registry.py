"""Report formats: the built-in ones and those installed packages add (entry point group
`assay.reporters`), for `assay run --report FORMAT:PATH` and `assay report --format FORMAT`.

A plugin format is a function with the signature of the built-in writers:

```python
def write(out: TextIO, runs: Sequence[tuple[RunResult, CaseSource]]) -> None: ...
```

`out` is the open text stream of the report (a file written whole or not at all, or stdout);
each run comes with a `CaseSource`, called to stream its case results as often as needed.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import TextIO

from assay._plugins import PluginEntry, PluginSpec, described, load_plugins, plugin_entries
from assay.errors import PluginError
from assay.report.junit import CaseSource
from assay.results import RunResult

__all__ = [
    "BUILTIN_FORMATS",
    "REPORTER_PLUGINS",
    "Reporter",
    "plugin_reporters",
    "report_formats",
    "write_plugin_report",
]

Reporter = Callable[[TextIO, Sequence[tuple[RunResult, CaseSource]]], None]
"""A report format's writer: `write(out, runs)`."""

BUILTIN_FORMATS = ("md", "junit", "json", "html")
"""The report formats assay has itself."""


def _reporter(entry: PluginEntry, obj: object) -> str | None:
    del entry
    if isinstance(obj, type) or not callable(obj):
        return f"it gives {described(obj)}, not a function write(out, runs)"
    try:
        inspect.signature(obj).bind(None, ())
    except TypeError:
        name = getattr(obj, "__qualname__", repr(obj))
        return f"its function {name} cannot be called as write(out, runs)"
    except ValueError:  # no signature to read (a builtin): called as it is
        pass
    return None


REPORTER_PLUGINS = PluginSpec("reporter", BUILTIN_FORMATS, _reporter)
"""How reporter plugins are taken: names no built-in format has, functions `write(out, runs)`."""


@functools.cache
def plugin_reporters() -> dict[str, Reporter]:
    """The report formats installed packages add, by name; loaded once per process.

    Raises:
        PluginError: a plugin cannot be loaded, is not such a function, or reuses a name.
    """
    return load_plugins(REPORTER_PLUGINS)  # type: ignore[return-value]  # checked by _reporter


def report_formats() -> tuple[str, ...]:
    """Every report format: the built-ins, then the plugins' by name.

    Raises:
        PluginError: see `plugin_reporters`.
    """
    return (*BUILTIN_FORMATS, *plugin_reporters())


def write_plugin_report(
    fmt: str, out: TextIO, runs: Sequence[tuple[RunResult, CaseSource]]
) -> None:
    """Write the report of plugin format `fmt`.

    Raises:
        PluginError: the format's writer raised; the message names its package and entry
            point (a plugin's bug is not assay's internal error).
    """
    write = plugin_reporters()[fmt]
    try:
        write(out, runs)
    except Exception as exc:  # a plugin may raise anything: report it, located
        entry = next(e for e in plugin_entries("reporter") if e.name == fmt)
        raise PluginError(
            f"{entry.where}: writing the {fmt} report failed ({type(exc).__name__}: {exc})"
        ) from exc
