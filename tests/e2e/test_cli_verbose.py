"""`assay run --verbose` and `assay runs show --verbose`: every case's grader results under
the case table, as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import write
from tests.e2e._cli import assay

SUITE = """\
name: verbose
target: {type: fake, responses: {q1: "ok [bold]", q2: "no"}}
assertions:
  - {type: contains, value: ok, required: true}
  - {type: contains, value: "[bold]", weight: 2}
tests:
  - {id: a, input: q1}
  - {id: b, input: q2}
"""

BREAKDOWN = (
    "Graders\n"
    "  a  pass  1.00\n"
    "    grader    type      score  verdict  weight  required  misses\n"
    "    contains  contains   1.00  pass          1  yes\n"
    "    contains  contains   1.00  pass          2\n"
    "  b  fail  0.00\n"
    "    grader    type      score  verdict  weight  required  misses\n"
    "    contains  contains   0.00  fail          1  yes       does not contain 'ok'\n"
    "    contains  contains   0.00  fail          2            does not contain '[bold]'\n"
)


def _breakdown(stdout: str) -> str:
    lines = [line.rstrip() for line in stdout.splitlines()]
    text = "\n".join(lines) + "\n"
    return text[text.index("Graders\n") : text.index("verbose → fake")]


def _without_breakdown(stdout: str) -> str:
    lines = stdout.splitlines(keepends=True)
    start = lines.index("Graders\n")
    end = next(i for i, line in enumerate(lines) if line.startswith("verbose → fake"))
    return "".join(lines[:start] + lines[end:])


def test_run_and_show_list_every_grader_result(tmp_path: Path) -> None:
    write(tmp_path / "s.eval.yaml", SUITE)
    plain = assay("run", "s.eval.yaml", cwd=tmp_path)
    assert plain.returncode == 1, plain.stderr
    assert "Graders" not in plain.stdout
    verbose = assay("run", "s.eval.yaml", "--verbose", cwd=tmp_path)
    assert verbose.returncode == 1, verbose.stderr
    assert _breakdown(verbose.stdout) == BREAKDOWN  # "[bold]" printed as written
    run_id = json.loads(assay("runs", "list", "--json", cwd=tmp_path).stdout)[0]["id"]
    shown = assay("runs", "show", run_id, "-v", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert _breakdown(shown.stdout) == BREAKDOWN
    # Without the flag, `runs show` prints the same summary, the breakdown left out.
    quiet = assay("runs", "show", run_id, cwd=tmp_path)
    assert quiet.returncode == 0, quiet.stderr
    assert _without_breakdown(shown.stdout) == quiet.stdout
    assert shown.stdout in verbose.stdout  # `run` adds only where it stored the run


def test_the_cases_table_prints_markup_in_misses_as_written(tmp_path: Path) -> None:
    write(tmp_path / "s.eval.yaml", SUITE)
    done = assay("run", "s.eval.yaml", cwd=tmp_path)
    assert "does not contain '[bold]'" in done.stdout
