"""The pytest plugin, run as users run it: pytest's `pytester` starts a real `pytest`
subprocess in a fresh project directory.

A subprocess (`runpytest_subprocess`) rather than in process: the plugin is loaded from its
installed `pytest11` entry point exactly as in a user's project, and the inner session has its
own rootdir, so this repo's pytest settings do not leak into it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from _pytest.pytester import Pytester

from tests.conftest import write

SUPPORT = """\
name: support-bot
target:
  type: fake
  responses: {"refund?": "Refunds within 30 days.", "hours?": "We open at 9."}
  default: "I don't know"
tests:
  - id: refund
    input: "refund?"
    tags: [billing, smoke]
    assertions: [{type: contains, value: "30 days"}]
  - id: hours
    input: "hours?"
    tags: [hours]
    assertions: [{type: contains, value: "9"}, {type: contains, value: "open"},
                 {type: contains, value: "We"}, {type: contains, value: "5pm"}]
  - id: unknown
    input: "zzz"
    tags: [2fa]
    assertions: [{type: contains, value: refund}]
"""

ERRORS = """\
name: errs
target: {type: python, function: "agent:answer"}
tests:
  - {id: fine, input: hi, assertions: [{type: equals, value: ok}]}
  - {id: crash, input: crash, assertions: [{type: equals, value: ok}]}
"""

AGENT = """\
CALLS = []

def answer(case):
    CALLS.append(case["id"])
    with open("calls.log", "a") as log:
        log.write(case["id"] + "\\n")
    if case["input"] == "crash":
        raise RuntimeError("database down")
    return "ok"
"""


def pytest_run(pytester: Pytester, *args: str) -> subprocess.CompletedProcess[str]:
    """`pytest ARGS` in a subprocess in the pytester's project, without cache files."""
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args, timeout=120)
    return subprocess.CompletedProcess(
        args, int(result.ret), "\n".join(result.outlines) + "\n", "\n".join(result.errlines) + "\n"
    )


