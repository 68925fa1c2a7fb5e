"""Bad input exits 2 with one located line and no traceback; failures exit 1; Ctrl-C 130."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assay.store import SQLiteStore
from tests.conftest import write
from tests.e2e._cli import ASSAY, assay, assay_env

GOOD_TEST = "  - {id: a, input: hi, assertions: [{type: contains, value: hi}]}\n"
HEAD = "name: demo\ntarget: {type: fake, responses: {hi: hi}}\ntests:\n"

MALFORMED = {
    "bad-yaml": (HEAD + "  - {id: a, input: [oops\n", "s.eval.yaml:5:1: invalid YAML"),
    "unknown-key": (
        HEAD + "  - {id: a, input: hi, asserts: []}\n",
        "s.eval.yaml:4 tests[0].asserts: unknown key 'asserts'. Did you mean 'assertions'?",
    ),
    "wrong-type": (
        HEAD + "  - {id: a, input: hi, assertions: [{type: contains, value: hi, weight: []}]}\n",
        "s.eval.yaml:4 tests[0].assertions[0].weight: Input should be a valid number",
    ),
    "bad-regex": (
        HEAD + "  - {id: a, input: hi, assertions: [{type: regex, value: 'a(?=b)'}]}\n",
        "s.eval.yaml:4 tests[0].assertions[0].value: regex 'a(?=b)' is not valid RE2",
    ),
    "duplicate-id": (
        HEAD + GOOD_TEST + GOOD_TEST,
        "s.eval.yaml:5 tests[1].id: duplicate test id 'a' (first used at s.eval.yaml:4)",
    ),
    "missing-tests-file": (
        "name: demo\ntests: cases.jsonl\n",
        "s.eval.yaml:2 tests: tests file 'cases.jsonl' not found",
    ),
    "unknown-target": (
        "name: demo\ntarget: nope\ntests:\n" + GOOD_TEST,
        "s.eval.yaml: unknown target 'nope'. Define it under `targets:`.",
    ),
}


@pytest.mark.parametrize("command", ["run", "validate"])
@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_suite_exits_2_with_one_located_line(
    tmp_path: Path, case: str, command: str
) -> None:
    body, expected = MALFORMED[case]
    write(tmp_path / "s.eval.yaml", body)
    done = assay(command, "s.eval.yaml", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: " + expected), lines[0]
    assert not (tmp_path / ".assay").exists() or command == "validate"


def test_missing_suite_file_exits_2(tmp_path: Path) -> None:
    done = assay("run", "nope.eval.yaml", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (2, "error: nope.eval.yaml: file not found\n")


def test_bad_option_exits_2(tmp_path: Path) -> None:
    done = assay("run", "x.eval.yaml", "--threshold", "80", cwd=tmp_path)
    assert done.returncode == 2
    assert "80.0 is not in the range 0.0<=x<=1.0" in done.stderr


def test_failing_run_exits_1(tmp_path: Path) -> None:
    write(
        tmp_path / "s.eval.yaml",
        HEAD + "  - {id: a, input: hi, assertions: [{type: contains, value: bye}]}\n",
    )
    done = assay("run", "s.eval.yaml", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "result  FAILED" in done.stdout


def test_target_errors_are_case_errors_not_crashes(tmp_path: Path) -> None:
    write(tmp_path / "agent.py", "def answer(case):\n    raise RuntimeError('model down')\n")
    write(
        tmp_path / "s.eval.yaml",
        "name: demo\ntarget: {type: python, function: 'agent:answer'}\ntests:\n" + GOOD_TEST,
    )
    done = assay("run", "s.eval.yaml", "--json", cwd=tmp_path)
    assert done.returncode == 1
    (result,) = json.loads(done.stdout)["results"]
    assert (result["verdict"], result["score"]) == ("error", None)
    assert result["error"] == {
        "type": "RuntimeError",
        "message": "function 'agent:answer' raised RuntimeError: model down",
    }


def test_unimportable_python_target_exits_2(tmp_path: Path) -> None:
    write(
        tmp_path / "s.eval.yaml",
        "name: demo\ntarget: {type: python, function: 'missing_mod:answer'}\ntests:\n" + GOOD_TEST,
    )
    done = assay("run", "s.eval.yaml", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "missing_mod" in done.stderr


AGENT = (
    "from pathlib import Path\n"
    "Path('imported').touch()\n"
    "def answer(case):\n"
    "    Path('called').touch()\n"
    "    return 'hi'\n"
)
"""A python target's module that leaves a trace of being imported and of being called."""

