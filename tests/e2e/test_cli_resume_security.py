"""`--resume` runs only the user's own suite files, and snapshots keep no `${VAR}` secrets.

A run's snapshot is data anybody can write (`assay runs import`, `POST /api/runs`); these
tests import crafted runs and check that resuming them never runs what they carry.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from assay.server import create_app
from assay.store import SQLiteStore, open_store
from tests.conftest import write
from tests.e2e._cli import ASSAY, assay, assay_env

AGENT = """def answer(case):
    return {"output": "ok " + case["input"]}
"""

SUITE = (
    "name: demo\n"
    "targets:\n"
    "  app: {type: python, function: 'agent:answer'}\n"
    "target: app\n"
    "tests:\n"
    + "".join(
        f"  - {{id: c{i}, input: q{i}, assertions: [{{type: contains, value: ok}}]}}\n"
        for i in range(4)
    )
)


def _project(tmp: Path) -> None:
    write(tmp / "agent.py", AGENT)
    write(tmp / "s.eval.yaml", SUITE)


def _interrupted_export(
    tmp: Path, run_id: str, edit_suite: object = None, env: dict[str, str] | None = None
) -> Path:
    """An export of a real run of `tmp`'s suite, rewritten as an interrupted run with one
    case done; `edit_suite(snapshot)` changes its stored snapshot as an attacker would."""
    made = assay("run", "s.eval.yaml", "--json", cwd=tmp, env=env)
    assert made.returncode == 0, made.stderr
    original = json.loads(made.stdout)["id"]
    exported = assay("runs", "export", original, "-o", "x.jsonl", cwd=tmp, env=env)
    assert exported.returncode == 0, exported.stderr
    header, first, *_ = (tmp / "x.jsonl").read_text().splitlines()
    head = json.loads(header)
    head["run"].update(id=run_id, status="interrupted", finished_at=None)
    if callable(edit_suite):
        edit_suite(head["snapshot"])
    crafted = tmp / f"{run_id}.jsonl"
    crafted.write_text(json.dumps(head) + "\n" + first + "\n")
    assert assay("runs", "delete", original, "--yes", cwd=tmp, env=env).returncode == 0
    return crafted


def test_i22_1_resume_never_runs_a_command_from_an_imported_snapshot(tmp_path: Path) -> None:
    _project(tmp_path)
    marker = tmp_path / "pwned"

    def evil(snapshot: dict[str, object]) -> None:
        command = {"type": "command", "command": ["sh", "-c", f"touch {marker}; echo ok"]}
        suite = snapshot["suite"]
        assert isinstance(suite, dict)
        suite["targets"]["app"] = command
        snapshot["target"] = {"name": "app", "spec": command}
        snapshot["suite_dir"] = "/"

    crafted = _interrupted_export(tmp_path, "evil-run", evil)
    imported = assay("runs", "import", str(crafted), cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr

    resumed = assay("run", "--resume", "evil-run", cwd=tmp_path)
    assert resumed.returncode == 2, resumed.stdout + resumed.stderr
    assert not marker.exists()
    assert resumed.stderr == (
        "error: cannot resume run 'evil-run': the suite (s.eval.yaml) differs from the one the "
        "run started with (at targets.app.command, targets.app.function, targets.app.type). "
        "A resumed run only runs the suite as it is on disk: restore it as it was, or start a "
        "new run (assay run s.eval.yaml)\n"
    )
    assert "Traceback" not in resumed.stderr
    with SQLiteStore(tmp_path / ".assay" / "assay.db") as store:
        assert store.get_run("evil-run").status == "interrupted"  # not claimed


def test_i22_1_an_unchanged_imported_run_resumes_from_the_suite_on_disk(tmp_path: Path) -> None:
    _project(tmp_path)

    def moved(snapshot: dict[str, object]) -> None:
        snapshot["suite_dir"] = "/nonexistent"  # never used: the suite on disk is

    crafted = _interrupted_export(tmp_path, "moved-run", moved)
    assert assay("runs", "import", str(crafted), cwd=tmp_path).returncode == 0
    resumed = assay("run", "--resume", "moved-run", "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    final = json.loads(resumed.stdout)
    assert final["status"] == "completed"
    assert sorted(r["case_id"] for r in final["results"]) == ["c0", "c1", "c2", "c3"]
    assert final["summary"]["total"] == 4


def test_i22_1_an_edited_suite_refuses_the_resume_and_names_the_field(tmp_path: Path) -> None:
    _project(tmp_path)
    crafted = _interrupted_export(tmp_path, "edited-run")
    assert assay("runs", "import", str(crafted), cwd=tmp_path).returncode == 0
    write(tmp_path / "s.eval.yaml", SUITE.replace("input: q2", "input: changed"))
    resumed = assay("run", "--resume", "edited-run", cwd=tmp_path)
    assert resumed.returncode == 2
    assert "(at tests[2].input)" in resumed.stderr
    assert "restore it as it was, or start a new run (assay run s.eval.yaml)" in resumed.stderr


def test_i22_1_an_edited_project_config_refuses_the_resume(tmp_path: Path) -> None:
    _project(tmp_path)
    write(tmp_path / "assay.yaml", "threshold: 0.5\n")
    crafted = _interrupted_export(tmp_path, "project-run")
    assert assay("runs", "import", str(crafted), cwd=tmp_path).returncode == 0
    write(
        tmp_path / "assay.yaml",
        "threshold: 0.5\ntargets:\n  app: {type: command, command: [touch, pwned]}\n",
    )
    resumed = assay("run", "--resume", "project-run", cwd=tmp_path)
    assert resumed.returncode == 2
    assert resumed.stderr.startswith(
        f"error: cannot resume run 'project-run': the project config ({tmp_path / 'assay.yaml'})"
        " differs from the one the run started with (at targets)."
    ), resumed.stderr
    assert not (tmp_path / "pwned").exists()


def test_i22_1_a_snapshot_naming_a_file_outside_the_project_is_refused(tmp_path: Path) -> None:
    _project(tmp_path)

    def elsewhere(snapshot: dict[str, object]) -> None:
        snapshot["suite_file"] = "/etc/evil.eval.yaml"

    crafted = _interrupted_export(tmp_path, "far-run", elsewhere)
    assert assay("runs", "import", str(crafted), cwd=tmp_path).returncode == 0
    resumed = assay("run", "--resume", "far-run", cwd=tmp_path)
    assert resumed.returncode == 2
    assert resumed.stderr == (
        "error: cannot resume run 'far-run': its suite file /etc/evil.eval.yaml is not a file "
        "under the working directory; give the run's suite file: assay run --resume far-run "
        "path/to/suite.eval.yaml\n"
    )
    # Given explicitly, the user's own file is used (and matches the run).
    again = assay("run", "--resume", "far-run", "s.eval.yaml", cwd=tmp_path)
    assert again.returncode == 0, again.stderr


def test_i22_1_a_stored_judge_endpoint_is_not_used_without_the_user(tmp_path: Path) -> None:
    _project(tmp_path)

    def exfiltrate(snapshot: dict[str, object]) -> None:
        options = snapshot["options"]
        assert isinstance(options, dict)
        options["judge_base_url"] = "http://attacker.invalid/v1"

    crafted = _interrupted_export(tmp_path, "judge-run", exfiltrate)
    assert assay("runs", "import", str(crafted), cwd=tmp_path).returncode == 0
    resumed = assay("run", "--resume", "judge-run", cwd=tmp_path)
    assert resumed.returncode == 2
    assert resumed.stderr == (
        "error: cannot resume run 'judge-run': it asked its judge at http://attacker.invalid/v1, "
        "and this resume would ask the default endpoint. If you trust that endpoint (it "
        "receives the judge's API key), resume with --judge-base-url "
        "http://attacker.invalid/v1; otherwise start a new run\n"
    )


def test_i22_1_a_malformed_stored_baseline_is_refused_before_the_run_is_claimed(
    tmp_path: Path,
) -> None:
    _project(tmp_path)

    def broken(snapshot: dict[str, object]) -> None:
        snapshot["regression"] = {"baseline": "pinned", "tolerance": "lots"}

    crafted = _interrupted_export(tmp_path, "bad-baseline", broken)
    assert assay("runs", "import", str(crafted), cwd=tmp_path).returncode == 0
    resumed = assay("run", "--resume", "bad-baseline", cwd=tmp_path)
    assert resumed.returncode == 2
    assert resumed.stderr == (
        "error: run 'bad-baseline' cannot be resumed: its snapshot's regression settings are "
        "not valid; start a new run\n"
    )
    with SQLiteStore(tmp_path / ".assay" / "assay.db") as store:
        assert store.get_run("bad-baseline").status == "interrupted"


SECRET = "sk-test-0123456789abcdef-SECRET"

SECRET_SUITE = (
    "name: secrets\n"
    "targets:\n"
    "  app: {type: python, function: 'agent:answer'}\n"
    "  unused:\n"
    "    type: http\n"
    "    url: https://api.example.invalid/v1?key=${API_TOKEN}\n"
    "    headers: {Authorization: 'Bearer ${API_TOKEN}'}\n"
    "  tool:\n"
    "    type: command\n"
    "    command: [echo, hi]\n"
    "    env: {TOKEN: '${API_TOKEN}', PLAIN: '${UNSET_VAR:-fallback}'}\n"
    "target: app\n"
    "tests:\n"
    "  - {id: c0, input: q0, assertions: [{type: contains, value: ok}]}\n"
)


def test_i22_2_no_secret_from_the_environment_is_stored_or_exported(tmp_path: Path) -> None:
    write(tmp_path / "agent.py", AGENT)
    write(tmp_path / "s.eval.yaml", SECRET_SUITE)
    write(tmp_path / "assay.yaml", "judge: {model: 'm-${API_TOKEN}'}\n")
    env = assay_env(API_TOKEN=SECRET)
    made = assay("run", "s.eval.yaml", "--json", cwd=tmp_path, env=env)
    assert made.returncode == 0, made.stderr
    run_id = json.loads(made.stdout)["id"]
    assert SECRET not in made.stdout

    exported = assay("runs", "export", run_id, cwd=tmp_path, env=env)
    assert exported.returncode == 0, exported.stderr
    assert SECRET not in exported.stdout
    snapshot = json.loads(exported.stdout.splitlines()[0])["snapshot"]
    targets = snapshot["suite"]["targets"]
    assert targets["unused"]["headers"] == {"Authorization": "Bearer ${API_TOKEN}"}
    assert targets["unused"]["url"] == "https://api.example.invalid/v1?key=${API_TOKEN}"
    assert targets["tool"]["env"] == {"TOKEN": "${API_TOKEN}", "PLAIN": "fallback"}
    assert snapshot["project"]["config"]["judge"]["model"] == "m-${API_TOKEN}"

    db = tmp_path / ".assay" / "assay.db"
    with SQLiteStore(db) as store:
        app = create_app(store, config_path=tmp_path / ".assay" / "config.yaml")
        with TestClient(app) as client:
            for path in (f"/api/runs/{run_id}", f"/api/runs/{run_id}/results", "/api/runs"):
                answer = client.get(path)
                assert answer.status_code == 200, answer.text
                assert SECRET not in answer.text
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for file in db.parent.iterdir():
        assert SECRET.encode() not in file.read_bytes(), file.name


def test_i22_2_a_run_resumes_after_its_secret_changed(tmp_path: Path) -> None:
    """The snapshot keeps `${API_TOKEN}` as written, and --resume compares that form: a
    rotated token is not a different suite (and the new one is what the target gets)."""
    write(tmp_path / "agent.py", AGENT)
    write(tmp_path / "s.eval.yaml", SECRET_SUITE)
    crafted = _interrupted_export(tmp_path, "rotated", env=assay_env(API_TOKEN=SECRET))
    assert SECRET not in crafted.read_text()
    env = assay_env(API_TOKEN="another-token-9876543210")
    assert assay("runs", "import", str(crafted), cwd=tmp_path, env=env).returncode == 0
    resumed = assay("run", "--resume", "rotated", cwd=tmp_path, env=env)
    assert resumed.returncode == 0, resumed.stderr


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_i22_10_two_resumes_of_one_run_complete_it_once(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    _project(tmp_path)
    crafted = _interrupted_export(tmp_path, "twice")
    db = (
        str(tmp_path / "other.db")
        if backend == "sqlite"
        else str(request.getfixturevalue("postgres_url"))
    )
    write(
        tmp_path / "agent.py",
        "import time\n" + AGENT.replace("    return", "    time.sleep(0.3)\n    return"),
    )
    assert assay("runs", "import", str(crafted), "--db", db, cwd=tmp_path).returncode == 0
    procs = [
        subprocess.Popen(
            [ASSAY, "run", "--resume", "twice", "--db", db],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=assay_env(),
        )
        for _ in range(2)
    ]
    outcomes = [(proc.wait(timeout=120), proc.communicate()[1]) for proc in procs]
    codes = sorted(code for code, _ in outcomes)
    assert codes == [0, 2], outcomes
    refused = next(err for code, err in outcomes if code == 2)
    assert refused.startswith("error: run 'twice' ")  # running elsewhere, or completed by it
    assert "Traceback" not in refused
    with open_store(db) as store:
        run = store.get_run("twice", include_results=True)
    ids = [r.case_id for r in run.results]
    assert sorted(ids) == ["c0", "c1", "c2", "c3"]
    assert (run.status, run.summary.total, run.summary.passed_count) == ("completed", 4, 4)
