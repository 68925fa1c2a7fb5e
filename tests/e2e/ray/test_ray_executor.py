"""`assay run --executor ray` against a real two-CPU Ray cluster (conftest.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from assay.store import SQLiteStore
from tests.conftest import write
from tests.e2e._cli import ASSAY, assay, assay_env
from tests.e2e.ray.conftest import LOOPBACK_ENV

N = 24

AGENT = """import fcntl, os, pathlib, time

def _in_flight(delta):
    # Calls in flight across every process, and the most there ever were.
    with open("in_flight.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state = pathlib.Path("in_flight.txt")
        now, peak = map(int, state.read_text().split()) if state.exists() else (0, 0)
        now += delta
        state.write_text(f"{now} {max(peak, now)}")

def answer(case):
    n = int(case["id"].removeprefix("c"))
    pathlib.Path("pids").mkdir(exist_ok=True)
    pathlib.Path("pids", str(os.getpid())).touch()
    _in_flight(1)
    try:
        time.sleep(float(os.environ.get("ASSAY_AGENT_SLEEP_S", "0.01")))
    finally:
        _in_flight(-1)
    text = f"answer {n}" + (" ok" if n % 3 else "")
    return {"output": text, "token_usage": {"input": n, "output": 1}}
"""


def _suite(directory: Path, concurrency: int = 3) -> Path:
    write(directory / "agent.py", AGENT)
    tests = "".join(
        f"  - {{id: c{i}, input: q{i}, "
        f"assertions: [{{type: contains, value: ok}}, {{type: contains, value: answer}}]}}\n"
        for i in range(N)
    )
    write(
        directory / "s.eval.yaml",
        "name: demo\ntarget: {type: python, function: 'agent:answer'}\n"
        f"execution: {{concurrency: {concurrency}, cases_pass_threshold: 0.5}}\ntests:\n" + tests,
    )
    return directory


def _env(sleep_s: float) -> dict[str, str]:
    # ASSAY_* reaches the workers from the driver: the cluster was started without it.
    return assay_env(**LOOPBACK_ENV, ASSAY_AGENT_SLEEP_S=str(sleep_s))


def _ray_args(address: str) -> list[str]:
    return ["--executor", "ray", "--ray-address", address]


def _comparable(results: list[dict[str, object]]) -> dict[object, tuple[object, ...]]:
    return {
        r["case_id"]: (r["verdict"], r["score"], r["output"], r["threshold"], r["token_usage"])
        for r in results
    }


def _expected_outputs() -> dict[str, str]:
    return {f"c{n}": f"answer {n}" + (" ok" if n % 3 else "") for n in range(N)}


def _pids(directory: Path) -> set[int]:
    folder = directory / "pids"
    return {int(p.name) for p in folder.iterdir()} if folder.exists() else set()


def _stored_ids(directory: Path, run_id: str) -> list[str]:
    with SQLiteStore(directory / ".assay" / "assay.db") as store:
        return [r.case_id for r in store.iter_case_results(run_id)]


def _wait_for_results(directory: Path, at_least: int, workers: int = 0) -> str:
    """The id of the run being written once it has `at_least` results and cases ran in
    `workers` processes."""
    db = directory / ".assay" / "assay.db"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if db.exists() and len(_pids(directory)) >= workers:
            with SQLiteStore(db) as store:
                runs = store.list_runs()
                if runs and len(list(store.iter_case_results(runs[0].id))) >= at_least:
                    return runs[0].id
        time.sleep(0.05)
    raise AssertionError(f"no run reached {at_least} results within 60 s")


def test_a_ray_run_equals_a_local_run_and_holds_the_limit_cluster_wide(
    tmp_path: Path, ray_address: str
) -> None:
    local_dir = _suite(tmp_path / "local")
    ray_dir = _suite(tmp_path / "ray")

    local = assay("run", "s.eval.yaml", "--json", cwd=local_dir, env=_env(0.01))
    assert local.returncode == 0, local.stderr
    remote = assay(
        "run", "s.eval.yaml", "--json", *_ray_args(ray_address), cwd=ray_dir, env=_env(0.3)
    )
    assert remote.returncode == 0, remote.stderr
    assert "Traceback" not in remote.stderr

    expected, got = json.loads(local.stdout), json.loads(remote.stdout)  # stdout is only JSON
    assert got["status"] == "completed"
    assert _comparable(got["results"]) == _comparable(expected["results"])
    assert {r["case_id"]: r["output"] for r in got["results"]} == _expected_outputs()
    for key in ("total", "passed_count", "failed_count", "error_count", "cases_pass_rate_pct"):
        assert got["summary"][key] == expected["summary"][key], key
    assert got["token_usage"] == expected["token_usage"]
    assert sorted(_stored_ids(ray_dir, got["id"])) == sorted(_expected_outputs())

    # The cases ran in the two worker processes, never in the driver.
    ray_pids, local_pids = _pids(ray_dir), _pids(local_dir)
    assert len(ray_pids) == 2
    assert len(local_pids) == 1
    assert not ray_pids & local_pids
    # concurrency 3 over two workers (shares 2 + 1): three calls at once, never four.
    assert (ray_dir / "in_flight.txt").read_text() == "0 3"
    assert got["scheduling"]["target_concurrency"] == 3


def test_a_worker_killed_mid_run_loses_no_case_and_duplicates_none(
    tmp_path: Path, ray_address: str
) -> None:
    _suite(tmp_path, concurrency=4)
    proc = subprocess.Popen(
        [ASSAY, "run", "s.eval.yaml", "--json", *_ray_args(ray_address)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(0.3),
    )
    try:
        run_id = _wait_for_results(tmp_path, at_least=4, workers=2)
        victim = min(_pids(tmp_path))  # a worker process: it ran the agent
        os.kill(victim, signal.SIGKILL)
        out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    final = json.loads(out)
    assert final["id"] == run_id
    assert final["status"] == "completed"
    assert {r["case_id"]: r["output"] for r in final["results"]} == _expected_outputs()
    stored = _stored_ids(tmp_path, run_id)
    assert len(stored) == N
    assert sorted(set(stored)) == sorted(stored)  # none stored twice
    assert final["summary"]["total"] == N
    assert final["summary"]["passed_count"] == sum(1 for n in range(N) if n % 3)


def test_an_interrupted_ray_run_is_completed_by_resume(tmp_path: Path, ray_address: str) -> None:
    _suite(tmp_path, concurrency=2)
    proc = subprocess.Popen(
        [ASSAY, "run", "s.eval.yaml", *_ray_args(ray_address)],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(0.3),
    )
    try:
        run_id = _wait_for_results(tmp_path, at_least=4)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    with SQLiteStore(tmp_path / ".assay" / "assay.db") as store:
        interrupted = store.get_run(run_id)
    assert interrupted.status == "interrupted"
    kept = _stored_ids(tmp_path, run_id)
    assert 4 <= len(kept) < N

    resumed = assay(
        "run", "--resume", run_id, "--json", *_ray_args(ray_address), cwd=tmp_path, env=_env(0.01)
    )
    assert resumed.returncode == 0, resumed.stderr
    final = json.loads(resumed.stdout)
    assert final["id"] == run_id
    assert final["status"] == "completed"
    assert {r["case_id"]: r["output"] for r in final["results"]} == _expected_outputs()
    stored = _stored_ids(tmp_path, run_id)
    assert sorted(stored) == sorted(_expected_outputs())
    assert stored[: len(kept)] == kept  # the results kept from the first attempt stay
