from __future__ import annotations

import asyncio
import json
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from assay.errors import TargetError, UsageError
from assay.results import Message, TargetOutput, TokenUsage, ToolCall
from assay.targets import CommandTarget, TargetRequest

PY = sys.executable


def _script(directory: Path, body: str, name: str = "agent.py") -> str:
    path = directory / name
    path.write_text(textwrap.dedent(body))
    return str(path)


def _request(base_dir: Path, input: str = "What is the refund window?") -> TargetRequest:
    return TargetRequest(
        case_id="refund-1",
        input=input,
        messages=(Message(role="user", content=input),),
        metadata={"tier": "gold"},
        base_dir=base_dir,
    )


def _target(command: list[str] | str, **options: object) -> CommandTarget:
    return CommandTarget.model_validate({"type": "command", "command": command, **options})


def _call(
    target: CommandTarget, base_dir: Path, input: str = "What is the refund window?"
) -> TargetOutput:
    return asyncio.run(target.call(_request(base_dir, input)))


def test_plain_stdout_is_the_output(tmp_path: Path) -> None:
    script = _script(tmp_path, "import sys\nprint('You said: ' + sys.argv[1])\nprint()\n")
    output = _call(_target([PY, script, "{PROMPT}"]), tmp_path, "hi there")
    assert output.output == "You said: hi there"
    assert 0 < output.duration_ms < 10_000


def test_placeholders_are_substituted_inside_arguments(tmp_path: Path) -> None:
    script = _script(tmp_path, "import sys\nprint('|'.join(sys.argv[1:]))\n")
    target = _target([PY, script, "--id={CASE_ID}", "q: {PROMPT}!", "{CASE_ID}{PROMPT}"])
    assert (
        _call(target, tmp_path, "{CASE_ID}").output
        == "--id=refund-1|q: {CASE_ID}!|refund-1{CASE_ID}"
    )


def test_a_command_string_is_split_without_a_shell(tmp_path: Path) -> None:
    script = _script(tmp_path, "import sys\nprint(repr(sys.argv[1:]))\n")
    target = _target(f"'{PY}' '{script}' \"two words\" {{PROMPT}} '$HOME' '*'")
    assert (
        _call(target, tmp_path, "a; rm -rf /").output
        == "['two words', 'a; rm -rf /', '$HOME', '*']"
    )


def test_the_case_mapping_arrives_as_json_on_stdin(tmp_path: Path) -> None:
    script = _script(tmp_path, "import sys\nsys.stdout.write(sys.stdin.read())\n")
    output = _call(_target([PY, script]), tmp_path, "héllo")
    assert json.loads(output.output) == {
        "id": "refund-1",
        "input": "héllo",
        "messages": [{"role": "user", "content": "héllo"}],
        "metadata": {"tier": "gold"},
        "repeat_index": 0,
    }


def test_json_stdout_with_tool_calls_is_structured(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        """
        import json
        print(json.dumps({
            "output": "30 days",
            "messages": [
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {
                        "name": "lookup_policy", "arguments": json.dumps({"topic": "refunds"})}}
                ]},
                {"role": "tool", "tool_call_id": "c1", "content": "30d"},
                {"role": "assistant", "content": "30 days"},
            ],
            "token_usage": {"input": 20, "output": 2},
            "cost_usd": 0.01,
            "duration_ms": 99,
        }, indent=2))
        """,
    )
    output = _call(_target([PY, script]), tmp_path)
    call = ToolCall(tool="lookup_policy", args={"topic": "refunds"}, output="30d")
    assert output == TargetOutput(
        output="30 days",
        messages=[
            Message(role="assistant", tool_calls=[call]),
            Message(role="tool", content="30d"),
            Message(role="assistant", content="30 days"),
        ],
        tool_calls=[call],
        token_usage=TokenUsage(input=20, output=2),
        cost_usd=0.01,
        duration_ms=99,
    )


def test_the_output_file_replaces_stdout(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        """
        import json, sys
        print("progress noise")
        with open(sys.argv[1], "w") as f:
            json.dump({"output": "from file", "tool_calls": [{"tool": "t"}]}, f)
        """,
    )
    output = _call(_target([PY, script, "{OUTPUT_FILE}"]), tmp_path)
    assert (output.output, output.tool_calls) == ("from file", [ToolCall(tool="t")])


def test_an_output_file_that_was_not_written_is_an_error(tmp_path: Path) -> None:
    script = _script(tmp_path, "print('forgot the file')\n")
    with pytest.raises(TargetError) as caught:
        _call(_target([PY, script, "{OUTPUT_FILE}"]), tmp_path)
    assert (
        str(caught.value) == f"command '{PY}' exited successfully but did not write {{OUTPUT_FILE}}"
    )


