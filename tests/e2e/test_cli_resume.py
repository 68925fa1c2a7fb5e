"""A run killed with SIGKILL is completed by `--resume` (its process is gone, so no
`--takeover`), equal to an uninterrupted run; a resume runs only the suite on disk, unchanged
since the run started."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from assay.store import SQLiteStore, open_store
from tests.conftest import write
from tests.e2e._cli import ASSAY, assay, assay_env

N = 40

AGENT = """import os, time

def answer(case):
    n = int(case["id"].removeprefix("c"))
    # The run to be killed slows down after case 12, so the kill always lands mid-run.
    time.sleep(2.0 if n >= 12 and os.environ.get("SLOW_AFTER_12") else 0.02)
    text = f"answer {n}" + (" ok" if n % 3 else "")
    return {"output": text, "token_usage": {"input": n, "output": 1}}
"""


def _suite(tmp: Path) -> None:
    write(tmp / "agent.py", AGENT)
    tests = "".join(
        f"  - {{id: c{i}, input: q{i}, tags: [t{i % 2}], "
        f"assertions: [{{type: contains, value: ok}}, {{type: contains, value: answer}}]}}\n"
        for i in range(N)
    )
    write(
        tmp / "s.eval.yaml",
        "name: demo\ntarget: {type: python, function: 'agent:answer'}\n"
        "execution: {concurrency: 2, cases_pass_threshold: 0.5}\ntests:\n" + tests,
    )


def _interrupted_run(tmp: Path) -> Path:
    """The suite run in `tmp` and stopped with Ctrl-C once four cases are stored; its store."""
    _suite(tmp)
    proc = subprocess.Popen(
        [ASSAY, "run", "s.eval.yaml"],
        cwd=tmp,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "SLOW_AFTER_12": "1"},
    )
    db = tmp / ".assay" / "assay.db"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if db.exists():
            with SQLiteStore(db) as store:
                runs = store.list_runs()
                if runs and len(list(store.iter_case_results(runs[0].id))) >= 4:
                    break
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    assert proc.returncode == 130
    return db


def _comparable(results: list[dict[str, object]]) -> dict[object, tuple[object, ...]]:
    return {
        r["case_id"]: (r["verdict"], r["score"], r["output"], r["threshold"], r["token_usage"])
        for r in results
    }


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_i22_10_sigkill_then_resume_without_takeover_equals_an_uninterrupted_run(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    reference_dir = tmp_path / "reference"
    killed_dir = tmp_path / "killed"
    for directory in (reference_dir, killed_dir):
        _suite(directory)

    reference = assay("run", "s.eval.yaml", "--json", cwd=reference_dir)
    assert reference.returncode == 0, reference.stderr
    expected = json.loads(reference.stdout)

    if backend == "sqlite":
        location = str(killed_dir / ".assay" / "assay.db")
        env = assay_env()
    else:
        location = request.getfixturevalue("postgres_url")
        env = assay_env(ASSAY_DATABASE_URL=location)
    proc = subprocess.Popen(
        [ASSAY, "run", "s.eval.yaml"],
        cwd=killed_dir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**env, "SLOW_AFTER_12": "1"},
    )
    deadline = time.monotonic() + 30
    done = 0
    while time.monotonic() < deadline and done < 10:
        if backend != "sqlite" or Path(location).exists():
            with open_store(location) as store:
                runs = store.list_runs()
                done = len(list(store.iter_case_results(runs[0].id))) if runs else 0
        time.sleep(0.02)
    assert done >= 10, "the run stored too little in 30 s"

    # While the run's process lives, a resume is refused and names that process.
    live = assay("run", "--resume", runs[0].id[:12], cwd=killed_dir, env=env)
    assert proc.poll() is None, "the run ended before its resume was tried"
    assert live.returncode == 2
    assert re.fullmatch(
        rf"error: run '{runs[0].id}' is running: pid {proc.pid} on host "
        rf"'{re.escape(socket.gethostname())}' \(started \S+Z\) is completing it\. Wait for "
        rf"it to end, or end that process \(kill {proc.pid}\) and resume again\n",
        live.stderr,
    ), live.stderr

    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)

    with open_store(location) as store:
        (crashed,) = store.list_runs()
        kept = len(list(store.iter_case_results(crashed.id)))
    assert crashed.status == "running"  # what a killed process leaves behind
    assert 10 <= kept < N

    # Its process is gone, so a resume claims it: no --takeover (SPEC §6). Of two resumes
    # started at once exactly one claims it; the other is refused (it finds the winner's
    # live process, or the run completed already).
    resumes = [
        subprocess.Popen(
            [ASSAY, "run", "--resume", crashed.id[:12], "--json"],
            cwd=killed_dir,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [resume.communicate(timeout=120) for resume in resumes]
    codes = sorted(resume.returncode for resume in resumes)
    assert codes == [0, 2], outputs
    (winner,) = [r for r in resumes if r.returncode == 0]
    ((stdout, _),) = [o for r, o in zip(resumes, outputs, strict=True) if r is winner]
    ((_, refusal),) = [o for r, o in zip(resumes, outputs, strict=True) if r is not winner]
    assert refusal.startswith(
        (
            f"error: run '{crashed.id}' is running: pid {winner.pid} on host ",
            f"error: run '{crashed.id}' completed; there is nothing to resume",
        )
    ), refusal
    final = json.loads(stdout)
    assert final["id"] == crashed.id
    assert final["status"] == "completed"
    assert len(final["results"]) == N
    assert len({r["case_id"] for r in final["results"]}) == N  # nothing duplicated
    assert _comparable(final["results"]) == _comparable(expected["results"])
    for key in ("total", "passed_count", "failed_count", "error_count", "cases_pass_rate_pct"):
        assert final["summary"][key] == expected["summary"][key], key
    assert (
        final["summary"]["weighted_metrics_score_pct"]
        == expected["summary"]["weighted_metrics_score_pct"]
    )
    assert final["token_usage"] == expected["token_usage"]

    with open_store(location) as store:
        stored = store.get_run(crashed.id, include_results=True)
        owner = store.run_owner(crashed.id)
    assert stored.status == "completed"
    assert owner is None  # a finished run is nobody's
    assert [r.case_id for r in stored.results].count("c0") == 1


def test_resume_refuses_an_edited_suite_and_completes_once_it_is_restored(tmp_path: Path) -> None:
    db = _interrupted_run(tmp_path)
    # Raise the bar in the file: a resume runs the suite on disk, which is no longer the run's.
    suite = (tmp_path / "s.eval.yaml").read_text()
    write(
        tmp_path / "s.eval.yaml", suite.replace("concurrency: 2", "concurrency: 2, threshold: 1.0")
    )
    with SQLiteStore(db) as store:
        (run,) = store.list_runs()
    assert run.status == "interrupted"
    refused = assay("run", "--resume", run.id, cwd=tmp_path)
    assert refused.returncode == 2
    assert refused.stderr == (
        f"error: cannot resume run '{run.id}': the suite (s.eval.yaml) differs from the one the "
        "run started with (at execution.threshold). A resumed run only runs the suite as it is "
        "on disk: restore it as it was, or start a new run (assay run s.eval.yaml)\n"
    )
    write(tmp_path / "s.eval.yaml", suite)
    resumed = assay("run", "--resume", run.id, "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    final = json.loads(resumed.stdout)
    assert {r["threshold"] for r in final["results"]} == {0.8}
    assert len(final["results"]) == N


def test_a_completed_run_cannot_be_resumed(tmp_path: Path) -> None:
    _suite(tmp_path)
    first = assay("run", "s.eval.yaml", "--json", cwd=tmp_path)
    run_id = json.loads(first.stdout)["id"]
    again = assay("run", "--resume", run_id, cwd=tmp_path)
    assert again.returncode == 2
    assert again.stderr == (
        f"error: run '{run_id}' completed; there is nothing to resume "
        "(completed runs never change)\n"
    )


def test_i23_3_a_resumed_runs_earlier_results_are_written_in_this_versions_form(
    tmp_path: Path,
) -> None:
    """`--json` indents a fresh run's stored documents as they are; a resumed run's earlier
    ones, which an older version may have stored without a newer field, go through the model
    and come out with it."""
    db = _interrupted_run(tmp_path)
    connection = sqlite3.connect(db)
    with connection:  # as a version without `workspaces` would have stored c0
        (data,) = connection.execute(
            "SELECT data FROM case_results WHERE case_id = 'c0'"
        ).fetchone()
        older = json.loads(data)
        del older["workspaces"]
        connection.execute(
            "UPDATE case_results SET data = ? WHERE case_id = 'c0'", (json.dumps(older),)
        )
    connection.close()
    with SQLiteStore(db) as store:
        (run,) = store.list_runs()
    resumed = assay("run", "--resume", run.id, "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    final = json.loads(resumed.stdout)
    assert len(final["results"]) == N
    assert all(r["workspaces"] == [] for r in final["results"])
