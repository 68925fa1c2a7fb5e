"""The Python API and pytest examples run as their READMEs say, with the results they show."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def test_the_python_api_example_prints_its_verdicts(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "python-api" / "evaluate.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr  # the warranty case fails on purpose
    assert done.stdout == (
        "refund     pass       1.00  \n"
        "shipping   pass       1.00  \n"
        "warranty   fail       0.00  does not contain '2 years'; apologises instead of answering\n"
        "pass rate 67%  passed=False\n"
    )
    assert list(tmp_path.iterdir()) == []  # store=False: nothing written


def _pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_pytest_example_runs_its_evals_and_its_tests(tmp_path: Path) -> None:
    project = tmp_path / "pytest-example"
    shutil.copytree(EXAMPLES / "pytest", project)  # a copy: the run must not write into the repo
    evals = _pytest(project, "evals")
    assert evals.returncode == 0, evals.stdout
    assert "PASSED evals/support.eval.yaml::support::refund-window" in evals.stdout
    assert "PASSED evals/support.eval.yaml::support::opening-hours" in evals.stdout
    billing = _pytest(project, "evals", "-m", "billing")
    assert "1 passed, 1 deselected" in billing.stdout
    tests = _pytest(project)  # testpaths: the ordinary tests only
    assert tests.returncode == 0, tests.stdout
    assert "PASSED tests/test_bot.py::test_refund_reply_passes" in tests.stdout
    assert "PASSED tests/test_bot.py::test_unknown_question_is_caught" in tests.stdout
    assert "eval.yaml" not in tests.stdout
    assert not (project / ".assay").exists()
