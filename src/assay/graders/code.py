"""The code-grader (SPEC §4): the user's own check, as an in-process function or a subprocess.

Both forms receive the same grading context (`context_mapping`) and may answer a number, a
boolean, or a mapping `{score, hits, misses, reasoning, details, assertions}` (`assertions`:
AgentV's `[{text, passed, evidence}]`). With `protocol: agentv` a command may also answer by
its exit code alone, as AgentV's code graders do. Whatever goes wrong — the code raises,
crashes, hangs, runs out of memory, or replies with something that is not a valid result —
becomes a grader `error` with the reason, never a 0.
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Literal, Self

from pydantic import Field, field_validator, model_validator

from assay._paths import anchor_files, is_file
from assay._processes import OutputTooLarge, exit_reason, feed, read, run_group
from assay._references import UnresolvedReference, resolve_reference, split_command
from assay._strict_model import suggest
from assay._user_code import call_user_function
from assay.errors import GraderError
from assay.graders._base import Grader, GradingContext, Measurement
from assay.graders._details import detail, truncate
from assay.graders._judge_proxy import JudgeProxy
from assay.graders.structured import _reject_constant
from assay.judge import JudgeClient, JudgeError, NoJudgeError
from assay.results import JSON, Detail

__all__ = [
    "STDERR_EXCERPT",
    "CodeGrader",
    "call_grader_function",
    "context_mapping",
    "measurement_from_reply",
]

STDERR_EXCERPT = 500
"""Characters of the end of stderr quoted in an error."""
_MAX_REPLY_BYTES = 8 * 1024 * 1024
"""A command printing more than this is stopped: a reply is a small JSON object."""
_FUNCTION_REF = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
_REPLY_KEYS = frozenset({"score", "hits", "misses", "reasoning", "details", "assertions"})
_DETAIL_KEYS = frozenset({"check", "passed", "expected", "actual", "message"})
_ASSERTION_KEYS = frozenset({"text", "passed", "evidence"})
_OUT_OF_MEMORY = ("MemoryError", "Cannot allocate memory", "bad_alloc", "out of memory")

UserFunction = Callable[[dict[str, JSON]], object]

_functions: dict[str, UserFunction] = {}
"""Imported functions by reference, resolved when the suite loads."""


def _import_function(reference: str) -> UserFunction:
    """Import `module:qualname`; the error says what is missing and how to make it importable."""
    if reference in _functions:
        return _functions[reference]
    try:
        found = resolve_reference(reference)
    except UnresolvedReference as exc:
        fix = "; install its package or add its directory to PYTHONPATH"
        raise ValueError(f"{exc}{fix}" if exc.module_missing else str(exc)) from None
    _functions[reference] = found
    return found


def context_mapping(ctx: GradingContext) -> dict[str, JSON]:
    """The grading context as JSON: what a command reads on stdin and a function receives."""
    target = ctx.target_output
    return {
        "case_id": ctx.case_id,
        "output": ctx.output,
        "input": ctx.input,
        "expected_output": ctx.expected_output,
        "context": list(ctx.context),
        "metadata": dict(ctx.metadata),
        "tool_calls": [call.model_dump(mode="json") for call in ctx.tool_calls],
        "retrieved_context": [p.model_dump(mode="json") for p in ctx.retrieved],
        "expected_context_ids": list(ctx.expected_context_ids),
        "target_output": None if target is None else target.model_dump(mode="json"),
        "threshold": ctx.threshold,
        # AgentV's names for what graders commonly read, and the case's workspace
        "criteria": ctx.criteria,
        "messages": [] if target is None else [m.model_dump(mode="json") for m in target.messages],
        "token_usage": None
        if target is None or target.token_usage is None
        else target.token_usage.model_dump(mode="json"),
        "cost_usd": None if target is None else target.cost_usd,
        "duration_ms": None if target is None else target.duration_ms,
        "workspace_path": None if ctx.workspace is None else str(ctx.workspace),
    }


async def call_grader_function(
    function: UserFunction, payload: dict[str, JSON], timeout_s: float, source: str
) -> object:
    """Call a user's check (sync or async) with the grading context and return its reply: the
    one calling convention of in-process `code-grader`s and of functions given to the API.

    Raises:
        GraderError: The function raised, or did not return within `timeout_s`.
    """
    try:
        # Off this loop: on timeout the call is abandoned and runs on, unobserved.
        result = await asyncio.wait_for(call_user_function(function, payload), timeout_s)
    except TimeoutError:
        raise GraderError(f"{source} did not return within {timeout_s:g}s") from None
    except Exception as exc:
        raise GraderError(f"{source} raised {type(exc).__name__}: {exc}") from exc
    return result


def _shown(value: JSON) -> str:
    """A reply value as JSON text, cut to 60 characters: `"ok"` reads as a string, `1` not."""
    return truncate(json.dumps(value, ensure_ascii=False, default=repr), 60)


def _unknown_key(mapping: dict[str, JSON], known: frozenset[str], where: str) -> None:
    for key in mapping:
        if key not in known:
            hint = suggest(str(key), set(known))
            raise GraderError(f"{where} has an unknown key '{key}'.{hint} Known: {sorted(known)}")


def _strings(reply: dict[str, JSON], key: str) -> list[str]:
    value = reply.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise GraderError(f"`{key}` must be a list of strings, got {_shown(value)}")
    return value


def _details(value: JSON) -> list[Detail]:
    if not isinstance(value, list):
        raise GraderError(f"`details` must be a list of objects, got {_shown(value)}")
    details: list[Detail] = []
    for i, entry in enumerate(value):
        where = f"details[{i}]"
        if not isinstance(entry, dict):
            raise GraderError(f"{where} must be an object, got {_shown(entry)}")
        _unknown_key(entry, _DETAIL_KEYS, where)
        check, passed, message = entry.get("check"), entry.get("passed"), entry.get("message", "")
        if not isinstance(check, str) or not check:
            raise GraderError(f"{where}.check must be a non-empty string")
        if not isinstance(passed, bool):
            raise GraderError(f"{where}.passed must be true or false")
        if not isinstance(message, str):
            raise GraderError(f"{where}.message must be a string")
        details.append(
            detail(
                check,
                passed,
                expected=entry.get("expected"),
                actual=entry.get("actual"),
                message=message,
            )
        )
    return details


def _assertions(value: JSON) -> list[tuple[str, bool, str]]:
    """AgentV's `assertions: [{text, passed, evidence}]` as (text, passed, evidence)."""
    if not isinstance(value, list):
        raise GraderError(f"`assertions` must be a list of objects, got {_shown(value)}")
    out: list[tuple[str, bool, str]] = []
    for i, entry in enumerate(value):
        where = f"assertions[{i}]"
        if not isinstance(entry, dict):
            raise GraderError(f"{where} must be an object, got {_shown(entry)}")
        _unknown_key(entry, _ASSERTION_KEYS, where)
        text, passed, evidence = entry.get("text"), entry.get("passed"), entry.get("evidence", "")
        if not isinstance(text, str) or not text:
            raise GraderError(f"{where}.text must be a non-empty string")
        if not isinstance(passed, bool):
            raise GraderError(f"{where}.passed must be true or false")
        if not isinstance(evidence, str | None):
            raise GraderError(f"{where}.evidence must be a string")
        out.append((text, passed, evidence or ""))
    return out


