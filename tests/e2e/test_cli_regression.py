"""`assay run` with a baseline, end to end: exit codes, the terminal line, `--json`, errors."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from assay.store import SQLiteStore
from tests.conftest import write
from tests.e2e._cli import assay, assay_env

AGENT = """import os

def answer(case):
    return "bad" if case["id"] in os.environ.get("BAD", "").split(",") else "ok"
"""

CASES = "".join(f"  - {{id: c{i:02d}, input: q{i}}}\n" for i in range(20))
"""Twenty cases: each failing one lowers the mean score by 5 points."""


def suite_text(name: str = "demo", regression: str | None = "regression: {}\n") -> str:
    return (
        f"name: {name}\n"
        "target: {type: python, function: 'agent:answer'}\n"
        "execution: {metrics_pass_threshold: 0.5, cases_pass_threshold: 0.5}\n"
        "assertions: [{type: equals, value: ok}]\n" + (regression or "") + "tests:\n" + CASES
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(tmp_path / "agent.py", AGENT)
    write(tmp_path / "s.eval.yaml", suite_text())
    return tmp_path


def run(project: Path, *args: str, bad: str = "") -> subprocess.CompletedProcess[str]:
    return assay("run", *args, cwd=project, env=assay_env(BAD=bad))


def run_id(done: subprocess.CompletedProcess[str]) -> str:
    match = re.search(r"^  run (\S+)  \(", done.stdout, re.MULTILINE)
    assert match is not None, done.stdout
    return match.group(1)


def regression_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The regression line and the indented lines under it."""
    lines = done.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  regression "))
    end = next(i for i, line in enumerate(lines) if line.startswith("  run "))
    return lines[start:end]


def stored_ids(project: Path) -> list[str]:
    with SQLiteStore(project / ".assay" / "assay.db") as store:
        return [run.id for run in store.list_runs()]


def test_warning_exits_0_and_critical_exits_1(project: Path) -> None:
    first = run(project, "s.eval.yaml")
    assert first.returncode == 0, first.stderr
    assert regression_lines(first) == [
        "  regression — new: no earlier passing run of this suite and target"
    ]

    second = run(project, "s.eval.yaml", bad="c03")
    assert second.returncode == 0, second.stderr
    assert regression_lines(second) == [
        f"  regression ! warning: mean score -5.0 pt (100.0% → 95.0%) vs {run_id(first)} "
        "(last_passing)",
        "    1 regressed, 19 unchanged; warning past 2.0 pt, critical from 10.0 pt",
        "    regressed: c03 (pass 1.00 → fail 0.00)",
    ]
    assert second.stdout.rstrip().splitlines()[-2] == "  result  PASSED"

    # Measured against the warning run, which passed: two more failures are 10 points.
    third = run(project, "s.eval.yaml", bad="c03,c07,c05")
    assert third.returncode == 1, third.stderr
    assert regression_lines(third) == [
        f"  regression ✗ critical: mean score -10.0 pt (95.0% → 85.0%) vs {run_id(second)} "
        "(last_passing)",
        "    2 regressed, 18 unchanged; warning past 2.0 pt, critical from 10.0 pt",
        "    regressed: c05 (pass 1.00 → fail 0.00), c07 (pass 1.00 → fail 0.00)",
    ]
    assert "  cases   ✓ pass rate 85.0% (needs ≥ 50%)" in third.stdout  # the run alone passes
    assert third.stdout.rstrip().splitlines()[-2] == "  result  FAILED"

    # The critical run is never a baseline: the next run is measured against the second.
    fourth = run(project, "s.eval.yaml", bad="c03")
    assert fourth.returncode == 0, fourth.stderr
    assert f"clean: mean score +0.0 pt (95.0% → 95.0%) vs {run_id(second)}" in fourth.stdout