def test_the_prompt_file_holds_the_prompt_and_temp_files_are_removed(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        """
        import json, sys
        prompt_file, output_file = sys.argv[1], sys.argv[2]
        with open(prompt_file, encoding="utf-8") as f:
            prompt = f.read()
        with open(output_file, "w") as f:
            f.write(json.dumps([prompt, prompt_file, output_file]))
        """,
    )
    output = _call(
        _target([PY, script, "{PROMPT_FILE}", "{OUTPUT_FILE}"]), tmp_path, "multi\nline ✓"
    )
    prompt, prompt_file, output_file = json.loads(output.output)
    assert prompt == "multi\nline ✓"
    assert not Path(prompt_file).exists()
    assert not Path(output_file).parent.exists()


def test_cwd_and_env_are_applied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_TEST_INHERITED", "yes")
    (tmp_path / "work").mkdir()
    script = _script(
        tmp_path,
        """
        import os
        print(os.getcwd(), os.environ["ASSAY_TEST_ADDED"], os.environ["ASSAY_TEST_INHERITED"])
        """,
    )
    target = _target([PY, script], cwd="work", env={"ASSAY_TEST_ADDED": "1"})
    assert _call(target, tmp_path).output == f"{tmp_path / 'work'} 1 yes"


def test_the_default_cwd_is_the_suite_directory(tmp_path: Path) -> None:
    script = _script(tmp_path, "import os\nprint(os.getcwd())\n")
    assert _call(_target([PY, script]), tmp_path).output == str(tmp_path)


def test_a_non_zero_exit_reports_the_code_and_the_stderr_tail(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        """
        import sys
        for i in range(30):
            print(f"log line {i}", file=sys.stderr)
        print("partial answer")
        sys.exit(3)
        """,
    )
    with pytest.raises(TargetError) as caught:
        _call(_target([PY, script]), tmp_path)
    tail = "\n".join(f"log line {i}" for i in range(10, 30))
    assert str(caught.value) == (
        f"command '{PY}' exited with code 3; last 20 of 30 stderr lines:\n{tail}"
    )


def test_a_short_stderr_is_shown_whole(tmp_path: Path) -> None:
    script = _script(tmp_path, "import sys\nsys.exit('fatal: no model configured')\n")
    with pytest.raises(TargetError) as caught:
        _call(_target([PY, script]), tmp_path)
    assert str(caught.value) == (
        f"command '{PY}' exited with code 1; stderr:\nfatal: no model configured"
    )


def test_an_exit_without_stderr_says_so(tmp_path: Path) -> None:
    script = _script(tmp_path, "import sys\nsys.exit(2)\n")
    with pytest.raises(TargetError) as caught:
        _call(_target([PY, script]), tmp_path)
    assert str(caught.value) == f"command '{PY}' exited with code 2 (no stderr)"


def test_a_command_killed_by_a_signal_names_it(tmp_path: Path) -> None:
    script = _script(tmp_path, "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n")
    with pytest.raises(TargetError) as caught:
        _call(_target([PY, script]), tmp_path)
    assert str(caught.value) == f"command '{PY}' was killed by SIGTERM (no stderr)"


def test_an_invalid_structured_reply_is_an_error(tmp_path: Path) -> None:
    script = _script(tmp_path, 'print(\'{"output": "x", "tools": []}\')\n')
    with pytest.raises(TargetError) as caught:
        _call(_target([PY, script]), tmp_path)
    assert str(caught.value) == (
        f"invalid output from command '{PY}': unknown key 'tools'. Did you mean 'tool_calls'?"
    )


def _dead(pid: int) -> bool:
    """True once the process is gone or a zombie (its parent may not have reaped it yet)."""
    stat = Path(f"/proc/{pid}/stat")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            state = stat.read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in {"Z", "X"}:
            return True
        time.sleep(0.02)
    return False


SLEEPER = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
with open(sys.argv[1], "w") as f:
    f.write(f"{child.pid}")
print("started", flush=True)
time.sleep(60)
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_timeout_kills_the_command_and_its_children_quickly(tmp_path: Path) -> None:
    script = _script(tmp_path, SLEEPER)
    pid_file = tmp_path / "child.pid"
    target = _target([PY, script, str(pid_file)], timeout_s=0.5)
    started = time.monotonic()
    with pytest.raises(TargetError) as caught:
        _call(target, tmp_path)
    assert time.monotonic() - started < 10
    assert str(caught.value) == f"command '{PY}' timed out after 0.5s"
    assert caught.value.kind == "TimeoutError"
    assert _dead(int(pid_file.read_text()))


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_cancelling_a_call_kills_the_command(tmp_path: Path) -> None:
    script = _script(tmp_path, SLEEPER)
    pid_file = tmp_path / "child.pid"
    target = _target([PY, script, str(pid_file)])

    async def run() -> None:
        task = asyncio.create_task(target.call(_request(tmp_path)))
        while not pid_file.exists() or not pid_file.read_text():
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    started = time.monotonic()
    asyncio.run(run())
    assert time.monotonic() - started < 10
    assert _dead(int(pid_file.read_text()))


