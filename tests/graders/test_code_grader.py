"""The code-grader (SPEC §4): real subprocesses and in-process functions; every failure an error."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from tests.conftest import write
from tests.graders._grading import SPEC

from assay import EvalConfig, evaluate
from assay.config import suite_json_schema_text
from assay.graders import CodeGrader, GradingContext
from assay.results import Detail, GraderResult, TargetOutput, ToolCall

PY = sys.executable

OK_SCRIPT = """\
import json, sys
ctx = json.load(sys.stdin)
ok = "30 days" in ctx["output"]
print(json.dumps({
    "score": 1.0 if ok else 0.25,
    "hits": ["mentions the window"] if ok else [],
    "misses": [] if ok else ["no refund window"],
    "reasoning": "looked for 30 days",
    "details": [{"check": "window", "passed": ok, "expected": "30 days", "actual": ctx["output"]}],
}))
"""


def ctx(output: str = "Refunds within 30 days.", **fields: Any) -> GradingContext:
    return GradingContext(case_id="c1", output=output, threshold=0.8, **fields)


def run(spec: dict[str, Any], context: GradingContext | None = None) -> GraderResult:
    grader = SPEC.validate_python({"type": "code-grader", **spec})
    result: GraderResult = asyncio.run(grader.grade(context or ctx()))
    return result


def script(tmp_path: Path, name: str, body: str) -> list[str]:
    return [PY, str(write(tmp_path / name, body))]


def source(argv: list[str]) -> str:
    joined = shlex.join(argv)
    return f"command '{joined if len(joined) <= 60 else joined[:59] + '…'}'"


def error(result: GraderResult) -> str:
    assert result.score is None
    assert result.verdict == "error"
    assert result.error is not None
    assert result.error.type == "GraderError"
    return result.error.message


def error_of(spec: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python({"type": "code-grader", **spec})
    errors = info.value.errors()
    assert len(errors) == 1, errors
    return str(errors[0]["msg"])


# --- commands: replies --------------------------------------------------------------------------


def test_a_command_reply_becomes_the_result(tmp_path: Path) -> None:
    argv = script(tmp_path, "grade.py", OK_SCRIPT)
    result = run({"command": argv})
    assert (result.score, result.verdict, result.error) == (1.0, "pass", None)
    assert (result.hits, result.misses) == (["mentions the window"], [])
    assert result.reasoning == "looked for 30 days"
    assert result.details == [
        Detail(check="window", passed=True, expected="30 days", actual="Refunds within 30 days.")
    ]
    failing = run({"command": argv}, ctx("No window given."))
    assert (failing.score, failing.verdict, failing.misses) == (0.25, "fail", ["no refund window"])


def test_the_context_arrives_on_stdin_as_json(tmp_path: Path) -> None:
    echo = script(
        tmp_path,
        "echo.py",
        "import json, sys\n"
        "print(json.dumps({'score': 1, 'reasoning': json.dumps(json.load(sys.stdin))}))\n",
    )
    target = TargetOutput(
        output="done", tool_calls=[ToolCall(tool="lookup", args={"id": 7})], cost_usd=0.01
    )
    context = GradingContext(
        case_id="refund-1",
        output="done",
        threshold=0.7,
        input={"question": "refund?"},
        expected_output="30 days",
        context=("policy text",),
        metadata={"tier": "gold"},
        target_output=target,
    )
    result = run({"command": echo}, context)
    assert json.loads(result.reasoning) == {
        "case_id": "refund-1",
        "output": "done",
        "input": {"question": "refund?"},
        "expected_output": "30 days",
        "context": ["policy text"],
        "metadata": {"tier": "gold"},
        "tool_calls": [{"tool": "lookup", "args": {"id": 7}, "output": None, "duration_ms": None}],
        "retrieved_context": [],
        "expected_context_ids": [],
        "target_output": {
            "output": "done",
            "messages": [],
            "tool_calls": [
                {"tool": "lookup", "args": {"id": 7}, "output": None, "duration_ms": None}
            ],
            "context": [],
            "token_usage": None,
            "cost_usd": 0.01,
            "duration_ms": 0.0,
            "finish_reason": None,
        },
        "threshold": 0.7,
        "criteria": None,
        "messages": [],
        "token_usage": None,
        "cost_usd": 0.01,
        "duration_ms": 0.0,
        "workspace_path": None,
        "config": None,
    }


def test_unicode_and_a_huge_output_pass_through_stdin(tmp_path: Path) -> None:
    measure = script(
        tmp_path,
        "size.py",
        "import json, sys\nout = json.load(sys.stdin)['output']\n"
        "print(json.dumps({'score': 1, 'reasoning': f'{len(out)} {out[:6]}'}))\n",
    )
    output = "返金は30日 🙂 " + "x" * 1_000_000
    assert run({"command": measure}, ctx(output)).reasoning == f"{len(output)} 返金は30日"


@pytest.mark.parametrize(
    ("printed", "score", "reasoning"),
    [("0.75", 0.75, "returned 0.75"), ("true", 1.0, "returned true"), ("0", 0.0, "returned 0")],
)
def test_a_bare_number_or_boolean_is_a_score(
    tmp_path: Path, printed: str, score: float, reasoning: str
) -> None:
    argv = [PY, "-c", f"print({printed!r})"]
    result = run({"command": argv})
    assert (result.score, result.reasoning) == (score, f"{source(argv)} {reasoning}")


def test_env_is_added_to_the_environment(tmp_path: Path) -> None:
    argv = [
        PY,
        "-c",
        "import os; print(int(os.environ['RUBRIC'] == 'strict' and 'PATH' in os.environ))",
    ]
    assert run({"command": argv, "env": {"RUBRIC": "strict"}}).score == 1.0


def test_a_command_string_is_split_like_a_shell(tmp_path: Path) -> None:
    path = write(tmp_path / "with space" / "g.py", "print(1)")
    assert run({"command": f"{shlex.quote(PY)} {shlex.quote(str(path))}"}).score == 1.0


def test_a_command_that_ignores_stdin_is_fine(tmp_path: Path) -> None:
    argv = [PY, "-c", "print('{\"score\": 0.5}')"]
    assert run({"command": argv}, ctx("x" * 2_000_000)).score == 0.5


def test_many_failed_details_are_capped_centrally(tmp_path: Path) -> None:
    details = [{"check": f"c{i}", "passed": False} for i in range(12)]
    body = f"import json\nprint(json.dumps({{'score': 0, 'details': {details!r}}}))\n"
    result = run({"command": script(tmp_path, "many.py", body)})
    assert [d.check for d in result.details][-2:] == ["c9", "+ 2 more"]


# --- commands: failures are errors, never 0 -----------------------------------------------------


def test_a_crash_is_an_error_with_stderr(tmp_path: Path) -> None:
    argv = script(
        tmp_path, "crash.py", "import sys\nprint('no rubric loaded', file=sys.stderr)\nsys.exit(1)"
    )
    assert error(run({"command": argv})) == (
        f"{source(argv)} exited with code 1; stderr: no rubric loaded"
    )


def test_only_the_end_of_a_long_stderr_is_quoted(tmp_path: Path) -> None:
    body = "import sys\nsys.stderr.write('a' * 3000 + 'THE END')\nsys.exit(3)"
    argv = script(tmp_path, "noisy.py", body)
    message = error(run({"command": argv}))
    assert message == f"{source(argv)} exited with code 3; stderr: …" + ("a" * 493) + "THE END"


def test_a_crash_without_stderr_says_so(tmp_path: Path) -> None:
    argv = [PY, "-c", "raise SystemExit(2)"]
    assert error(run({"command": argv})) == f"{source(argv)} exited with code 2 (no stderr)"


def test_a_killed_command_names_the_signal(tmp_path: Path) -> None:
    argv = [PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"]
    assert error(run({"command": argv})) == f"{source(argv)} was killed by SIGTERM (no stderr)"


def test_too_much_memory_is_an_error(tmp_path: Path) -> None:
    argv = script(tmp_path, "hog.py", "block = bytearray(512 * 1024 * 1024)\nprint(1)\n")
    message = error(run({"command": argv, "memory_mb": 256}))
    assert message.startswith(
        f"{source(argv)} exited with code 1 after running out of memory (memory_mb: 256); "
        "stderr: Traceback"
    )
    assert message.endswith("MemoryError")
    # the same script is fine with a larger limit, so the limit is what stopped it
    assert run({"command": argv, "memory_mb": 2048}).score == 1.0


def test_i22_18_memory_mb_limits_each_process_not_their_sum(tmp_path: Path) -> None:
    # The documented semantics (docs/graders/code.md): RLIMIT_DATA binds every process of the
    # command on its own. Three children of 150 MB each pass a 256 MB limit together; one
    # child of 300 MB does not.
    body = (
        "import json, subprocess, sys\n"
        "def child(mb):\n"
        "    code = f'block = bytearray({mb} * 1024 * 1024)'\n"
        "    return subprocess.Popen([sys.executable, '-c', code], stderr=subprocess.DEVNULL)\n"
        "small = [child(150) for _ in range(3)]\n"
        "codes = [p.wait() for p in small] + [child(300).wait()]\n"
        "print(json.dumps({'score': 1, 'reasoning': json.dumps(codes)}))\n"
    )
    result = run({"command": script(tmp_path, "children.py", body), "memory_mb": 256})
    assert result.score == 1.0, result.error
    assert json.loads(result.reasoning) == [0, 0, 0, 1]
    # Said where a suite author reads it: the JSON Schema an editor shows.
    schema = json.loads(suite_json_schema_text())
    described = schema["$defs"]["CodeGrader"]["properties"]["memory_mb"]["description"]
    assert " ".join(described.split()).startswith(
        "Memory limit (RLIMIT_DATA, Linux only) of each process of the command, in MB: the "
        "private writable memory a process may commit"
    )


def test_a_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    body = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen(['sleep', '60'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "print('waiting for the child', file=sys.stderr, flush=True)\n"
        "time.sleep(60)\n"
    )
    argv = script(tmp_path, "slow.py", body)
    started = time.monotonic()
    message = error(run({"command": argv, "timeout_s": 0.5}))
    assert time.monotonic() - started < 5
    assert message == (
        f"{source(argv)} timed out after 0.5s and was killed; stderr: waiting for the child"
    )
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.05)
    assert not _alive(child)


def test_cancelling_a_run_kills_the_command(tmp_path: Path) -> None:
    pid_file = tmp_path / "grader.pid"
    body = (
        f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(60)\n"
    )
    grader = SPEC.validate_python(
        {"type": "code-grader", "command": script(tmp_path, "s.py", body)}
    )

    async def cancel_midway() -> None:
        task = asyncio.ensure_future(grader.grade(ctx()))
        while not pid_file.exists() or not pid_file.read_text():
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(asyncio.wait_for(cancel_midway(), 10))
    assert not _alive(int(pid_file.read_text()))


@pytest.mark.parametrize(
    "spawn",
    [
        "sleep 300 & echo",  # the child holds stdout open
        "sleep 300 >/dev/null 2>&1 </dev/null & echo",  # the child let go of every pipe
    ],
)
def test_i22_6_a_child_left_running_after_a_normal_exit_is_killed(
    tmp_path: Path, spawn: str
) -> None:
    # Without the group kill the first timed out, the second left `sleep` running.
    reply = '{\\"score\\": 1, \\"reasoning\\": \\"$!\\"}'
    started = time.monotonic()
    result = run({"command": ["sh", "-c", f'{spawn} "{reply}"'], "timeout_s": 10})
    assert time.monotonic() - started < 5
    assert result.score == 1.0, result.error
    child = int(result.reasoning)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.05)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not status.exists() or "zombie" not in status.read_text()


def test_garbage_on_stdout_is_an_error(tmp_path: Path) -> None:
    argv = script(tmp_path, "chatty.py", "print('Looks good to me!')")
    assert error(run({"command": argv})) == (
        f"{source(argv)} printed invalid JSON (line 1 column 1: Expecting value): Looks good to me!"
    )


def test_printing_nothing_is_an_error(tmp_path: Path) -> None:
    argv = [PY, "-c", "import sys; print('thinking', file=sys.stderr)"]
    assert error(run({"command": argv})) == (
        f'{source(argv)} printed nothing; print a JSON result such as {{"score": 1}}; '
        "stderr: thinking"
    )


def test_a_huge_reply_is_cut_off(tmp_path: Path) -> None:
    argv = [PY, "-c", "import sys; sys.stdout.write('1' * (9 * 1024 * 1024))"]
    assert error(run({"command": argv})) == (
        f"{source(argv)} printed more than 8 MB; a reply is one object"
    )


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ({"hits": ["ok"]}, "the reply has no `score` (nor `assertions` to count)"),
        ({"score": 1.5}, "score 1.5 is outside 0–1"),
        ({"score": -0.1}, "score -0.1 is outside 0–1"),
        ({"score": "high"}, '`score` must be a number in 0–1 or a boolean, got "high"'),
        ({"score": None}, "`score` must be a number in 0–1 or a boolean, got null"),
        (
            {"scroe": 1},
            "the reply has an unknown key 'scroe'. Did you mean 'score'? Known: "
            "['assertions', 'details', 'hits', 'misses', 'reasoning', 'score']",
        ),
        ({"score": 1, "hits": "ok"}, '`hits` must be a list of strings, got "ok"'),
        ({"score": 1, "misses": [1]}, "`misses` must be a list of strings, got [1]"),
        ({"score": 1, "reasoning": ["x"]}, "`reasoning` must be a string"),
        (
            {"score": 1, "details": {"check": "a"}},
            '`details` must be a list of objects, got {"check": "a"}',
        ),
        ({"score": 1, "details": ["a"]}, 'details[0] must be an object, got "a"'),
        (
            {"score": 1, "details": [{"passed": True}]},
            "details[0].check must be a non-empty string",
        ),
        (
            {"score": 1, "details": [{"check": "a", "passed": "yes"}]},
            "details[0].passed must be true or false",
        ),
        (
            {"score": 1, "details": [{"check": "a", "passed": True, "message": 3}]},
            "details[0].message must be a string",
        ),
        (
            {"score": 1, "details": [{"check": "a", "passed": True, "pased": 1}]},
            "details[0] has an unknown key 'pased'. Did you mean 'passed'? Known: "
            "['actual', 'check', 'expected', 'message', 'passed']",
        ),
        ([1], "expected a number, a boolean or an object with `score`, got list"),
    ],
)
def test_a_malformed_reply_is_an_error(tmp_path: Path, reply: Any, reason: str) -> None:
    argv = [PY, "-c", f"import json; print(json.dumps({reply!r}))"]
    assert error(run({"command": argv})) == f"invalid reply from {source(argv)}: {reason}"


def test_nan_is_not_json(tmp_path: Path) -> None:
    argv = [PY, "-c", "print('{\"score\": NaN}')"]
    assert (
        error(run({"command": argv}))
        == f"{source(argv)} printed invalid JSON (NaN is not a JSON value)"
    )


def test_details_expected_and_actual_are_truncated(tmp_path: Path) -> None:
    reply = {
        "score": 0,
        "details": [
            {
                "check": "a",
                "passed": False,
                "expected": {"k": 1},
                "actual": "y" * 100,
                "message": "m",
            }
        ],
    }
    argv = [PY, "-c", f"import json; print(json.dumps({reply!r}))"]
    assert run({"command": argv}).details == [
        Detail(check="a", passed=False, expected='{"k": 1}', actual="y" * 79 + "…", message="m")
    ]


# --- in-process functions -----------------------------------------------------------------------

GRADERS = """\
import asyncio