REFUSED = {
    "python-function-typo": (
        "name: demo\ntarget: {type: python, function: 'agent:answr'}\ntests:\n",
        "s.eval.yaml:2 target: python target 'agent:answr': 'agent' has no attribute 'answr'. "
        "Did you mean 'answer'?",
    ),
    "python-module-missing": (
        "name: demo\ntargets:\n  bot: {type: python, function: 'agnet:answer'}\n"
        "target: bot\ntests:\n",
        "s.eval.yaml:3 targets.bot: python target 'agnet:answer': cannot import module 'agnet' "
        "(No module named 'agnet'). Searched {dir} and the installed packages; add the module's "
        "directory to `python_path`.",
    ),
    "replay-file-missing": (
        "name: demo\ntarget: {type: replay, path: recorded.jsonl}\ntests:\n",
        "s.eval.yaml:2 target: replay target: recorded outputs file recorded.jsonl not found "
        "(`path:` is relative to the suite file's directory)",
    ),
    "replay-record-invalid": (
        "name: demo\ntarget: {type: replay, path: bad.jsonl}\ntests:\n",
        "bad.jsonl:1: invalid JSON: Expecting value (column 1)",
    ),
    "command-missing": (
        "name: demo\ntarget: {type: command, command: [no-such-agent-xyz, '{PROMPT}']}\ntests:\n",
        "s.eval.yaml:2 target: command target: executable 'no-such-agent-xyz' not found on PATH",
    ),
    "judge-provider-unknown": (
        HEAD.replace("tests:", "judge: {provider: openia, model: m}\ntests:"),
        "s.eval.yaml:3 judge.provider: unknown provider 'openia'. Did you mean 'openai'? Known "
        "providers: openai, azure, openrouter, groq, together, fireworks, deepseek, mistral, "
        "gemini, huggingface, truefoundry, vertex, ollama, vllm, sglang, lmstudio, bedrock, "
        "anthropic, vertex-anthropic, fake",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_i21_5_validate_refuses_what_run_refuses_with_the_same_message(
    tmp_path: Path, case: str
) -> None:
    body, expected = REFUSED[case]
    write(tmp_path / "agent.py", AGENT)
    write(tmp_path / "bad.jsonl", "not json\n")
    write(tmp_path / "s.eval.yaml", body + GOOD_TEST)
    checked = assay("validate", "s.eval.yaml", cwd=tmp_path)
    ran = assay("run", "s.eval.yaml", cwd=tmp_path)
    line = "error: " + expected.replace("{dir}", str(tmp_path.resolve())) + "\n"
    assert (checked.returncode, checked.stdout, checked.stderr) == (2, "", line)
    assert (ran.returncode, ran.stderr) == (2, line)
    assert not (tmp_path / "called").exists()


def test_i21_5_validate_imports_a_python_target_but_never_calls_it(tmp_path: Path) -> None:
    write(tmp_path / "agent.py", AGENT)
    write(
        tmp_path / "s.eval.yaml",
        "name: demo\ntarget: {type: python, function: 'agent:answer'}\ntests:\n" + GOOD_TEST,
    )
    done = assay("validate", "s.eval.yaml", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        "ok  s.eval.yaml: suite 'demo', 1 test\n",
        "",
    )
    assert (tmp_path / "imported").exists()  # as `assay run` imports it before its first case
    assert not (tmp_path / "called").exists()


def test_i21_5_a_missing_api_key_warns_in_validate_and_stops_run(tmp_path: Path) -> None:
    write(
        tmp_path / "s.eval.yaml",
        "name: demo\njudge: {model: gpt-4.1-mini}\n"
        "target: {type: openai, model: gpt-4.1-mini, api_key_env: ASSAY_TEST_NO_SUCH_KEY}\n"
        "tests:\n  - {id: a, input: hi, expected_outcomes: [Says hi]}\n",
    )
    env = assay_env()
    env.pop("OPENAI_API_KEY", None)
    env.pop("ASSAY_JUDGE_MODEL", None)
    messages = (
        "s.eval.yaml:2 judge: the judge gpt-4.1-mini reads its API key from OPENAI_API_KEY, "
        "which is not set; export it, or name another variable in the judge's `api_key_env`",
        "s.eval.yaml:3 target: openai target: environment variable ASSAY_TEST_NO_SUCH_KEY is "
        "not set. Export it with your API key, name another variable in `api_key_env`, or set "
        "`api_key_env: null` for a local server that needs no key",
    )
    checked = assay("validate", "s.eval.yaml", cwd=tmp_path, env=env)
    assert (checked.returncode, checked.stdout) == (0, "ok  s.eval.yaml: suite 'demo', 1 test\n")
    assert checked.stderr == "".join(f"warning: {m}\n" for m in messages)
    ran = assay("run", "s.eval.yaml", cwd=tmp_path, env=env)
    assert (ran.returncode, ran.stderr) == (2, "error: " + "\n".join(messages) + "\n")


def test_i21_5_a_missing_judge_key_is_located_where_the_variable_is_named(
    tmp_path: Path,
) -> None:
    write(tmp_path / "assay.yaml", "judge:\n  model: gpt-4o\n  api_key_env: NO_SUCH_JUDGE_KEY\n")
    write(
        tmp_path / "s.eval.yaml",
        "name: demo\ntarget: {type: fake, default: hi}\n"
        "tests:\n  - {id: a, input: hi, expected_outcomes: [Says hi]}\n",
    )
    message = (
        "assay.yaml:3 judge.api_key_env: the judge gpt-4o reads its API key from "
        "NO_SUCH_JUDGE_KEY, which is not set; export it, or name another variable in the "
        "judge's `api_key_env`"
    )
    env = assay_env()
    env.pop("ASSAY_JUDGE_MODEL", None)
    checked = assay("validate", "s.eval.yaml", cwd=tmp_path, env=env)
    assert (checked.returncode, checked.stderr) == (0, f"warning: {message}\n")
    ran = assay("run", "s.eval.yaml", cwd=tmp_path, env=env)
    assert (ran.returncode, ran.stderr) == (2, f"error: {message}\n")


def test_validate_reports_ok_and_warnings(tmp_path: Path) -> None:
    write(
        tmp_path / "s.eval.yaml",
        HEAD + "  - {id: a, input: hi, assert: [{type: contains, value: hi}]}\n",
    )
    done = assay("validate", "s.eval.yaml", cwd=tmp_path)
    assert done.returncode == 0
    assert done.stdout == "ok  s.eval.yaml: suite 'demo', 1 test\n"
    assert done.stderr == (
        "warning: s.eval.yaml:4 tests[0].assert: 'assert' is deprecated; use 'assertions'\n"
    )


def test_schema_command_prints_the_committed_schema(tmp_path: Path) -> None:
    done = assay("schema", cwd=tmp_path)
    committed = (Path(__file__).resolve().parents[2] / "schema" / "suite.schema.json").read_text()
    assert done.returncode == 0
    assert done.stdout == committed


def test_help_lists_every_command(tmp_path: Path) -> None:
    done = assay("--help", cwd=tmp_path)
    assert done.returncode == 0
    for name in ("run", "validate", "schema"):
        assert f"  {name} " in done.stdout


def test_ctrl_c_keeps_finished_results_and_exits_130(tmp_path: Path) -> None:
    write(
        tmp_path / "agent.py",
        "import time\n\ndef answer(case):\n"
        "    if case['id'] != 'c0':\n        time.sleep(0.2)\n    return 'ok'\n",
    )
    tests = "".join(
        f"  - {{id: c{i}, input: q, assertions: [{{type: contains, value: ok}}]}}\n"
        for i in range(100)
    )
    write(
        tmp_path / "s.eval.yaml",
        "name: demo\ntarget: {type: python, function: 'agent:answer'}\n"
        "execution: {concurrency: 1}\ntests:\n" + tests,
    )
    proc = subprocess.Popen(
        [ASSAY, "run", "s.eval.yaml"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    db = tmp_path / ".assay" / "assay.db"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # wait until a few results are committed
        if db.exists():
            with SQLiteStore(db) as store:
                runs = store.list_runs()
                if runs and len(list(store.iter_case_results(runs[0].id))) >= 3:
                    break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    with SQLiteStore(db) as store:
        (run,) = store.list_runs()
        kept = [r.case_id for r in store.iter_case_results(run.id)]
    assert run.status == "interrupted"
    assert 3 <= len(kept) < 100
    assert kept == [f"c{i}" for i in range(len(kept))]
    assert run.summary.total == len(kept)


def test_python_m_assay(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "assay", "--version"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0
    assert done.stdout.startswith("assay, version ")
