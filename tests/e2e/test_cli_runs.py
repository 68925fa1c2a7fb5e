"""`assay runs`: list, show, export, import and delete stored runs, as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from assay.results import RunResult
from assay.store import RunFinish, SQLiteStore
from tests.conftest import write
from tests.e2e._cli import ASSAY, assay, assay_env

SUITE = """\
name: {name}
target: {{type: fake, responses: {{q1: "ok", q2: "no"}}}}
assertions: [{{type: contains, value: ok}}]
tests:
  - {{id: a, input: q1}}
  - {{id: b, input: q2}}
"""


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A directory whose store holds a run of suite `alpha` and then one of `beta`."""
    directory = tmp_path_factory.mktemp("runs")
    ids = []
    for name in ("alpha", "beta"):
        write(directory / f"{name}.eval.yaml", SUITE.format(name=name))
        done = assay("run", f"{name}.eval.yaml", "--json", cwd=directory)
        assert done.returncode == 1, done.stderr  # b fails
        ids.append(json.loads(done.stdout)["id"])
    return directory, ids


def test_list_is_newest_first_and_filters(stored: tuple[Path, list[str]]) -> None:
    directory, (alpha, beta) = stored
    listed = assay("runs", "list", "--json", cwd=directory)
    assert [r["id"] for r in json.loads(listed.stdout)] == [beta, alpha]
    only = assay("runs", "list", "--suite", "alpha", "--json", cwd=directory)
    assert [r["id"] for r in json.loads(only.stdout)] == [alpha]
    table = assay("runs", "list", cwd=directory)
    assert table.returncode == 0
    assert table.stdout.index(beta) < table.stdout.index(alpha)
    assert "50.0%" in table.stdout  # pass rate of 1 of 2 cases
    none = assay("runs", "list", "--status", "running", cwd=directory)
    assert none.stdout.strip() == "no runs match"


