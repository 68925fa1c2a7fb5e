"""The CLI against a real PostgreSQL server (`ASSAY_DATABASE_URL`), as a team would use it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import write
from tests.e2e._cli import ASSAY, assay, assay_env

SUITE = """\
name: shared
target: {type: python, function: "agent:answer"}
assertions: [{type: contains, value: ok}]
tests:
"""

AGENT = """\
import time


def answer(case):
    time.sleep(0.002)
    return "ok" if int(case["id"][1:]) % 10 else "no"
"""

CASES = 120


def test_two_runs_writing_at_once_lose_nothing_and_compare(
    tmp_path: Path, postgres_url: str
) -> None:
    lines = "".join(f"  - {{id: c{i}, input: q{i}}}\n" for i in range(CASES))
    write(tmp_path / "shared.eval.yaml", SUITE + lines)
    write(tmp_path / "agent.py", AGENT)
    env = assay_env(ASSAY_DATABASE_URL=postgres_url)
    runs = [
        subprocess.Popen(
            [ASSAY, "run", "shared.eval.yaml", "--json", "--no-cache"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [1, 1], [err for _, err in outputs]
    ids = [json.loads(out)["id"] for out, _ in outputs]

    for run_id in ids:
        shown = json.loads(assay("runs", "show", run_id, "--json", cwd=tmp_path, env=env).stdout)
        assert sorted(r["case_id"] for r in shown["results"]) == sorted(
            f"c{i}" for i in range(CASES)
        )
        assert shown["summary"]["passed_count"] == CASES - CASES // 10

    listed = json.loads(assay("runs", "list", "--json", cwd=tmp_path, env=env).stdout)
    assert sorted(r["id"] for r in listed) == sorted(ids)
    # Same cases, same outputs: no change but latency, which two racing runs cannot promise.
    compared = assay(
        "compare",
        ids[0],
        ids[1],
        "--json",
        "--max-latency-increase-pct",
        "10000",
        cwd=tmp_path,
        env=env,
    )
    assert compared.returncode == 0, compared.stderr
    summary = json.loads(compared.stdout)["summary"]
    assert (summary["regression_detected"], summary["pass_rate_delta"]) == (False, 0.0)
    assert not (tmp_path / ".assay").exists()  # nothing went to a SQLite file

    # A run moves from the team's server to a local file and back out byte for byte.
    exported = tmp_path / "run.jsonl"
    assert (
        assay("runs", "export", ids[0], "-o", str(exported), cwd=tmp_path, env=env).returncode == 0
    )
    local = tmp_path / "local.db"
    assert assay("runs", "import", str(exported), "--db", str(local), cwd=tmp_path).returncode == 0
    again = tmp_path / "again.jsonl"
    assert (
        assay("runs", "export", ids[0], "-o", str(again), "--db", str(local), cwd=tmp_path)
    ).returncode == 0
    assert again.read_bytes() == exported.read_bytes()