def window(ctx):
    return "30 days" in ctx["output"]

def fraction(ctx):
    return 0.4

async def judged(ctx):
    await asyncio.sleep(0)
    return {"score": 0.9, "hits": ["polite"], "details": [{"check": "polite", "passed": True}]}

async def slow(ctx):
    await asyncio.sleep(30)

def broken(ctx):
    raise ValueError("no rubric for " + ctx["case_id"])

def wrong(ctx):
    return "yes"

class Rubric:
    @staticmethod
    def check(ctx):
        return 1

LIMIT = 3
"""


@pytest.fixture
def graders_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"my_graders_{tmp_path.name.replace('-', '_')}"
    write(tmp_path / "mods" / f"{name}.py", GRADERS)
    monkeypatch.syspath_prepend(str(tmp_path / "mods"))
    return name


def test_a_sync_function_returning_a_bool(graders_module: str) -> None:
    spec = {"function": f"{graders_module}:window"}
    assert (run(spec).score, run(spec, ctx("no")).score) == (1.0, 0.0)
    assert run(spec).reasoning == f"function '{graders_module}:window' returned true"


def test_a_float_an_async_mapping_and_a_method(graders_module: str) -> None:
    assert run({"function": f"{graders_module}:fraction"}).score == 0.4
    judged = run({"function": f"{graders_module}:judged"})
    assert (judged.score, judged.hits) == (0.9, ["polite"])
    assert judged.details == [Detail(check="polite", passed=True)]
    assert run({"function": f"{graders_module}:Rubric.check"}).score == 1.0


def test_a_function_that_raises_is_an_error(graders_module: str) -> None:
    assert error(run({"function": f"{graders_module}:broken"})) == (
        f"function '{graders_module}:broken' raised ValueError: no rubric for c1"
    )


def test_a_function_that_returns_nonsense_is_an_error(graders_module: str) -> None:
    assert error(run({"function": f"{graders_module}:wrong"})) == (
        f"invalid reply from function '{graders_module}:wrong': expected a number, a boolean or "
        "an object with `score`, got str"
    )


def test_a_slow_function_times_out(graders_module: str) -> None:
    started = time.monotonic()
    message = error(run({"function": f"{graders_module}:slow", "timeout_s": 0.2}))
    assert message == f"function '{graders_module}:slow' did not return within 0.2s"
    assert time.monotonic() - started < 5


def test_the_function_is_imported_when_the_suite_loads(graders_module: str) -> None:
    assert error_of({"function": f"{graders_module}:windw"}) == (
        f"Value error, '{graders_module}' has no attribute 'windw'. Did you mean 'window'?"
    )
    assert error_of({"function": f"{graders_module}:LIMIT"}) == (
        f"Value error, '{graders_module}:LIMIT' is not callable (its type is int)"
    )


def test_a_module_that_fails_to_import_is_rejected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "mods" / "explodes_on_import.py", "raise RuntimeError('missing API key')")
    monkeypatch.syspath_prepend(str(tmp_path / "mods"))
    assert error_of({"function": "explodes_on_import:grade"}) == (
        "Value error, importing module 'explodes_on_import' failed: RuntimeError: missing API key"
    )


# --- validation when the suite loads ----------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({}, "Value error, give exactly one of `function` (in process) or `command`"),
        (
            {"function": "os:getcwd", "command": ["true"]},
            "Value error, give exactly one of `function` (in process) or `command`",
        ),
        (
            {"function": "grade.py"},
            "Value error, 'grade.py' is not a function reference; write 'package.module:function', "
            "e.g. 'my_evals.graders:refund_ok'",
        ),
        (
            {"function": "no_such_module_xyz:grade"},
            "Value error, cannot import module 'no_such_module_xyz' (No module named "
            "'no_such_module_xyz'); install its package or add its directory to PYTHONPATH",
        ),
        (
            {"function": "os:getcwd", "memory_mb": 100},
            "Value error, `memory_mb` applies to a `command`; an in-process `function` shares "
            "assay's process and environment",
        ),
        (
            {"function": "os:getcwd", "env": {"A": "1"}},
            "Value error, `env` applies to a `command`; an in-process `function` shares "
            "assay's process and environment",
        ),
        (
            {"command": []},
            "Value error, the command is empty; give the program to run, e.g. [python, run.py]",
        ),
        (
            {"command": "'unclosed"},
            "Value error, cannot split the command string: No closing quotation",
        ),
        (
            {"command": ["no-such-program-xyz", "g.py"]},
            "Value error, program 'no-such-program-xyz' not found on PATH",
        ),
        ({"command": ["true"], "timeout_s": 0}, "Input should be greater than 0"),
        ({"command": ["true"], "memory_mb": 0}, "Input should be greater than 0"),
        (
            {"command": ["true"], "memroy_mb": 10},
            "unknown key 'memroy_mb'. Did you mean 'memory_mb'?",
        ),
    ],
)
def test_invalid_options_are_rejected(spec: dict[str, Any], message: str) -> None:
    assert error_of(spec) == message


def test_a_missing_absolute_program_is_rejected(tmp_path: Path) -> None:
    missing = tmp_path / "graders" / "missing.sh"
    assert error_of({"command": [str(missing)]}) == (f"Value error, program '{missing}' not found")


def test_a_relative_script_runs_from_the_suite_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite_dir = tmp_path / "evals"
    (suite_dir / "graders").mkdir(parents=True)
    script = suite_dir / "graders" / "grade.sh"
    script.write_text('#!/bin/sh\necho "{\\"score\\": 1, \\"reasoning\\": \\"$(pwd)\\"}"\n')
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path)  # elsewhere: the path must not resolve against the cwd
    grader = SPEC.validate_python({"type": "code-grader", "command": ["./graders/grade.sh"]})
    ctx = GradingContext(case_id="c1", output="x", threshold=0.8, base_dir=suite_dir)
    result = asyncio.run(grader.grade(ctx))
    assert (result.score, result.error, result.reasoning) == (1.0, None, str(suite_dir))


def test_defaults() -> None:
    grader = SPEC.validate_python({"type": "code-grader", "command": ["true"]})
    assert isinstance(grader, CodeGrader)
    assert (grader.timeout_s, grader.memory_mb, grader.env, grader.awaits_io) == (
        30.0,
        512,
        {},
        True,
    )


LIMIT_REPORT = """\
import json, resource
soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
print(json.dumps({"score": 1, "reasoning": f"{soft} {hard}"}))
"""


def test_the_memory_limit_is_set_in_the_child_only(tmp_path: Path) -> None:
    import resource

    argv = script(tmp_path, "limits.py", LIMIT_REPORT)
    own_soft, own_hard = resource.getrlimit(resource.RLIMIT_DATA)
    limit = 300 * 1024 * 1024
    if own_hard != resource.RLIM_INFINITY:
        limit = min(limit, own_hard)
    assert run({"command": argv, "memory_mb": 300}).reasoning == f"{limit} {limit}"
    assert run({"command": argv, "memory_mb": None}).reasoning == f"{own_soft} {own_hard}"
    assert resource.getrlimit(resource.RLIMIT_DATA) == (own_soft, own_hard)


# --- a suite -----------------------------------------------------------------------------------


def test_a_suite_through_evaluate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "mods" / "suite_graders_mod.py", GRADERS)
    monkeypatch.syspath_prepend(str(tmp_path / "mods"))
    write(tmp_path / "grade.py", OK_SCRIPT)
    suite = f"""\