def test_i21_8_list_tells_completed_but_not_passed_from_aborted(tmp_path: Path) -> None:
    from assay.results import RunConfigSnapshot, RunResult, RunSummary
    from assay.store import SQLiteStore

    config = RunConfigSnapshot(
        threshold=0.8, borderline=None, metrics_pass_threshold=0.8, cases_pass_threshold=1.0
    )
    ended = {
        "20260101T000000-aaaa01": ("completed", True),
        "20260102T000000-bbbb02": ("completed", False),
        "20260103T000000-cccc03": ("failed", False),
        "20260104T000000-dddd04": ("interrupted", False),
    }
    with SQLiteStore(tmp_path / "runs.db") as store:
        for run_id, (status, passed) in ended.items():
            started = f"2026-01-0{run_id[7]}T00:00:00.000+00:00"
            run = RunResult(
                id=run_id,
                suite="s",
                target="t",
                status="running",
                started_at=started,
                config=config,
                summary=RunSummary(),
            )
            store.create_run(run, {})
            store.finish_run(
                run_id,
                RunFinish(
                    status=status,  # type: ignore[arg-type]
                    finished_at=started,
                    summary=RunSummary(total=1, passed=passed),
                    duration_ms=1.0,
                ),
            )
    db = ("--db", str(tmp_path / "runs.db"))

    def listed(*options: str) -> list[tuple[str, str, bool | None]]:
        done = assay("runs", "list", "--json", *options, *db, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return [(r["id"][-6:], r["status"], r["passed"]) for r in json.loads(done.stdout)]

    assert listed() == [
        ("dddd04", "interrupted", None),
        ("cccc03", "failed", None),
        ("bbbb02", "completed", False),
        ("aaaa01", "completed", True),
    ]
    assert listed("--status", "not-passed") == [("bbbb02", "completed", False)]
    assert listed("--status", "passed") == [("aaaa01", "completed", True)]
    assert listed("--status", "failed") == [("cccc03", "failed", None)]
    table = assay("runs", "list", *db, cwd=tmp_path).stdout.splitlines()
    rows = {line.split()[0][-6:]: line.split()[3:5] for line in table[1:]}
    assert rows == {
        "dddd04": ["interrupted", "—"],
        "cccc03": ["failed", "—"],
        "bbbb02": ["completed", "no"],
        "aaaa01": ["completed", "yes"],
    }
    # The random part of an id names the run too (issue 21 item 12).
    shown = assay("runs", "show", "bbbb", "--json", *db, cwd=tmp_path)
    assert json.loads(shown.stdout)["id"] == "20260102T000000-bbbb02"


def test_show_accepts_a_prefix_and_prints_the_run_result(stored: tuple[Path, list[str]]) -> None:
    directory, (alpha, _) = stored
    shown = assay("runs", "show", alpha[:-2], "--json", cwd=directory)
    document = json.loads(shown.stdout)
    assert document["id"] == alpha
    assert [c["case_id"] for c in document["results"]] == ["a", "b"]
    terminal = assay("runs", "show", alpha, cwd=directory)
    assert terminal.returncode == 0 and "alpha" in terminal.stdout
    unknown = assay("runs", "show", "nope", cwd=directory)
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    latest = assay("runs", "show", "latest~1", "--json", cwd=directory)
    assert json.loads(latest.stdout)["id"] == alpha


def test_export_then_import_round_trips_exactly(
    stored: tuple[Path, list[str]], tmp_path: Path
) -> None:
    directory, (alpha, _) = stored
    exported = directory / "alpha.jsonl"
    assert assay("runs", "export", alpha, "-o", str(exported), cwd=directory).returncode == 0
    other = tmp_path / "other.db"
    imported = assay("runs", "import", str(exported), "--db", str(other), cwd=directory)
    assert imported.returncode == 0, imported.stderr
    assert f"imported run {alpha} (2 cases)" in imported.stdout
    again = assay("runs", "export", alpha, "--db", str(other), cwd=directory)
    assert again.stdout == exported.read_text(encoding="utf-8")
    header = json.loads(exported.read_text(encoding="utf-8").splitlines()[0])
    assert header["assay_export"] == 1 and header["snapshot"]["suite"]["name"] == "alpha"
    twice = assay("runs", "import", str(exported), "--db", str(other), cwd=directory)
    assert twice.returncode == 2 and "already exists" in twice.stderr


def test_import_rejects_a_file_that_is_not_an_export(tmp_path: Path) -> None:
    bad = write(
        tmp_path / "bad.jsonl", '{"assay_export": 1, "run": {}, "snapshot": {}}\n{"x": 1}\n'
    )
    done = assay("runs", "import", str(bad), "--db", str(tmp_path / "s.db"), cwd=tmp_path)
    assert done.returncode == 2
    # Reported in file order: the header's empty `run` comes before the bad case result.
    assert f"{bad}:1: the header's `run` is not a run: id: Field required" in done.stderr


def test_delete_needs_yes_without_a_terminal(tmp_path: Path) -> None:
    write(tmp_path / "gamma.eval.yaml", SUITE.format(name="gamma"))
    run_id = json.loads(assay("run", "gamma.eval.yaml", "--json", cwd=tmp_path).stdout)["id"]
    refused = assay("runs", "delete", run_id, cwd=tmp_path)
    assert refused.returncode == 2 and "pass --yes" in refused.stderr
    deleted = assay("runs", "delete", run_id, "--yes", cwd=tmp_path)
    assert deleted.returncode == 0 and f"deleted run {run_id}" in deleted.stdout
    assert json.loads(assay("runs", "list", "--json", cwd=tmp_path).stdout) == []


def _pinned_run(directory: Path) -> str:
    """A stored run of suite `gamma`, pinned as its baseline."""
    write(directory / "gamma.eval.yaml", SUITE.format(name="gamma"))
    run_id = str(json.loads(assay("run", "gamma.eval.yaml", "--json", cwd=directory).stdout)["id"])
    assert assay("baseline", "pin", run_id, cwd=directory).returncode == 0
    return run_id


def test_deleting_the_pinned_baseline_says_so(tmp_path: Path) -> None:
    run_id = _pinned_run(tmp_path)
    deleted = assay("runs", "delete", run_id, "--yes", cwd=tmp_path)
    assert (deleted.returncode, deleted.stderr) == (0, "")
    assert deleted.stdout == (
        f"deleted run {run_id}: it was the pinned baseline of suite 'gamma'; now none is pinned\n"
    )
    assert assay("baseline", "show", "--json", cwd=tmp_path).stdout == "[]\n"


@pytest.mark.parametrize(("answer", "code"), [("n", 130), ("y", 0)])
def test_the_prompt_names_the_pinned_baseline(tmp_path: Path, answer: str, code: int) -> None:
    run_id = _pinned_run(tmp_path)
    terminal, stdin = os.openpty()  # the prompt is only offered on a terminal
    try:
        with subprocess.Popen(
            [ASSAY, "runs", "delete", run_id],
            cwd=tmp_path,
            env=assay_env(),
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as process:
            os.close(stdin)
            os.write(terminal, f"{answer}\n".encode())
            out, err = process.communicate(timeout=60)
    finally:
        os.close(terminal)
    assert process.returncode == code, err
    prompt = f"delete run {run_id} (gamma, 2 cases), the pinned baseline of suite 'gamma'? [y/N]: "
    assert out.startswith(prompt)
    kept = json.loads(assay("baseline", "show", "--json", cwd=tmp_path).stdout)
    if answer == "n":
        assert [b["run_id"] for b in kept] == [run_id]
    else:
        deleted = f"deleted run {run_id}: it was the pinned baseline of suite 'gamma'; "
        assert out == f"{prompt}{deleted}now none is pinned\n"
        assert kept == []


def _export_lines(directory: Path, run_id: str) -> list[dict[str, object]]:
    exported = assay("runs", "export", run_id, cwd=directory)
    assert exported.returncode == 0, exported.stderr
    return [json.loads(line) for line in exported.stdout.splitlines()]


@pytest.mark.parametrize(
    ("score", "message"),
    [
        ("5.0", ":2 results[0].score: 5.0 is not a score: a number from 0 to 1"),
        ("-3.0", ":2 results[0].score: -3.0 is not a score"),
        ("NaN", ":2 results[0].score: nan is not a score"),
    ],
)
def test_i22_15_import_refuses_an_impossible_score_with_its_path(
    stored: tuple[Path, list[str]], tmp_path: Path, score: str, message: str
) -> None:
    directory, (alpha, _) = stored
    header, first, second = _export_lines(directory, alpha)
    lines = [json.dumps(header), json.dumps({**first, "score": 0.25}), json.dumps(second)]
    lines[1] = lines[1].replace('"score": 0.25', f'"score": {score}')
    bad = write(tmp_path / "bad.jsonl", "\n".join(lines) + "\n")
    done = assay("runs", "import", str(bad), "--db", str(tmp_path / "s.db"), cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert f"{bad}{message}" in done.stderr
    assert "Traceback" not in done.stderr


def test_i22_15_import_counts_the_summary_again(
    stored: tuple[Path, list[str]], tmp_path: Path
) -> None:
    directory, (alpha, _) = stored
    header, *cases = _export_lines(directory, alpha)
    run = dict(header["run"])  # type: ignore[call-overload]
    header["run"] = {**run, "summary": {"total": 50, "passed_count": 50, "passed": True}}
    forged = write(
        tmp_path / "forged.jsonl", "".join(json.dumps(x) + "\n" for x in (header, *cases))
    )
    db = str(tmp_path / "s.db")
    assert assay("runs", "import", str(forged), "--db", db, cwd=tmp_path).returncode == 0
    shown = json.loads(assay("runs", "show", alpha, "--json", "--db", db, cwd=tmp_path).stdout)
    summary = shown["summary"]
    assert (summary["total"], summary["passed_count"], summary["passed"]) == (2, 1, False)


def test_i22_13_deep_json_in_an_import_is_exit_2(tmp_path: Path) -> None:
    deep = "[" * 5_000 + "]" * 5_000
    bad = write(tmp_path / "deep.jsonl", f'{{"assay_export": 1, "snapshot": {deep}}}\n')
    done = assay("runs", "import", str(bad), "--db", str(tmp_path / "s.db"), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"{bad}:1: not JSON: nested too deeply" in done.stderr
    assert "Traceback" not in done.stderr


def test_i22_13_latest_further_back_than_the_runs_is_exit_2(
    stored: tuple[Path, list[str]],
) -> None:
    directory, _ = stored
    for ref in ("latest~99999999999999999999", "latest~" + "9" * 5000, "latest~2"):
        done = assay("runs", "show", ref, cwd=directory)
        assert done.returncode == 2, done.stderr
        assert "names no run:" in done.stderr and "holds 2 runs" in done.stderr
        assert "latest~1 is the oldest" in done.stderr
        assert "Traceback" not in done.stderr


def test_i22_14_delete_refuses_a_running_run_unless_forced(tmp_path: Path) -> None:
    write(tmp_path / "gamma.eval.yaml", SUITE.format(name="gamma"))
    run_id = json.loads(assay("run", "gamma.eval.yaml", "--json", cwd=tmp_path).stdout)["id"]
    header = _export_lines(tmp_path, run_id)[0]
    assert assay("runs", "delete", run_id, "--yes", cwd=tmp_path).returncode == 0
    # A run whose process died keeps the status `running`; build one in the store.
    with SQLiteStore(tmp_path / ".assay" / "assay.db") as store:
        run = RunResult.model_validate({**header["run"], "status": "running"})  # type: ignore[dict-item]
        store.create_run(run, {})
    refused = assay("runs", "delete", run_id, "--yes", cwd=tmp_path)
    assert refused.returncode == 2
    assert f"run {run_id} is running, so it was not deleted" in refused.stderr
    assert "pass --force" in refused.stderr and "Traceback" not in refused.stderr
    forced = assay("runs", "delete", run_id, "--yes", "--force", cwd=tmp_path)
    assert forced.returncode == 0 and f"deleted run {run_id}" in forced.stdout


def test_i21_12_an_invalid_since_is_a_usage_error(stored: tuple[Path, list[str]]) -> None:
    directory, (alpha, beta) = stored
    for option in ("--since", "--until"):
        done = assay("runs", "list", option, "yesterdayy", cwd=directory)
        assert done.returncode == 2
        assert f"{option} 'yesterdayy' is not a date: use ISO 8601, e.g. 2026-11-01" in done.stderr
        assert "Traceback" not in done.stderr
    future = assay("runs", "list", "--since", "2999-01-01T00:00+02:00", "--json", cwd=directory)
    assert json.loads(future.stdout) == []
    both = assay("runs", "list", "--since", "2000-01-01", "--json", cwd=directory)
    assert [r["id"] for r in json.loads(both.stdout)] == [beta, alpha]