def test_a_missing_executable_is_a_target_error_when_called(tmp_path: Path) -> None:
    with pytest.raises(TargetError) as caught:
        _call(_target(["assay-no-such-program", "{PROMPT}"]), tmp_path)
    assert str(caught.value) == "command 'assay-no-such-program' not found on PATH"


def test_a_missing_relative_program_names_the_directory(tmp_path: Path) -> None:
    with pytest.raises(TargetError) as caught:
        _call(_target(["./missing.sh"]), tmp_path)
    assert str(caught.value) == f"command './missing.sh' not found in {tmp_path}"


def test_a_missing_absolute_program_is_named_as_given(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope" / "agent")
    with pytest.raises(TargetError) as caught:
        _call(_target([missing]), tmp_path)
    assert str(caught.value) == f"command '{missing}' not found"
    with pytest.raises(UsageError) as usage:
        asyncio.run(_target([missing]).setup(tmp_path))
    assert str(usage.value) == f"command target: executable '{missing}' not found"


def test_a_program_without_execute_permission_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "agent.sh").write_text("#!/bin/sh\necho hi\n")
    with pytest.raises(TargetError) as caught:
        _call(_target(["./agent.sh"]), tmp_path)
    assert str(caught.value) == "command './agent.sh' is not executable"


def test_a_missing_working_directory_is_an_error_when_called(tmp_path: Path) -> None:
    with pytest.raises(TargetError) as caught:
        _call(_target([PY, "-c", "print(1)"], cwd="gone"), tmp_path)
    assert str(caught.value) == f"command working directory {tmp_path / 'gone'} does not exist"


def test_setup_rejects_a_missing_executable(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        asyncio.run(_target("assay-no-such-program --flag").setup(tmp_path))
    assert str(caught.value) == (
        "command target: executable 'assay-no-such-program' not found on PATH"
    )


def test_setup_resolves_relative_programs_against_the_working_directory(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "agent.sh").write_text("#!/bin/sh\necho hi\n")
    asyncio.run(_target(["./agent.sh"], cwd="bin").setup(tmp_path))
    with pytest.raises(UsageError) as caught:
        asyncio.run(_target(["./agent.sh"]).setup(tmp_path))
    assert str(caught.value) == f"command target: executable './agent.sh' not found in {tmp_path}"


def test_setup_searches_the_configured_path(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    tool = tmp_path / "tools" / "my-agent"
    tool.write_text("#!/bin/sh\necho hi\n")
    tool.chmod(0o755)
    path = f"{tmp_path / 'tools'}{os.pathsep}{os.environ.get('PATH', '')}"
    asyncio.run(_target(["my-agent"], env={"PATH": path}).setup(tmp_path))


def test_setup_rejects_a_missing_working_directory(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        asyncio.run(_target([PY], cwd="nowhere").setup(tmp_path))
    assert str(caught.value) == (
        f"command target: working directory {tmp_path / 'nowhere'} does not exist"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"command": []}, "the command is empty; give the program to run"),
        ({"command": "  "}, "the command is empty; give the program to run"),
        ({"command": "agent 'unclosed"}, "cannot split the command string: No closing quotation"),
        ({"command": "agent", "timeout_s": 0}, "Input should be greater than 0"),
        ({"command": "agent", "shell": True}, "unknown key 'shell'."),
    ],
)
def test_bad_options_are_rejected_at_load_time(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        CommandTarget.model_validate({"type": "command", **options})
    assert message in str(caught.value)


def test_describe_shows_the_command_line() -> None:
    assert _target("python agent.py {PROMPT}").describe() == "command python agent.py {PROMPT}"
    assert _target(["python", "my agent.py"]).describe() == "command python 'my agent.py'"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@pytest.mark.parametrize(
    "spawn",
    [
        "sleep 300 & echo $!",  # the child holds stdout open
        "sleep 300 >/dev/null 2>&1 </dev/null & echo $!",  # the child let go of every pipe
    ],
)
def test_i22_6_a_child_left_running_after_a_normal_exit_is_killed(
    tmp_path: Path, spawn: str
) -> None:
    # Without the group kill the first waited for the timeout, the second left `sleep` running.
    started = time.monotonic()
    output = _call(_target(["sh", "-c", spawn], timeout_s=10), tmp_path)
    assert time.monotonic() - started < 5
    assert _dead(int(output.output))


def test_i26_1_a_command_prints_its_retrieved_context(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        """
        import json
        print(json.dumps({
            "output": "Ünïcode réponse",
            "context": [{"id": "doc-1", "text": "Première passage", "score": 0.9}, "plain"],
        }))
        """,
    )
    output = _call(_target([PY, script]), tmp_path)
    assert output.output == "Ünïcode réponse"
    assert [(p.id, p.text, p.score) for p in output.context] == [
        ("doc-1", "Première passage", 0.9),
        (None, "plain", None),
    ]