name: code
target:
  type: fake
  responses: {{good: "Refunds within 30 days.", bad: "Refunds whenever."}}
assertions:
  - {{type: code-grader, command: [{json.dumps(PY)}, grade.py], name: script}}
  - {{type: code_judge, function: "suite_graders_mod:window", name: in-process}}
tests:
  - {{id: good, input: good}}
  - {{id: bad, input: bad}}
  - id: broken
    input: good
    assertions: [{{type: code-grader, function: "suite_graders_mod:broken"}}]
"""
    path = write(tmp_path / "code.eval.yaml", suite)
    run_result = evaluate(path, config=EvalConfig(store=False, cache_mode="off"))
    outcome = {c.case_id: (c.verdict, c.score) for c in run_result.results}
    assert outcome == {"good": ("pass", 1.0), "bad": ("fail", 0.125), "broken": ("error", None)}
    broken = next(c for c in run_result.results if c.case_id == "broken")
    assert broken.grader_results[0].error is not None
    assert broken.grader_results[0].error.message == (
        "function 'suite_graders_mod:broken' raised ValueError: no rubric for broken"
    )


# --- issue 24 item 3: code graders as AgentV v4 writes them ------------------------------------


ASSERTIONS_REPLY = """\
import json, sys
ctx = json.load(sys.stdin)
print(json.dumps({"assertions": [
    {"text": "mentions 30 days", "passed": "30 days" in ctx["output"], "evidence": ctx["output"]},
    {"text": "is polite", "passed": False},
    {"text": "is short", "passed": len(ctx["output"]) < 80, "evidence": None},
]}))
"""


def test_i24_3_an_assertions_reply_maps_to_hits_misses_and_details(tmp_path: Path) -> None:
    result = run({"command": script(tmp_path, "grade.py", ASSERTIONS_REPLY)})
    # no `score`: the share of assertions that passed, as AgentV computes it
    assert (result.score, result.verdict) == (pytest.approx(2 / 3, abs=1e-6), "fail")
    assert (result.hits, result.misses) == (["mentions 30 days", "is short"], ["is polite"])
    assert result.details == [
        Detail(check="mentions 30 days", passed=True, message="Refunds within 30 days."),
        Detail(check="is polite", passed=False, message=""),
        Detail(check="is short", passed=True, message=""),
    ]
    # a `score` given with assertions wins over the count
    argv = [
        PY,
        "-c",
        "import json; print(json.dumps({'score': 0.9, 'assertions': "
        "[{'text': 'a', 'passed': False}], 'hits': ['h']}))",
    ]
    scored = run({"command": argv})
    assert (scored.score, scored.hits, scored.misses) == (0.9, ["h"], ["a"])


@pytest.mark.parametrize(
    ("assertions", "reason"),
    [
        ("x", '`assertions` must be a list of objects, got "x"'),
        ([{"passed": True}], "assertions[0].text must be a non-empty string"),
        ([{"text": "a", "passed": 1}], "assertions[0].passed must be true or false"),
        ([{"text": "a", "passed": True, "evidence": 3}], "assertions[0].evidence must be a string"),
        (
            [{"text": "a", "passed": True, "evidance": "x"}],
            "assertions[0] has an unknown key 'evidance'. Did you mean 'evidence'? Known: "
            "['evidence', 'passed', 'text']",
        ),
        ([], "the reply has no `score` (nor `assertions` to count)"),
    ],
)
def test_i24_3_a_malformed_assertions_reply_is_an_error(assertions: Any, reason: str) -> None:
    argv = [PY, "-c", f"import json; print(json.dumps({{'assertions': {assertions!r}}}))"]
    assert error(run({"command": argv})) == f"invalid reply from {source(argv)}: {reason}"


def test_i24_3_exit_code_replies_under_the_agentv_protocol(tmp_path: Path) -> None:
    def exits(code: int, out: str = "", err: str = "") -> list[str]:
        body = (
            f"import sys\nsys.stdout.write({out!r})\nsys.stderr.write({err!r})\nsys.exit({code})\n"
        )
        return script(tmp_path, f"exit{code}{len(out)}{len(err)}.py", body)

    passed = run({"command": exits(0, "all files present\n"), "protocol": "agentv"})
    assert (passed.score, passed.verdict, passed.hits) == (1.0, "pass", ["all files present"])
    failed = run({"command": exits(1, "main.py missing"), "protocol": "agentv"})
    assert (failed.score, failed.verdict, failed.misses) == (0.0, "fail", ["main.py missing"])
    silent = run({"command": exits(2), "protocol": "agentv"})
    assert (silent.score, silent.misses, silent.error) == (0.0, ["exit 2"], None)
    # a non-zero exit that wrote to stderr, or printed a JSON object, is an error (AgentV's)
    crashed = exits(1, "", "Traceback: boom")
    assert error(run({"command": crashed, "protocol": "agentv"})) == (
        f"{source(crashed)} exited with code 1; stderr: Traceback: boom"
    )
    # the native contract is unchanged: plain text is not a reply
    assert error(run({"command": exits(0, "ok")})).startswith(
        f"{source(exits(0, 'ok'))} printed invalid JSON"
    )
    # AgentV's free-form `details` object and keys assay does not know are read, not refused
    lenient = [
        PY,
        "-c",
        "import json; print(json.dumps({'score': 1, 'details': {'files': 3}, 'extra': 1}))",
    ]
    agentv = run({"command": lenient, "protocol": "agentv"})
    assert (agentv.score, agentv.reasoning) == (1.0, 'details: {"files": 3}')
    assert "unknown key 'details'" not in str(agentv.error)


def test_i24_3_config_and_criteria_reach_the_grader(tmp_path: Path) -> None:
    echo = script(
        tmp_path,
        "echo.py",
        "import json, sys\nctx = json.load(sys.stdin)\n"
        "seen = json.dumps([ctx['config'], ctx['criteria']])\n"
        "print(json.dumps({'score': 1, 'reasoning': seen}))\n",
    )
    context = ctx(criteria="States the refund window")
    result = run({"command": echo, "config": {"required": ["a.py"], "n": 2}}, context)
    assert json.loads(result.reasoning) == [
        {"required": ["a.py"], "n": 2},
        "States the refund window",
    ]
    assert json.loads(run({"command": echo}).reasoning) == [None, None]


NODE_GRADER = """\
let data = "";
process.stdin.on("data", (c) => (data += c));
process.stdin.on("end", () => {
  const ctx = JSON.parse(data);
  console.log(JSON.stringify({score: 1, assertions: [{text: "node ran", passed: true,
    evidence: ctx.output}]}));
});
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_i24_3_node_starts_under_the_default_memory_limit(tmp_path: Path) -> None:
    # Under the former RLIMIT_AS of 512 MB node died before running a line ("Failed to reserve
    # virtual memory for CodeRange"): V8 reserves far more address space than it uses.
    grader = write(tmp_path / "grade.js", NODE_GRADER)
    result = run({"command": ["node", str(grader)]})
    assert result.error is None
    assert (result.score, result.hits) == (1.0, ["node ran"])
    assert CodeGrader.model_fields["memory_mb"].default == 512
    # the limit still binds what node commits
    hog = write(
        tmp_path / "hog.js",
        "const a = []; for (let i = 0; i < 2000; i++) a.push(Buffer.alloc(1 << 20, 1));\n"
        "console.log(JSON.stringify({score: 1}));\n",
    )
    assert run({"command": ["node", str(hog)], "memory_mb": 256}).verdict == "error"
    assert run({"command": ["node", str(hog)], "memory_mb": None}).score == 1.0


@pytest.mark.skipif(shutil.which("bun") is None, reason="bun is not installed on this machine")
def test_i24_3_bun_starts_under_the_default_memory_limit(tmp_path: Path) -> None:
    grader = write(tmp_path / "grade.ts", NODE_GRADER)
    result = run({"command": ["bun", "run", str(grader)]})
    assert (result.score, result.error) == (1.0, None)


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not installed on this machine")
def test_i24_3_uv_starts_under_the_default_memory_limit(tmp_path: Path) -> None:
    grader = write(tmp_path / "grade.py", OK_SCRIPT)
    result = run({"command": ["uv", "run", "--no-project", "--offline", "python", str(grader)]})
    assert (result.score, result.error) == (1.0, None)