def outcomes(done: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """`nodeid -> PASSED/FAILED/ERROR` from the `-rA` summary."""
    found = re.findall(r"^(PASSED|FAILED|ERROR) (\S+)", done.stdout, re.MULTILINE)
    return {nodeid: outcome for outcome, nodeid in found}


@pytest.fixture
def project(pytester: Pytester) -> Path:
    write(pytester.path / "evals" / "support.eval.yaml", SUPPORT)
    write(pytester.path / "evals" / "errs.eval.yaml", ERRORS)
    write(pytester.path / "evals" / "agent.py", AGENT)
    return pytester.path


def test_cases_become_items_with_their_verdicts(pytester: Pytester, project: Path) -> None:
    done = pytest_run(pytester, "evals", "-rA", "--strict-markers")
    assert done.returncode == 1, done.stdout + done.stderr
    assert outcomes(done) == {
        "evals/errs.eval.yaml::errs::fine": "PASSED",
        "evals/errs.eval.yaml::errs::crash": "ERROR",
        "evals/support.eval.yaml::support-bot::refund": "PASSED",
        "evals/support.eval.yaml::support-bot::hours": "FAILED",
        "evals/support.eval.yaml::support-bot::unknown": "FAILED",
    }
    assert "= 2 failed, 2 passed, 1 error in " in done.stdout
    # Failures read as verdicts and misses, titled suite::case, with no traceback.
    assert (
        "_ support-bot::hours _" in done.stdout
        and "hours: borderline — score 0.75, threshold 0.80, borderline from 0.60\n"
        "  ✗ contains 0.00: does not contain '5pm'\n"
        "  output: 'We open at 9.'\n"
        in done.stdout
    )
    assert "unknown: fail — score 0.00, threshold 0.80, borderline from 0.60\n" in done.stdout
    assert "ERROR at setup of errs::crash" in done.stdout
    assert (
        "[error] crash: error\n"
        "  function 'agent:answer' raised RuntimeError: database down\n" in done.stdout
    )
    assert "Traceback" not in done.stdout and "raise CaseNotPassed" not in done.stdout
    assert not (project / ".assay").exists()  # in memory unless --assay-store


def test_each_suite_runs_once_for_the_selected_cases(pytester: Pytester, project: Path) -> None:
    done = pytest_run(pytester, "evals", "-k", "errs and not crash", "-rA")
    assert done.returncode == 0, done.stdout
    assert outcomes(done) == {"evals/errs.eval.yaml::errs::fine": "PASSED"}
    assert (project / "calls.log").read_text() == "fine\n"
    (project / "calls.log").unlink()
    everything = pytest_run(pytester, "evals/errs.eval.yaml", "-rA")
    assert sorted((project / "calls.log").read_text().split()) == ["crash", "fine"]
    assert "1 passed, 1 error" in everything.stdout


def test_k_and_m_select_by_suite_case_and_tag(pytester: Pytester, project: Path) -> None:
    by_suite = pytest_run(pytester, "evals", "-k", "support-bot and not unknown", "-rA")
    assert set(outcomes(by_suite)) == {
        "evals/support.eval.yaml::support-bot::refund",
        "evals/support.eval.yaml::support-bot::hours",
    }
    by_marker = pytest_run(pytester, "evals", "-m", "smoke or hours", "-rA", "--strict-markers")
    assert outcomes(by_marker) == {
        "evals/support.eval.yaml::support-bot::refund": "PASSED",
        "evals/support.eval.yaml::support-bot::hours": "FAILED",
    }
    by_keyword_tag = pytest_run(pytester, "evals", "-k", "2fa", "-rA")
    assert outcomes(by_keyword_tag) == {"evals/support.eval.yaml::support-bot::unknown": "FAILED"}
    not_a_marker = pytest_run(pytester, "evals", "-m", "2fa", "-rA", "--strict-markers")
    assert outcomes(not_a_marker) == {}  # `2fa` cannot name a marker: a keyword only


def test_one_case_runs_by_node_id(pytester: Pytester, project: Path) -> None:
    done = pytest_run(pytester, "evals/support.eval.yaml::support-bot::hours", "-rA")
    assert outcomes(done) == {"evals/support.eval.yaml::support-bot::hours": "FAILED"}


def test_the_threshold_option_applies_to_every_case(pytester: Pytester, project: Path) -> None:
    done = pytest_run(pytester, "evals/support.eval.yaml", "--assay-threshold", "0.7", "-rA")
    assert outcomes(done)["evals/support.eval.yaml::support-bot::hours"] == "PASSED"
    bad = pytest_run(pytester, "evals", "--assay-threshold", "7")
    assert bad.returncode == 4
    assert "--assay-threshold 7.0: give a number from 0 to 1" in bad.stderr


def test_runs_are_stored_only_when_asked(pytester: Pytester, project: Path) -> None:
    from assay.store import SQLiteStore

    pytest_run(pytester, "evals/support.eval.yaml", "--assay-store")
    with SQLiteStore(project / ".assay" / "assay.db") as store:
        [run] = store.list_runs()
    assert (run.suite, run.summary.total, run.summary.passed_count) == ("support-bot", 3, 1)
    pytest_run(pytester, "evals/support.eval.yaml", "--assay-store", "runs.db", "-k", "refund")
    with SQLiteStore(project / "runs.db") as store:
        [run] = store.list_runs()
    assert (run.summary.total, run.summary.passed_count) == (1, 1)


def test_eval_files_are_collected_only_under_given_paths(pytester: Pytester, project: Path) -> None:
    write(project / "tests" / "test_plain.py", "def test_plain():\n    assert True\n")
    write(project / "pytest.ini", "[pytest]\ntestpaths = tests evals\n")
    bare = pytest_run(pytester, "-rA")
    assert outcomes(bare) == {"tests/test_plain.py::test_plain": "PASSED"}
    always = pytest_run(pytester, "-rA", "--assay-collect", "always")
    assert len(outcomes(always)) == 6
    write(project / "pytest.ini", "[pytest]\ntestpaths = tests evals\nassay_collect = always\n")
    assert len(outcomes(pytest_run(pytester, "-rA"))) == 6
    write(project / "pytest.ini", "[pytest]\nassay_collect = never\n")
    assert outcomes(pytest_run(pytester, "evals", "-rA")) == {}
    write(project / "pytest.ini", "[pytest]\nassay_collect = sometimes\n")
    wrong = pytest_run(pytester, "evals")
    assert "assay_collect = 'sometimes' in the pytest config: use one of args, always, never" in (
        wrong.stderr
    )


def test_a_broken_suite_is_a_located_collection_error(pytester: Pytester) -> None:
    tmp_path = pytester.path
    write(
        tmp_path / "evals" / "bad.eval.yaml",
        "name: bad\ntarget: {type: fake}\ntests:\n  - {id: a, input: q, assertions: "
        "[{type: contain, value: x}]}\n",
    )
    done = pytest_run(pytester, "evals")
    assert done.returncode == 2
    assert "ERROR collecting evals/bad.eval.yaml" in done.stdout
    assert (
        "evals/bad.eval.yaml:4 tests[0].assertions[0]: unknown grader type 'contain'. "
        "Did you mean 'contains'?" in done.stdout
    )
    assert "Traceback" not in done.stdout


def test_a_suite_that_cannot_run_errors_every_case(pytester: Pytester) -> None:
    tmp_path = pytester.path
    write(
        tmp_path / "evals" / "s.eval.yaml",
        "name: s\ntarget: missing\ntests:\n  - {id: a, input: q, assertions: "
        "[{type: contains, value: x}]}\n  - {id: b, input: q, assertions: "
        "[{type: contains, value: x}]}\n",
    )
    done = pytest_run(pytester, "evals", "-rA")
    assert outcomes(done) == {
        "evals/s.eval.yaml::s::a": "ERROR",
        "evals/s.eval.yaml::s::b": "ERROR",
    }
    assert (
        "[error] suite 's' could not run: evals/s.eval.yaml: unknown target 'missing'. "
        "Define it under `targets:`." in done.stdout
    )


ORDINARY = """\
from assay.graders import Contains


def loud(context):
    return context["output"].isupper()


def test_grades_in_code(assay_grade):
    result = assay_grade("REFUNDS WITHIN 30 DAYS", graders=[Contains(value="30 DAYS"), loud])
    assert (result.verdict, result.score) == ("pass", 1.0)
    assert [g.name for g in result.grader_results] == ["contains", "loud"]


def test_expected_and_threshold(assay_grade):
    result = assay_grade("30 days", graders=[{"type": "equals"}, loud], expected="30 days")
    assert result.score == 0.5
    assert result.threshold == THRESHOLD
"""


@pytest.mark.parametrize(("flags", "threshold"), [((), 0.8), (("--assay-threshold", "0.4"), 0.4)])
def test_the_assay_grade_fixture(
    pytester: Pytester, flags: tuple[str, ...], threshold: float
) -> None:
    tmp_path = pytester.path
    write(tmp_path / "test_ordinary.py", ORDINARY.replace("THRESHOLD", str(threshold)))
    done = pytest_run(pytester, "-rA", *flags)
    assert done.returncode == 0, done.stdout
    assert outcomes(done) == {
        "test_ordinary.py::test_grades_in_code": "PASSED",
        "test_ordinary.py::test_expected_and_threshold": "PASSED",
    }
    assert not (tmp_path / ".assay").exists()


def test_a_project_without_eval_files_is_unaffected(pytester: Pytester) -> None:
    tmp_path = pytester.path
    write(tmp_path / "test_x.py", "def test_x():\n    pass\n")
    write(tmp_path / "data.yaml", "a: 1\n")
    with_plugin = pytest_run(pytester, "-q", ".")
    without = pytest_run(pytester, "-q", ".", "-p", "no:assay")
    assert with_plugin.returncode == without.returncode == 0
    assert "1 passed" in with_plugin.stdout and "1 passed" in without.stdout
    probe = "import sys, assay.testing.pytest_plugin; print(sorted(m for m in sys.modules "
    probe += "if m.startswith('assay.') and m != 'assay.testing.pytest_plugin'))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['assay._version', 'assay.testing']"
