"""The `assay` command group and the one place that maps errors to exit codes.

Exit codes (SPEC §7): 0 passed, 1 failed or regression, 2 usage/config error (message, no
traceback), 3 internal error (traceback), 130 interrupted.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

import click

from assay._version import __version__
from assay.cli._process import end_process, take_over
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
    "review": "assay.cli.review",
    "calibrate": "assay.cli.calibrate",
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
    """The `assay` executable: `main` with the process-wide tricks of `assay.cli._process`
    (the process ends without the interpreter's teardown, among others), which only the
    executable may play: library calls leave their host process as they found it."""
    take_over()
    code: str | int | None = EXIT_OK
    try:
        main()
    except SystemExit as end:
        code = end.code
    end_process(code)
