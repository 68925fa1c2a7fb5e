"""The `command` target: run a program once per case, without a shell."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import tempfile
import time
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from assay._paths import anchor_files, is_file
from assay._processes import exit_reason, feed, read, run_group
from assay._references import CommandLine, split_command
from assay.errors import TargetError, UsageError
from assay.results import TargetOutput
from assay.targets._base import Target, TargetRequest
from assay.targets._output import parse_text_output, with_duration

__all__ = ["CommandTarget"]

_PLACEHOLDER = re.compile(r"\{(PROMPT|PROMPT_FILE|OUTPUT_FILE|CASE_ID)\}")
_STDERR_TAIL_LINES = 20


class CommandTarget(Target):
    """Runs a command per case and reads its reply from stdout or `{OUTPUT_FILE}`.

    Each argument may contain the placeholders `{PROMPT}`, `{PROMPT_FILE}` (a temporary file
    holding the prompt), `{OUTPUT_FILE}` (a temporary path; when used, the reply is read from
    that file instead of stdout) and `{CASE_ID}`. The case mapping is always written to stdin as
    JSON. The reply is plain text or the structured JSON object of SPEC §3.
    """

    type: Literal["command"]
    """Target type discriminator."""
    command: CommandLine
    """The program and its arguments; a string is split like a shell would, but no shell runs."""
    timeout_s: Annotated[float, Field(gt=0)] | None = None
    """Kill the command (and every process it started) after this many seconds."""
    cwd: str | None = None
    """Working directory, relative to the suite file's directory; defaults to that directory.
    A case with a workspace (`workspace:`) runs in its workspace instead, as in AgentV."""
    env: dict[str, str] = Field(default_factory=dict)
    """Environment variables added to the inherited environment."""

    @property
    def argv(self) -> list[str]:
        """The command as an argument list, placeholders not yet substituted."""
        return split_command(self.command)

    def describe(self) -> str:
        """The command line as written, or the argument list joined with shell quoting."""
        line = self.command if isinstance(self.command, str) else shlex.join(self.command)
        return f"command {line}"

    def check(self, base_dir: Path) -> None:
        """Check that the working directory and the executable exist (nothing is run).

        Raises:
            UsageError: Either is missing.
        """
        cwd = self._cwd(base_dir)
        if not cwd.is_dir():
            raise UsageError(f"command target: working directory {cwd} does not exist")
        program = self.argv[0]
        if _is_path(program):
            # Like the OS, resolve a relative program path against the working directory.
            found = is_file(cwd / program)
        else:
            found = shutil.which(program, path=self._env().get("PATH")) is not None
        if not found:
            raise UsageError(
                f"command target: executable '{program}' not found{_where(program, cwd)}"
            )

    async def call(self, request: TargetRequest) -> TargetOutput:
        """Run the command for one case.

        Raises:
            TargetError: The command could not start, timed out, exited non-zero, did not
                write its `{OUTPUT_FILE}`, or printed an invalid structured reply.
        """
        with tempfile.TemporaryDirectory(prefix="assay-") as scratch:
            prompt_file = Path(scratch) / "prompt.txt"
            output_file = Path(scratch) / "output"
            values = {
                "PROMPT": request.prompt,
                "PROMPT_FILE": str(prompt_file),
                "OUTPUT_FILE": str(output_file),
                "CASE_ID": request.case_id,
            }
            used: set[str] = set()

            def substitute(match: re.Match[str]) -> str:
                used.add(match[1])
                return values[match[1]]

            argv = [_PLACEHOLDER.sub(substitute, arg) for arg in self.argv]
            if request.workspace is not None:
                # in its workspace, the command's own files are still the suite's
                argv = anchor_files(argv, self._cwd(request.base_dir))
            if "PROMPT_FILE" in used:
                prompt_file.write_text(request.prompt, encoding="utf-8")
            stdin = json.dumps(request.as_mapping(), ensure_ascii=False, default=str)
            started = time.perf_counter()
            cwd = request.workspace or self._cwd(request.base_dir)
            stdout = await self._run(argv, stdin.encode(), cwd)
            elapsed_ms = (time.perf_counter() - started) * 1000
            if "OUTPUT_FILE" in used:
                if not output_file.is_file():
                    raise TargetError(
                        f"command '{argv[0]}' exited successfully but did not write {{OUTPUT_FILE}}"
                    )
                text = output_file.read_text(encoding="utf-8", errors="replace")
            else:
                text = stdout.decode("utf-8", errors="replace")
        output = parse_text_output(text, source=f"command '{argv[0]}'")
        return with_duration(output, elapsed_ms)

    async def _run(self, argv: list[str], stdin: bytes, cwd: Path) -> bytes:
        if not cwd.is_dir():
            raise TargetError(f"command working directory {cwd} does not exist")
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=self._env(),
                # Its own process group, so a timeout also kills what the command started.
                start_new_session=True,
            )
        except FileNotFoundError:
            raise TargetError(
                f"command '{argv[0]}' not found{_where(argv[0], cwd)}", kind="FileNotFoundError"
            ) from None
        except PermissionError:
            raise TargetError(
                f"command '{argv[0]}' is not executable", kind="PermissionError"
            ) from None
        stdout, stderr = bytearray(), bytearray()
        io = [
            asyncio.ensure_future(feed(process.stdin, stdin)),
            asyncio.ensure_future(read(process.stdout, stdout)),
            asyncio.ensure_future(read(process.stderr, stderr)),
        ]
        try:
            # Also on cancellation by the runner: never leave the command or its children.
            await run_group(process, io, self.timeout_s)
        except TimeoutError:
            raise TargetError(
                f"command '{argv[0]}' timed out after {self.timeout_s:g}s", kind="TimeoutError"
            ) from None
        if process.returncode != 0:
            raise TargetError(_exit_message(argv[0], process.returncode, bytes(stderr)))
        return bytes(stdout)

    def _cwd(self, base_dir: Path) -> Path:
        return base_dir / self.cwd if self.cwd else base_dir

    def _env(self) -> dict[str, str]:
        return {**os.environ, **self.env}


def _is_path(program: str) -> bool:
    return Path(program).name != program


def _where(program: str, cwd: Path) -> str:
    """Where the OS looked for the program, as a suffix of a "not found" message."""
    if Path(program).is_absolute():
        return ""
    return f" in {cwd}" if _is_path(program) else " on PATH"


def _exit_message(program: str, returncode: int | None, stderr: bytes) -> str:
    why = exit_reason(returncode)
    lines = stderr.decode("utf-8", errors="replace").rstrip().splitlines()
    if not lines:
        return f"command '{program}' {why} (no stderr)"
    tail = lines[-_STDERR_TAIL_LINES:]
    shown = "\n".join(tail)
    more = f"last {len(tail)} of {len(lines)} stderr lines" if len(lines) > len(tail) else "stderr"
    return f"command '{program}' {why}; {more}:\n{shown}"