def test_json_carries_the_regression(project: Path) -> None:
    first = run(project, "s.eval.yaml", "--json")
    base_id = json.loads(first.stdout)["id"]
    done = run(project, "s.eval.yaml", "--json", bad="c00,c01")
    assert done.returncode == 1, done.stderr
    regression = json.loads(done.stdout)["regression"]
    assert regression == {
        "status": "critical",
        "strategy": "last_passing",
        "baseline_run_id": base_id,
        "tolerance": 0.02,
        "critical_threshold": 0.1,
        "base_score": 1.0,
        "head_score": 0.9,
        "score_delta": -0.1,
        "case_counts": {"regressed": 2, "improved": 0, "unchanged": 18, "new": 0, "removed": 0},
        "cases": [
            {
                "case_id": case_id,
                "status": "regressed",
                "base_verdict": "pass",
                "head_verdict": "fail",
                "base_score": 1.0,
                "head_score": 0.0,
                "score_delta": -1.0,
            }
            for case_id in ("c00", "c01")
        ],
    }


def test_the_baseline_option_needs_no_block(project: Path) -> None:
    write(project / "s.eval.yaml", suite_text(regression=None))
    first = run(project, "s.eval.yaml")
    assert "regression" not in first.stdout  # no block, no option: no metric
    pinned = run(project, "s.eval.yaml", "--baseline", "pinned", bad="c00,c01,c02")
    assert pinned.returncode == 0, pinned.stderr  # nothing pinned: new, not an error
    assert regression_lines(pinned) == [
        "  regression — new: no baseline pinned for this suite (assay baseline pin RUN_ID)"
    ]
    explicit = run(project, "s.eval.yaml", "--baseline", run_id(first)[:-2], bad="c00,c01")
    assert explicit.returncode == 1, explicit.stderr
    assert f"vs {run_id(first)} (run)" in explicit.stdout


def test_an_unknown_baseline_id_exits_2_before_any_run(project: Path) -> None:
    write(project / "t.eval.yaml", suite_text(name="other"))
    done = run(project, "s.eval.yaml", "t.eval.yaml", "--baseline", "2026nope")
    assert done.returncode == 2
    db = project / ".assay" / "assay.db"
    assert done.stderr == (
        f"error: baseline: run '2026nope' not found in {db}. "
        "Give `last_passing`, `pinned` or a stored run's id\n"
    )
    assert stored_ids(project) == []


def test_a_baseline_of_another_suite_exits_2_before_any_run(project: Path) -> None:
    write(project / "t.eval.yaml", suite_text(name="other"))
    first = run(project, "s.eval.yaml")
    done = run(project, "s.eval.yaml", "t.eval.yaml", "--baseline", run_id(first))
    assert done.returncode == 2
    assert done.stderr == (
        f"error: baseline: run '{run_id(first)}' belongs to suite 'demo', not 'other'; "
        "a baseline must be a run of the same suite\n"
    )
    assert stored_ids(project) == [run_id(first)]  # not even the demo suite ran again


def test_resume_takes_no_baseline(project: Path) -> None:
    done = run(project, "--resume", "20261122T054312-3f9a1c", "--baseline", "pinned")
    assert done.returncode == 2
    assert done.stderr == (
        "error: --resume RUN_ID takes no --baseline: a resumed run keeps the baseline it "
        "started with\n"
    )


@pytest.mark.parametrize(
    ("block", "message"),
    [
        pytest.param(
            "regression: {tolerance: 0.2}\n",
            "regression: tolerance (0.2) is above critical_threshold (0.1); a drop becomes a "
            "warning past tolerance and critical at critical_threshold, so tolerance must not "
            "exceed it",
            id="tolerance-above-critical",
        ),
        pytest.param(
            "regression: {strategy: ''}\n",
            "regression.strategy: '' is not a strategy: give last_passing, pinned, or a "
            "stored run's id",
            id="empty-strategy",
        ),
    ],
)
def test_a_bad_block_is_a_located_config_error(project: Path, block: str, message: str) -> None:
    write(project / "s.eval.yaml", suite_text(regression=block))
    done = run(project, "s.eval.yaml")
    assert done.returncode == 2
    assert done.stderr == f"error: s.eval.yaml:5 {message}\n"