def _score(value: JSON) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if not isinstance(value, int | float):
        raise GraderError(f"`score` must be a number in 0–1 or a boolean, got {_shown(value)}")
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise GraderError(f"score {value} is outside 0–1")
    return float(value)


def measurement_from_reply(reply: object, source: str, *, lenient: bool = False) -> Measurement:
    """Turn what the user's code answered into a Measurement.

    An `assertions` list (AgentV's reply) adds each passed assertion's text to the hits and
    each failed one's to the misses, with its evidence as a Detail; without a `score` the
    score is the share of assertions that passed. `lenient` (AgentV's protocol) ignores
    reply keys assay does not know and reads an object `details` (AgentV's free-form one)
    into the reasoning, where the strict contract refuses both.

    Raises:
        GraderError: The reply is not a number, a boolean or a valid result mapping; the
            message names `source` and the offending field.
    """
    try:
        if isinstance(reply, bool | int | float):
            score = _score(reply)
            return Measurement(score=score, reasoning=f"{source} returned {json.dumps(reply)}")
        if not isinstance(reply, dict):
            raise GraderError(
                "expected a number, a boolean or an object with `score`, got "
                f"{type(reply).__name__}"
            )
        if not lenient:
            _unknown_key(reply, _REPLY_KEYS, "the reply")
        checks = _assertions(reply["assertions"]) if "assertions" in reply else []
        if "score" in reply:
            score = _score(reply["score"])
        elif checks:
            score = round(sum(passed for _, passed, _ in checks) / len(checks), 6)
        else:
            raise GraderError("the reply has no `score` (nor `assertions` to count)")
        reasoning = reply.get("reasoning", "")
        if not isinstance(reasoning, str):
            raise GraderError("`reasoning` must be a string")
        raw_details = reply.get("details", [])
        if lenient and isinstance(raw_details, dict):
            shown = json.dumps(raw_details, ensure_ascii=False, default=str)
            reasoning = f"{reasoning}\ndetails: {shown}".strip()
            raw_details = []
        details = _details(raw_details)
        hits, misses = _strings(reply, "hits"), _strings(reply, "misses")
        for text, passed, evidence in checks:
            (hits if passed else misses).append(text)
            details.append(detail(truncate(text), passed, message=evidence))
        return Measurement(
            score=score, hits=hits, misses=misses, reasoning=reasoning, details=details
        )
    except GraderError as exc:
        raise GraderError(f"invalid reply from {source}: {exc}") from None


