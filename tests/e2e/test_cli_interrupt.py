"""Ctrl-C says how to go on: the run's id and the exact command that completes it."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from tests.conftest import write
from tests.e2e._cli import assay, assay_env, interrupt_once_stored

AGENT = """import os, time

def answer(case):
    if case["id"] == "c2" and os.environ.get("HANG"):
        time.sleep(60)
    return "ok"
"""


def test_i21_4_ctrl_c_prints_the_run_id_and_a_resume_command_that_works(tmp_path: Path) -> None:
    write(tmp_path / "agent.py", AGENT)
    tests = "".join(
        f"  - {{id: c{i}, input: q, assertions: [{{type: equals, value: ok}}]}}\n" for i in range(4)
    )
    write(
        tmp_path / "s.eval.yaml",
        "name: demo\ntarget: {type: python, function: 'agent:answer'}\n"
        f"execution: {{concurrency: 1}}\ntests:\n{tests}",
    )
    db = tmp_path / "my runs" / "r.db"  # a space: the printed command must quote it
    db.parent.mkdir()
    run_id, returncode, stderr = interrupt_once_stored(
        ["run", "s.eval.yaml", "--db", str(db), "--no-cache"],
        cwd=tmp_path,
        db=db,
        stored=2,
        env=assay_env(HANG="1"),
    )
    assert returncode == 130
    command = f"assay run --resume {run_id} --db '{db}' --no-cache"
    assert stderr.splitlines()[-2:] == [
        f"interrupted: run {run_id} kept 2 of 4 cases.",
        f"Resume it with: {command}",
    ]
    # Pasted as printed, in the same directory, it completes the run.
    argv = shlex.split(command)
    resumed = assay(*argv[1:], "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    final = json.loads(resumed.stdout)
    assert final["id"] == run_id
    assert sorted(r["case_id"] for r in final["results"]) == ["c0", "c1", "c2", "c3"]
