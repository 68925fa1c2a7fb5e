"""`assay run` options end to end: selection, target matrix, repeat, argument errors, streams."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import write
from tests.e2e._cli import assay

SUITE = """\
name: demo
target: alpha
targets:
  alpha: {type: fake, default: "alpha ok"}
  beta: {type: fake, default: "beta ok"}
assertions: [{type: contains, value: ok}]
tests:
  - {id: refund-1, input: q1, tags: [billing]}
  - {id: refund-2, input: q2, tags: [billing, slow]}
  - {id: ship-1, input: q3, tags: [shipping]}
"""


def progress_line(done: int, total: int, passed: int) -> str:
    """The plain progress line printed when a run completes (no ETA once nothing is left)."""
    counts = re.escape(f"({passed} pass 0 borderline {done - passed} fail 0 error)")
    return rf"demo: {done}/{total} done {counts}, \d+\.\d cases/s\n"


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    write(tmp_path / "s.eval.yaml", SUITE)
    return tmp_path


def run_json(directory: Path, *args: str) -> tuple[object, str]:
    done = assay("run", "s.eval.yaml", "--json", *args, cwd=directory)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(("--tag", "billing"), ["refund-1", "refund-2"], id="tag"),
        pytest.param(("--exclude-tag", "billing"), ["ship-1"], id="exclude-tag"),
        pytest.param(
            ("--case", "ship-*", "--case", "refund-2"), ["refund-2", "ship-1"], id="case-globs"
        ),
        pytest.param(
            ("--tag", "billing", "--tag", "shipping", "--exclude-tag", "slow", "--case", "*-1"),
            ["refund-1", "ship-1"],
            id="combined",
        ),
    ],
)
def test_selection_flags_choose_the_cases(
    suite_dir: Path, args: tuple[str, ...], expected: list[str]
) -> None:
    run, stderr = run_json(suite_dir, *args)
    assert isinstance(run, dict)
    assert sorted(r["case_id"] for r in run["results"]) == expected
    assert run["summary"]["total"] == len(expected)
    assert re.fullmatch(progress_line(len(expected), len(expected), len(expected)), stderr)


def test_a_selection_that_keeps_nothing_exits_2(suite_dir: Path) -> None:
    done = assay("run", "s.eval.yaml", "--tag", "nope", "--json", cwd=suite_dir)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: s.eval.yaml: no test matches the selection (--tag / --exclude-tag / --case)\n"
    )
    assert not (suite_dir / ".assay").exists()  # planned before anything was stored


def test_two_targets_give_a_json_array_of_two_runs(suite_dir: Path) -> None:
    runs, stderr = run_json(suite_dir, "--target", "alpha", "--target", "beta")
    assert isinstance(runs, list)
    assert [r["target"] for r in runs] == ["alpha", "beta"]
    assert [r["suite"] for r in runs] == ["demo", "demo"]
    assert runs[0]["id"] != runs[1]["id"]
    assert [sorted({c["output"] for c in r["results"]}) for r in runs] == [
        ["alpha ok"],
        ["beta ok"],
    ]
    assert re.fullmatch(progress_line(3, 3, 3) * 2, stderr)


def test_repeat_keeps_every_sample(suite_dir: Path) -> None:
    run, _ = run_json(suite_dir, "--repeat", "2", "--case", "refund-1")
    assert isinstance(run, dict)
    [case] = run["results"]
    assert [(s["index"], s["output"], s["verdict"]) for s in case["samples"]] == [
        (0, "alpha ok", "pass"),
        (1, "alpha ok", "pass"),
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ("run", "--resume", "20261122T054733-3e446d", "s.eval.yaml", "s.eval.yaml"),
            "error: --resume RUN_ID takes at most one suite file: the run's own\n",
            id="resume-with-paths",
        ),
        pytest.param(
            ("run", "s.eval.yaml", "--takeover"),
            "error: --takeover goes with --resume RUN_ID\n",
            id="takeover-without-resume",
        ),
        pytest.param(
            ("run",),
            "error: give suite files or directories to run, or --resume RUN_ID\n",
            id="nothing-to-run",
        ),
    ],
)
def test_argument_errors_exit_2(suite_dir: Path, args: tuple[str, ...], message: str) -> None:
    done = assay(*args, cwd=suite_dir)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", message)


def test_json_keeps_stdout_pure_and_progress_goes_to_stderr(suite_dir: Path) -> None:
    write(
        suite_dir / "s.eval.yaml",
        SUITE.replace('default: "alpha ok"', 'default: "alpha ok", delay_ms: 20'),
    )
    done = assay("run", "s.eval.yaml", "--json", "--concurrency", "1", cwd=suite_dir)
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)  # nothing but the result on stdout
    assert done.stdout.startswith("{")
    assert (run["suite"], run["summary"]["total"], run["status"]) == ("demo", 3, "completed")
    assert "done" not in done.stdout
    assert re.fullmatch(progress_line(3, 3, 3), done.stderr)


def test_progress_is_plain_text_on_stderr_when_not_a_terminal(suite_dir: Path) -> None:
    write(suite_dir / "s.eval.yaml", SUITE.replace('"beta ok"', '"nope"'))
    done = assay("run", "s.eval.yaml", "--target", "beta", cwd=suite_dir)
    assert done.returncode == 1, done.stderr
    assert re.fullmatch(progress_line(3, 3, 0), done.stderr)
    assert "\x1b" not in done.stderr  # no live bar, no colour codes
    assert "done (" not in done.stdout
    assert "demo" in done.stdout  # the report itself goes to stdout


def test_i23_3_judge_concurrency_is_an_option_of_run(suite_dir: Path) -> None:
    run, _ = run_json(suite_dir, "--judge-concurrency", "64")
    assert run["summary"]["total"] == 3  # type: ignore[index]
    done = assay("run", "s.eval.yaml", "--judge-concurrency", "0", cwd=suite_dir)
    assert done.returncode == 2
    assert "--judge-concurrency" in done.stderr
