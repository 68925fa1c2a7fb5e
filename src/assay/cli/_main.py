"""The `assay` command group and the one place that maps errors to exit codes.

Exit codes (SPEC §7): 0 passed, 1 failed or regression, 2 usage/config error (message, no
traceback), 3 internal error (traceback), 130 interrupted.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import io
import itertools
import os
import sys
import threading
import traceback
from collections.abc import Sequence
from typing import NoReturn

import click

from assay._version import __version__
from assay.errors import UserError

__all__ = [
    "EXIT_ERROR",
    "EXIT_FAILED",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "app",
    "console",
    "main",
]

EXIT_OK, EXIT_FAILED, EXIT_ERROR, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

_COMMANDS = {
    "init": "assay.cli.init",
    "run": "assay.cli.run",
    "validate": "assay.cli.validate",
    "schema": "assay.cli.schema",
    "runs": "assay.cli.runs",
    "compare": "assay.cli.compare",
    "baseline": "assay.cli.baseline",
    "report": "assay.cli.report",
    "serve": "assay.cli.serve",
    "import": "assay.cli.import_",
    "plugins": "assay.cli.plugins",
}


class _LazyGroup(click.Group):
    """Imports a command's module only when that command (or the help listing) needs it."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = _COMMANDS.get(cmd_name)
        if module is None:
            return None
        import importlib

        command = importlib.import_module(module).command
        assert isinstance(command, click.Command)
        return command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="assay")
def app() -> None:
    """Evaluate LLM applications and AI agents.

    Write a suite in YAML, run it against the system under test, get verdicts you can trust.
    """


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point: run a command and exit with its code."""
    try:
        code = app.main(args=argv, prog_name="assay", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except UserError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except Exception:
        traceback.print_exc()
        click.echo(
            "internal error: this is a bug in assay; please report it with the traceback above",
            err=True,
        )
        sys.exit(EXIT_INTERNAL)
    sys.exit(code if isinstance(code, int) else EXIT_OK)


def console() -> NoReturn:
    """The `assay` executable: `main`, then end the process without the interpreter's teardown.

    Once a command is done, Python would free every module and object one by one: ~0.2 s after
    a 5,000-case run (2,700 pydantic classes and their validators), a twentieth of the whole run.
    None of it is needed, so the process ends as soon as what a normal exit guarantees is done:
    the atexit handlers have run (logging, multiprocessing, coverage) and the standard streams
    are flushed, and so is every other open file once a suite's own code was imported (a Python
    target's module may hold one, which the teardown would have flushed; finding them takes
    ~20 ms after a large run). Exits the normal way while a non-daemon thread still
    runs (Python waits for it) or when flushing stdout or stderr fails (Python reports it).
    Objects' `__del__` methods do not run.
    """
    code: str | int | None = EXIT_OK
    try:
        main()
    except SystemExit as end:
        code = end.code
    if not isinstance(code, int | None) or not _only_daemon_threads() or not _flushed():
        sys.exit(code)
    atexit._run_exitfuncs()
    references = sys.modules.get("assay._references")  # not imported: no user code was either
    if references is not None and references.user_code_imported():
        _flush_open_files()
    if not _flushed():
        sys.exit(code)
    os._exit(code or EXIT_OK)


def _only_daemon_threads() -> bool:
    main_thread = threading.main_thread()
    return all(t is main_thread or t.daemon for t in threading.enumerate())


def _flushed() -> bool:
    """Flush stdout and stderr; False when that fails (a closed pipe, a full disk)."""
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return False
    return True


_BUFFERED_FILES = (io.TextIOWrapper, io.BufferedWriter, io.BufferedRandom)


def _flush_open_files() -> None:
    """Flush every open buffered file, as freeing it in the interpreter's teardown would."""
    objects = gc.get_objects()
    # By type, not isinstance: isinstance reads `__class__`, which a lazy proxy (the openai
    # SDK has some) answers by importing what it stands for. Mapped in C: a Python loop over
    # the ~200,000 objects of a large run took twice as long.
    is_file = map(issubclass, map(type, objects), itertools.repeat(_BUFFERED_FILES))
    for file in itertools.compress(objects, is_file):
        with contextlib.suppress(Exception):  # closed, detached or failing: as at teardown
            file.flush()
