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
from tests.e2e._cli import ASSAY, assay

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
