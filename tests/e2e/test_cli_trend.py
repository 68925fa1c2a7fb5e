"""`assay runs trend`: a suite's completed runs oldest first, and their least-squares slopes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import write
from tests.e2e._cli import assay

# Two graders per case: "ok fine" passes (score 1.0), "ok" fails with score 0.5.
SUITE = """\
name: {name}
target: {{type: fake, responses: {replies}}}
targets: {{alt: {{type: fake, default: "ok"}}}}
assertions: [{{type: contains, value: ok}}, {{type: contains, value: fine}}]
tests:
  - {{id: a, input: q1}}
  - {{id: b, input: q2}}
  - {{id: c, input: q3}}
  - {{id: d, input: q4}}
"""
# Pass rate 100, 75, 50, 75 (slope −10 points per run); score 100, 87.5, 75, 87.5 (−5).
HALF_SCORED = ["", "q4", "q3 q4", "q4"]


def _replies(half: str) -> str:
    return (
        "{"
        + ", ".join(
            f'q{i}: "{"ok" if f"q{i}" in half.split() else "ok fine"}"' for i in range(1, 5)
        )
        + "}"
    )


def _run(directory: Path, name: str, half: str, *options: str) -> str:
    write(directory / f"{name}.eval.yaml", SUITE.format(name=name, replies=_replies(half)))
    done = assay("run", f"{name}.eval.yaml", "--json", *options, cwd=directory)
    assert done.returncode in (0, 1), done.stderr
    return str(json.loads(done.stdout)["id"])


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], str]:
    """Four runs of `demo` on target `fake`, then one on `alt`, then an interrupted run of
    `demo` (imported) that the trend must leave out, and one run of `solo`; (dir, the four
    ids, the `alt` run's id)."""
    directory = tmp_path_factory.mktemp("trend")
    ids = [_run(directory, "demo", half) for half in HALF_SCORED]
    alt = _run(directory, "demo", "", "--target", "alt")
    exported = assay("runs", "export", ids[0], cwd=directory).stdout.splitlines()
    header = json.loads(exported[0])
    header["run"].update(
        id="20991231T000000-aaaaaa", status="interrupted", started_at="2099-12-31T00:00:00+00:00"
    )
    write(directory / "interrupted.jsonl", "\n".join([json.dumps(header), *exported[1:]]) + "\n")
    assert assay("runs", "import", "interrupted.jsonl", cwd=directory).returncode == 0
    _run(directory, "solo", "")
    return directory, ids, alt


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


def test_the_table_the_slopes_and_the_reading(stored: tuple[Path, list[str], str]) -> None:
    directory, ids, _ = stored
    done = assay("runs", "trend", "demo", "--target", "fake", cwd=directory)
    assert (done.returncode, done.stderr) == (0, "")
    lines = _lines(done.stdout)
    assert lines[:2] == [
        "demo against target 'fake': 4 completed runs, oldest first",
        "run                     started              cases  pass rate   score  verdict",
    ]
    rows = [line.split() for line in lines[2:6]]
    assert [row[0] for row in rows] == ids
    assert [row[3:] for row in rows] == [
        ["4", "100.0%", "100.0%", "passed"],
        ["4", "75.0%", "87.5%", "failed"],
        ["4", "50.0%", "75.0%", "failed"],
        ["4", "75.0%", "87.5%", "failed"],
    ]
    assert lines[6:] == [
        "slope       pass rate -10.00 pt/run   mean score -5.00 pt/run   (least squares)",
        "reading     pass rate falling 10.0 points per run over 4 runs; "
        "mean score falling 5.0 points per run",
    ]


def test_last_keeps_the_newest_runs(stored: tuple[Path, list[str], str]) -> None:
    directory, ids, _ = stored
    done = assay("runs", "trend", "demo", "--target", "fake", "--last", "2", cwd=directory)
    lines = _lines(done.stdout)
    assert [line.split()[0] for line in lines[2:4]] == ids[2:]
    assert lines[-1] == (
        "reading     pass rate rising 25.0 points per run over 2 runs; "
        "mean score rising 12.5 points per run"
    )


def test_runs_of_several_targets_are_pointed_out(stored: tuple[Path, list[str], str]) -> None:
    directory, ids, alt = stored
    done = assay("runs", "trend", "demo", cwd=directory)
    lines = _lines(done.stdout)
    assert lines[0] == "demo: 5 completed runs, oldest first"
    assert [line.split()[0] for line in lines[2:7]] == [*ids, alt]
    assert lines[7] == (
        "note        the runs are against 2 targets (alt, fake): pass --target to follow one"
    )


def test_json(stored: tuple[Path, list[str], str]) -> None:
    directory, ids, _ = stored
    done = assay("runs", "trend", "demo", "--target", "fake", "--json", cwd=directory)
    trend = json.loads(done.stdout)
    assert {k: v for k, v in trend.items() if k != "runs"} == {
        "suite": "demo",
        "target": "fake",
        "pass_rate_pct_per_run": -10.0,
        "score_pct_per_run": -5.0,
    }
    assert [
        (r["run_id"], r["target"], r["cases"], r["pass_rate_pct"], r["score_pct"], r["passed"])
        for r in trend["runs"]
    ] == [
        (ids[0], "fake", 4, 100.0, 100.0, True),
        (ids[1], "fake", 4, 75.0, 87.5, False),
        (ids[2], "fake", 4, 50.0, 75.0, False),
        (ids[3], "fake", 4, 75.0, 87.5, False),
    ]
    assert trend["runs"][0]["started_at"] < trend["runs"][3]["started_at"]


def test_one_run_has_no_slope(stored: tuple[Path, list[str], str]) -> None:
    directory, _, _ = stored
    done = assay("runs", "trend", "solo", cwd=directory)
    lines = _lines(done.stdout)
    assert lines[0] == "solo: 1 completed run, oldest first"
    assert len(lines) == 4
    assert lines[-1] == "slope       a slope needs at least two runs"
    as_json = json.loads(assay("runs", "trend", "solo", "--json", cwd=directory).stdout)
    assert (as_json["pass_rate_pct_per_run"], as_json["score_pct_per_run"]) == (None, None)


def test_a_suite_without_completed_runs(stored: tuple[Path, list[str], str]) -> None:
    directory, _, _ = stored
    done = assay("runs", "trend", "nope", cwd=directory)
    assert (done.returncode, done.stdout) == (0, "no completed runs of suite 'nope'\n")
    other = assay("runs", "trend", "demo", "--target", "gone", cwd=directory)
    assert other.stdout == "no completed runs of suite 'demo' against target 'gone'\n"


def test_last_must_be_positive(stored: tuple[Path, list[str], str]) -> None:
    directory, _, _ = stored
    done = assay("runs", "trend", "demo", "--last", "0", cwd=directory)
    assert done.returncode == 2
    assert "Invalid value for '--last'" in done.stderr and "Traceback" not in done.stderr