def _stderr_excerpt(stderr: bytes) -> str:
    text = stderr.decode("utf-8", errors="replace").strip()
    if not text:
        return ""
    shown = text if len(text) <= STDERR_EXCERPT else "…" + text[-STDERR_EXCERPT:]
    return f"; stderr: {shown}"


class CodeGrader(Grader):
    """Grades with the user's code: a Python function in process, or a command in a subprocess."""

    type: Literal["code-grader"]
    function: str | None = None
    """In-process Python callable `package.module:function` (sync or async), imported when the
    suite loads from the Python path; for trusted code only."""
    command: list[str] | str | None = None
    """Program and arguments run without a shell; it reads the context as JSON on stdin and
    prints the result as JSON on stdout. A string is split like a shell would."""
    timeout_s: Annotated[float, Field(gt=0)] = 30.0
    """Stop waiting after this many seconds (a command's whole process group is killed)."""
    memory_mb: Annotated[int, Field(gt=0)] | None = 512
    """Memory limit (RLIMIT_DATA, Linux only) of each process of the command, in MB: the
    private writable memory a process may commit (heap, anonymous maps), not the address
    space it reserves, so runtimes that reserve large virtual ranges (node, bun) start under
    it. Every process the command starts gets a limit of its own, so four processes may use
    four times this together; null for none."""
    env: dict[str, str] = Field(default_factory=dict)
    """Variables added to the command's inherited environment."""
    config: dict[str, JSON] | None = None
    """Free-form settings handed to the grader as `config` in its context (AgentV's
    `config`), so one script can serve several checks."""
    cwd: str | None = None
    """The command's working directory, relative to the suite's directory. Default: the
    case's workspace when it has one (`workspace:`), else the suite's directory."""
    protocol: Literal["assay", "agentv"] = "assay"
    """`assay`: the reply is JSON and anything else is an error. `agentv`: AgentV's code-grader
    contract: a reply that is not a JSON object is read from the exit code (0 passes, else
    fails, stdout the assertion's text), unknown reply keys are ignored, and the command also
    gets `AGENTV_WORKSPACE_PATH`."""
    judge_proxy: JudgeProxy | None = None
    """Give the command the run's judge through a local HTTP proxy (AgentV's code-grader
    `target`): its URL and token are in `ASSAY_JUDGE_PROXY_URL` / `ASSAY_JUDGE_PROXY_TOKEN`
    (and AgentV's names); see docs/graders/code.md#the-judge-proxy."""

    @field_validator("function")
    @classmethod
    def _check_function(cls, value: str | None) -> str | None:
        if value is None:
            return value
        if not _FUNCTION_REF.fullmatch(value):
            raise ValueError(
                f"'{value}' is not a function reference; write 'package.module:function', "
                "e.g. 'my_evals.graders:refund_ok'"
            )
        _import_function(value)
        return value

    @field_validator("command")
    @classmethod
    def _check_command(cls, value: list[str] | str | None) -> list[str] | str | None:
        if value is not None:
            split_command(value)
        return value
        try:
            argv = shlex.split(value) if isinstance(value, str) else value
        except ValueError as exc:
            raise ValueError(f"cannot split the command string: {exc}") from None
        if not argv or not argv[0]:
            raise ValueError("the command is empty; give the program to run, e.g. [python, g.py]")
        return value

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        if (self.function is None) == (self.command is None):
            raise ValueError("give exactly one of `function` (in process) or `command`")
        if self.function is not None:
            only_command = sorted(
                {"memory_mb", "env", "cwd", "protocol", "judge_proxy"} & self.model_fields_set
            )
            if only_command:
                raise ValueError(
                    f"`{only_command[0]}` applies to a `command`; an in-process `function` "
                    "shares assay's process and environment"
                )
            return self
        program = self.argv[0]
        env_path = self.env.get("PATH", os.environ.get("PATH"))
        if Path(program).name != program:
            # a relative path resolves against the suite's directory, known only when grading
            if Path(program).is_absolute() and not is_file(Path(program)):
                raise ValueError(f"program '{program}' not found")
        elif shutil.which(program, path=env_path) is None:
            raise ValueError(f"program '{program}' not found on PATH")
        return self

    @property
    def awaits_io(self) -> bool:
        """Both forms wait: on a subprocess, or on a function run in a worker thread."""
        return True

    @property
    def wants_default_judge(self) -> bool:
        """A command given the judge proxy needs the run's judge."""
        return self.judge_proxy is not None

    @property
    def argv(self) -> list[str]:
        """The command as an argument list."""
        assert self.command is not None
        return split_command(self.command)

    async def measure(self, ctx: GradingContext) -> Measurement:
        payload = context_mapping(ctx)
        payload["config"] = self.config
        if self.function is not None:
            source = f"function '{self.function}'"
            return measurement_from_reply(await self._call(self.function, payload), source)
        source = f"command '{truncate(shlex.join(self.argv), 60)}'"
        cwd, argv = self._place(ctx)
        env = {**os.environ, **self.env}
        if self.protocol == "agentv" and ctx.workspace is not None:
            env["AGENTV_WORKSPACE_PATH"] = str(ctx.workspace)
        if self.judge_proxy is None:
            return self._reply(*await self._run(argv, payload, source, cwd, env), source)
        from assay.graders._judge_proxy_server import JudgeProxyServer  # aiohttp's server

        client = self._judge_client(ctx)
        async with JudgeProxyServer(client, self.judge_proxy.max_calls) as proxy:
            ran = await self._run(argv, payload, source, cwd, {**env, **proxy.env})
        spend = proxy.spend
        try:
            measured = self._reply(*ran, source)
        except GraderError as exc:
            failed = f"; the judge proxy's last error: {spend.errors[-1]}" if spend.errors else ""
            raise JudgeError(
                f"{exc}{failed}",
                model=client.model,
                token_usage=spend.usage,
                cost_usd=spend.cost_usd,
            ) from None
        measured.judge_model = client.model
        measured.token_usage = spend.usage
        measured.cost_usd = spend.cost_usd
        return measured

    def _reply(
        self, returncode: int | None, stdout: bytes, stderr: bytes, source: str
    ) -> Measurement:
        if self.protocol == "agentv":
            return self._agentv_reply(returncode, stdout, stderr, source)
        if returncode != 0:
            raise GraderError(self._exit_message(source, returncode, stderr))
        return self._parse(stdout, stderr, source)

    @staticmethod
    def _judge_client(ctx: GradingContext) -> JudgeClient:
        """The run's judge, which the proxy serves.

        Raises:
            GraderError: The run has no judge.
        """
        try:
            if ctx.judges is None:
                raise NoJudgeError("the run has no judge")
            return ctx.judges.client()
        except NoJudgeError:
            raise GraderError(
                "`judge_proxy` needs an LLM judge and the run has none: set `judge: "
                "{model: ...}` in the suite or assay.yaml, pass --judge-model, or export "
                "ASSAY_JUDGE_MODEL"
            ) from None

    async def run_payload(
        self, payload: dict[str, JSON], ctx: GradingContext, source: str
    ) -> bytes:
        """Run the command on `payload` where `measure` would, and return its stdout: the
        runner of a composite's program aggregator.

        Raises:
            GraderError: The command could not start, timed out or exited non-zero.
        """
        cwd, argv = self._place(ctx)
        returncode, stdout, stderr = await self._run(
            argv, payload, source, cwd, {**os.environ, **self.env}
        )
        if returncode != 0:
            raise GraderError(self._exit_message(source, returncode, stderr))
        return stdout

    def _place(self, ctx: GradingContext) -> tuple[Path | None, list[str]]:
        """Where the command runs, and its arguments there.

        In a workspace (the default there), an argument naming a file that exists relative
        to the suite's directory is passed as its absolute path: `python graders/check.py`
        still finds the script written next to the suite.
        """
        argv = self.argv
        suite_dir = ctx.base_dir
        if self.cwd is not None:
            return (suite_dir or Path()) / self.cwd, argv
        if ctx.workspace is None or suite_dir is None:
            return suite_dir, argv
        return ctx.workspace, anchor_files(argv, suite_dir)

    def _agentv_reply(
        self, returncode: int | None, stdout: bytes, stderr: bytes, source: str
    ) -> Measurement:
        """AgentV's reading: a JSON object is the reply (an error if the exit code is not 0);
        anything else is a pass or a fail by the exit code, with stdout as the assertion's
        text. A non-zero exit with stderr is an error, as in AgentV."""
        text = stdout.decode("utf-8", errors="replace").strip()
        try:
            reply = json.loads(text, parse_constant=_reject_constant) if text else None
        except ValueError:
            reply = None
        if isinstance(reply, dict):
            if returncode != 0:
                raise GraderError(self._exit_message(source, returncode, stderr))
            return measurement_from_reply(reply, source, lenient=True)
        if returncode != 0 and (stderr.strip() or returncode is None or returncode < 0):
            raise GraderError(self._exit_message(source, returncode, stderr))
        passed = returncode == 0
        said = text or f"exit {returncode}"
        return Measurement(
            score=1.0 if passed else 0.0,
            hits=[said] if passed else [],
            misses=[] if passed else [said],
            reasoning=f"{source} {exit_reason(returncode)}",
        )

    async def _call(self, reference: str, payload: dict[str, JSON]) -> object:
        return await call_grader_function(
            _import_function(reference), payload, self.timeout_s, f"function '{reference}'"
        )

    def _limit(self) -> Callable[[], None] | None:
        """The child's RLIMIT_DATA setter, run between fork and exec (Linux only).

        RLIMIT_DATA, not RLIMIT_AS: V8 (node) reserves its code range and pointer cage as
        address space it never commits, so under a 512 MB RLIMIT_AS node dies at start
        ("Failed to reserve virtual memory for CodeRange") while using ~40 MB. RLIMIT_DATA
        (Linux ≥ 4.7) counts private writable memory only: what a process really allocates.

        A partial of a C function, so the child runs no Python bytecode that could wait on a
        lock another thread of assay held at fork time.
        """
        if self.memory_mb is None or not sys.platform.startswith("linux"):
            return None
        import resource

        limit = self.memory_mb * 1024 * 1024
        hard = resource.getrlimit(resource.RLIMIT_DATA)[1]
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        return functools.partial(resource.setrlimit, resource.RLIMIT_DATA, (limit, limit))

    async def _run(
        self,
        argv: list[str],
        payload: dict[str, JSON],
        source: str,
        cwd: Path | None,
        env: dict[str, str],
    ) -> tuple[int | None, bytes, bytes]:
        data = json.dumps(payload, ensure_ascii=False, default=str).encode()
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                cwd=cwd,
                start_new_session=True,
                preexec_fn=self._limit(),
            )
        except OSError as exc:
            raise GraderError(f"{source} could not start: {exc.strerror or exc}") from None
        stdout, stderr = bytearray(), bytearray()
        io = [
            asyncio.ensure_future(feed(process.stdin, data)),
            asyncio.ensure_future(read(process.stdout, stdout, cap=_MAX_REPLY_BYTES)),
            asyncio.ensure_future(read(process.stderr, stderr, tail=4096)),
        ]
        try:
            await run_group(process, io, self.timeout_s)
        except TimeoutError:
            raise GraderError(
                f"{source} timed out after {self.timeout_s:g}s and was killed"
                + _stderr_excerpt(bytes(stderr))
            ) from None
        except OutputTooLarge as exc:
            raise GraderError(
                f"{source} {exc}; a reply is one object{_stderr_excerpt(bytes(stderr))}"
            ) from None
        return process.returncode, bytes(stdout), bytes(stderr)

    def _exit_message(self, source: str, returncode: int | None, stderr: bytes) -> str:
        why = exit_reason(returncode)
        text = stderr.decode("utf-8", errors="replace")
        if self.memory_mb is not None and any(m in text for m in _OUT_OF_MEMORY):
            why += f" after running out of memory (memory_mb: {self.memory_mb})"
        return f"{source} {why}{_stderr_excerpt(stderr) or ' (no stderr)'}"

    @staticmethod
    def _parse(stdout: bytes, stderr: bytes, source: str) -> Measurement:
        text = stdout.decode("utf-8", errors="replace").strip()
        if not text:
            raise GraderError(
                f'{source} printed nothing; print a JSON result such as {{"score": 1}}'
                + _stderr_excerpt(stderr)
            )
        try:
            reply = json.loads(text, parse_constant=_reject_constant)
        except json.JSONDecodeError as exc:
            where = f"line {exc.lineno} column {exc.colno}: {exc.msg}"
            raise GraderError(
                f"{source} printed invalid JSON ({where}): {truncate(text)}"
                + _stderr_excerpt(stderr)
            ) from None
        except ValueError as exc:
            raise GraderError(f"{source} printed invalid JSON ({exc})") from None
        try:
            return measurement_from_reply(reply, source)
        except GraderError as exc:
            raise GraderError(f"{exc}{_stderr_excerpt(stderr)}") from None
