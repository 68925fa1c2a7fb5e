"""`assay baseline pin / show / unpin` on a real SQLite store, as a user runs them."""

from __future__ import annotations

import json
import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.conftest import write
from tests.e2e._cli import assay

SUITE = """\
name: {name}
target: {{type: fake, responses: {{q1: "ok", q2: "{reply}"}}}}
assertions: [{{type: contains, value: ok}}]
tests:
  - {{id: a, input: q1}}
  - {{id: b, input: q2}}
"""
PINNED_AT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00")


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A store with runs of `demo` (both cases pass), `demo` (one fails), then `other`."""
    directory = tmp_path_factory.mktemp("baseline")
    ids = []
    for name, reply in (("demo", "ok"), ("demo", "no"), ("other", "ok")):
        write(directory / f"{name}.eval.yaml", SUITE.format(name=name, reply=reply))
        done = assay("run", f"{name}.eval.yaml", "--json", cwd=directory)
        assert done.returncode in (0, 1), done.stderr
        ids.append(json.loads(done.stdout)["id"])
    return directory, ids


@pytest.fixture
def stored(seeded: tuple[Path, list[str]], tmp_path: Path) -> tuple[Path, list[str]]:
    """A copy of the seeded directory that a test may change; (dir, [demo1, demo2, other])."""
    directory, ids = seeded
    copy = tmp_path / "project"
    shutil.copytree(directory, copy)
    return copy, ids


def _db(directory: Path) -> Path:
    return (directory / ".assay" / "assay.db").resolve()


def test_pin_show_and_replace(stored: tuple[Path, list[str]]) -> None:
    directory, (first, second, _) = stored
    before = datetime.now(UTC)
    pinned = assay("baseline", "pin", "latest~1", cwd=directory)
    assert (pinned.returncode, pinned.stderr) == (0, "")
    assert pinned.stdout == f"pinned run {second} as the baseline of suite 'demo'\n"

    shown = json.loads(assay("baseline", "show", "demo", "--json", cwd=directory).stdout)
    assert list(shown) == ["suite", "run_id", "pinned_at", "run"]
    assert (shown["suite"], shown["run_id"], shown["run"]["id"]) == ("demo", second, second)
    assert shown["run"]["summary"]["cases_pass_rate_pct"] == 50.0
    assert PINNED_AT.fullmatch(shown["pinned_at"])
    at = datetime.fromisoformat(shown["pinned_at"])
    assert before - timedelta(seconds=1) <= at <= datetime.now(UTC)

    replaced = assay("baseline", "pin", first[:-2], cwd=directory)
    assert replaced.stdout == (
        f"pinned run {first} as the baseline of suite 'demo'\n"
        f"replaced run {second} (pinned {shown['pinned_at']})\n"
    )
    assert (
        json.loads(assay("baseline", "show", "demo", "--json", cwd=directory).stdout)["run_id"]
        == first
    )


def test_pinning_the_pinned_run_again_says_so(stored: tuple[Path, list[str]]) -> None:
    directory, (first, _, _) = stored
    assay("baseline", "pin", first, cwd=directory)
    was = json.loads(assay("baseline", "show", "demo", "--json", cwd=directory).stdout)
    again = assay("baseline", "pin", first, cwd=directory)
    assert again.stdout == (
        f"pinned run {first} as the baseline of suite 'demo'\n"
        f"it already was (pinned {was['pinned_at']}); pinned again now\n"
    )


def test_show_lists_every_baseline(stored: tuple[Path, list[str]]) -> None:
    directory, (first, _, other) = stored
    assert assay("baseline", "pin", "latest", cwd=directory).returncode == 0
    assert assay("baseline", "pin", first, cwd=directory).returncode == 0
    listed = json.loads(assay("baseline", "show", "--json", cwd=directory).stdout)
    assert [(b["suite"], b["run_id"]) for b in listed] == [("demo", first), ("other", other)]
    table = assay("baseline", "show", cwd=directory)
    assert table.returncode == 0
    lines = [line.rstrip() for line in table.stdout.splitlines()]
    assert lines[0] == (
        "suite  run                     target  pinned at            cases  pass rate   score"
    )
    demo, other_row = (line.split() for line in lines[1:])
    assert demo[:3] == ["demo", first, "fake"] and demo[5:] == ["2", "100.0%", "100.0%"]
    assert other_row[:3] == ["other", other, "fake"]
    assert f"{demo[3]}T{demo[4]}" == listed[0]["pinned_at"][:19]


def test_show_without_baselines(stored: tuple[Path, list[str]]) -> None:
    directory, _ = stored
    none = assay("baseline", "show", cwd=directory)
    assert none.stdout == "no baselines pinned (pin one with `assay baseline pin RUN`)\n"
    assert assay("baseline", "show", "--json", cwd=directory).stdout == "[]\n"
    missing = assay("baseline", "show", "demo", cwd=directory)
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr == (
        f"error: suite 'demo' has no pinned baseline in {_db(directory)}; "
        "pin one with `assay baseline pin RUN`\n"
    )


def test_unpin(stored: tuple[Path, list[str]]) -> None:
    directory, (first, _, _) = stored
    assay("baseline", "pin", first, cwd=directory)
    pinned_at = json.loads(assay("baseline", "show", "demo", "--json", cwd=directory).stdout)[
        "pinned_at"
    ]
    done = assay("baseline", "unpin", "demo", cwd=directory)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        f"unpinned run {first}, the baseline of suite 'demo' since {pinned_at}; "
        "suite 'demo' has no pinned baseline now\n"
    )
    assert assay("baseline", "show", "demo", cwd=directory).returncode == 2
    shown = assay("runs", "show", first, "--json", cwd=directory)
    assert shown.returncode == 0  # the run itself stays
    again = assay("baseline", "unpin", "demo", cwd=directory)
    assert (again.returncode, again.stdout) == (2, "")
    assert again.stderr == f"error: suite 'demo' has no pinned baseline in {_db(directory)}\n"


def test_suite_makes_latest_the_newest_run_of_that_suite(stored: tuple[Path, list[str]]) -> None:
    directory, (_, second, other) = stored
    done = assay("baseline", "pin", "latest", "--suite", "demo", cwd=directory)
    assert done.stdout == f"pinned run {second} as the baseline of suite 'demo'\n"
    mismatch = assay("baseline", "pin", other, "--suite", "demo", cwd=directory)
    assert (mismatch.returncode, mismatch.stdout) == (2, "")
    assert mismatch.stderr == (
        f"error: run '{other}' belongs to suite 'other', not 'demo'; "
        "a baseline must be a run of the same suite\n"
    )
    empty = assay("baseline", "pin", "latest", "--suite", "nope", cwd=directory)
    assert empty.returncode == 2
    assert empty.stderr == (
        f"error: 'latest' names no run: {_db(directory)} holds 0 runs of suite 'nope'. "
        "Store runs with `assay run`, or give a run id.\n"
    )


def test_only_a_completed_stored_run_can_be_pinned(stored: tuple[Path, list[str]]) -> None:
    directory, (first, _, _) = stored
    exported = assay("runs", "export", first, cwd=directory).stdout.splitlines()
    header = json.loads(exported[0])
    header["run"].update(id="20261123T000000-abcdef", status="interrupted")
    write(directory / "cut.jsonl", "\n".join([json.dumps(header), *exported[1:]]) + "\n")

    as_file = assay("baseline", "pin", "cut.jsonl", cwd=directory)
    assert (as_file.returncode, as_file.stdout) == (2, "")
    assert as_file.stderr == (
        "error: cut.jsonl: a baseline must be a stored run; store the file first with "
        "`assay runs import cut.jsonl`, then pin its run id\n"
    )
    assert assay("runs", "import", "cut.jsonl", cwd=directory).returncode == 0
    cut = assay("baseline", "pin", "20261123T000000-abcdef", cwd=directory)
    assert (cut.returncode, cut.stdout) == (2, "")
    assert cut.stderr == (
        "error: run '20261123T000000-abcdef' is interrupted, and only a completed run can be "
        "a baseline; finish it first (assay run --resume 20261123T000000-abcdef) or pin "
        "another run\n"
    )
    unknown = assay("baseline", "pin", "nope", cwd=directory)
    assert unknown.returncode == 2
    assert unknown.stderr == f"error: run 'nope' not found in {_db(directory)}\n"


def test_db_names_another_store(stored: tuple[Path, list[str]], tmp_path: Path) -> None:
    directory, (first, _, _) = stored
    elsewhere = tmp_path / "elsewhere.db"
    assay("runs", "export", first, "-o", "first.jsonl", cwd=directory)
    assert (
        assay("runs", "import", "first.jsonl", "--db", str(elsewhere), cwd=directory).returncode
        == 0
    )
    pinned = assay("baseline", "pin", "latest", "--db", str(elsewhere), cwd=directory)
    assert pinned.stdout == f"pinned run {first} as the baseline of suite 'demo'\n"
    listed = json.loads(
        assay("baseline", "show", "--json", "--db", str(elsewhere), cwd=directory).stdout
    )
    assert [b["run_id"] for b in listed] == [first]
    assert assay("baseline", "show", "--json", cwd=directory).stdout == "[]\n"
    assert assay("baseline", "unpin", "demo", "--db", str(elsewhere), cwd=directory).returncode == 0
