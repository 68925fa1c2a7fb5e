"""`assay review` and `assay calibrate` through the real console script (issue 28 items 1–2):
a judged run reviewed case by case, labels exported and imported into another store, the
agreement in JSON and as a CI gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from playwright.sync_api import expect

from tests._browser import screenshot_path
from tests.conftest import write
from tests.e2e._cli import assay

if TYPE_CHECKING:
    from playwright.sync_api import Page

SUITE = """\
name: judged
target: {type: fake, responses: {a: "yes", b: "yes", c: "no", d: "no"}}
judge: {provider: fake, model: fake-judge}
tests:
"""
CASE = """\
  - id: {id}
    input: {id}
    metadata: {{fake_judge: {{score: {score}, reasoning: r}}}}
    assertions: [{{type: llm-grader, name: helpful, prompt: "Is it helpful?"}}]
"""


def _run(directory: Path) -> str:
    cases = "".join(CASE.format(id=i, score=s) for i, s in zip("abcd", (1, 1, 0, 0), strict=True))
    write(directory / "s.eval.yaml", SUITE + cases)
    done = assay("run", "s.eval.yaml", "--json", cwd=directory)
    assert done.returncode == 1, done.stderr  # c and d fail
    return str(json.loads(done.stdout)["id"])


def test_i28_1_review_cases_export_and_import_the_labels(tmp_path: Path) -> None:
    run_id = _run(tmp_path)
    done = assay("review", run_id[-6:], "b", "--verdict", "fail", "--note", "wrong", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"reviewed case 'b' of run {run_id}: fail (the machine said pass)\n"
    again = assay("review", "latest", "b", "--verdict", "fail", "--reviewer", "ana", cwd=tmp_path)
    assert "replaced the review of" in again.stdout
    assay("review", "latest", "c", "--verdict", "fail", cwd=tmp_path)
    shown = assay("runs", "show", "latest", cwd=tmp_path)
    assert (
        "reviewed 2 of 4 cases: 0 passed by people, the machine agreed on 1; reviewed pass rate "
        "25.0%" in " ".join(shown.stdout.split())
    )
    report = assay("report", "latest", "--format", "md", cwd=tmp_path)
    assert (
        "**Human review:** 2 of 4 cases reviewed, 0 passed by people, the machine agreed on 1; "
        "reviewed pass rate 25.0% (reviewed cases by the person's verdict)." in report.stdout
    )
    exported = assay("review", "export", "latest", "-o", "labels.jsonl", cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    lines = [json.loads(x) for x in (tmp_path / "labels.jsonl").read_text().splitlines()]
    assert sorted(lines, key=lambda label: label["case_id"]) == [  # in the run's case order
        {"run_id": run_id, "case_id": "b", "verdict": "fail", "note": "", "reviewer": "ana"},
        {"run_id": run_id, "case_id": "c", "verdict": "fail", "note": ""},
    ]
    # Into another store holding the same run.
    other = tmp_path / "other.db"
    assay("runs", "export", run_id, "-o", "run.json", cwd=tmp_path)
    assert assay("runs", "import", "run.json", "--db", str(other), cwd=tmp_path).returncode == 0
    imported = assay("review", "import", "labels.jsonl", "--db", str(other), cwd=tmp_path)
    assert imported.stdout == "recorded 2 reviews from labels.jsonl\n", imported.stderr
    assert (
        "reviewed 2 of 4" in assay("runs", "show", run_id, "--db", str(other), cwd=tmp_path).stdout
    )


def test_i28_1_bad_labels_and_unknown_cases_exit_2_with_the_line(tmp_path: Path) -> None:
    run_id = _run(tmp_path)
    write(
        tmp_path / "labels.jsonl",
        json.dumps({"run_id": run_id, "case_id": "a", "verdict": "pass"})
        + "\n"
        + json.dumps({"run_id": run_id, "case_id": "zz", "verdict": "pass"})
        + "\n",
    )
    done = assay("review", "import", "labels.jsonl", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("error: labels.jsonl:2: run ")
    assert "has no" in done.stderr and "'zz'" in done.stderr
    assert "Traceback" not in done.stderr
    listed = assay("review", "export", run_id, cwd=tmp_path)
    assert listed.stdout == ""  # the good first line was not recorded either
    write(tmp_path / "bad.jsonl", '{"run_id": "x", "case_id": "y", "verdict": "maybe"}\n')
    bad = assay("review", "import", "bad.jsonl", cwd=tmp_path)
    assert bad.returncode == 2
    assert "bad.jsonl:1: not a review label (verdict: Input should be 'pass' or 'fail')" in (
        bad.stderr
    )
    wrong = assay("review", run_id, "a", "--verdict", "maybe", cwd=tmp_path)
    assert wrong.returncode == 2


def test_i28_2_calibrate_reports_the_agreement_and_gates_on_kappa(tmp_path: Path) -> None:
    run_id = _run(tmp_path)
    none = assay("calibrate", run_id, cwd=tmp_path)
    assert none.returncode == 2
    assert "no reviewed cases" in none.stderr
    # machine (judge): a pass, b pass, c fail, d fail; people: a pass, b fail, c fail, d fail.
    for case, verdict in (("a", "pass"), ("b", "fail"), ("c", "fail"), ("d", "fail")):
        assay("review", run_id, case, "--verdict", verdict, cwd=tmp_path)
    done = assay("calibrate", run_id, "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # p_o = 3/4; p_e = (2·1 + 2·3)/16 = 0.5; κ = 0.5; SE = √(0.1875/(4·0.25)) = 0.433013.
    expected = {
        "n": 4,
        "agreement": 0.75,
        "cohen_kappa": 0.5,
        "kappa_ci95": [-0.348689, 1.0],
        "confusion": {"pass": {"pass": 1, "fail": 1}, "fail": {"pass": 0, "fail": 2}},
        "false_pass_rate": 0.333333,
    }
    assert json.loads(done.stdout) == {"case": expected, "graders": {"helpful": expected}}
    table = assay("calibrate", run_id, "--grader", "helpful", cwd=tmp_path)
    assert "helpful" in table.stdout and "0.500" in table.stdout
    gate = assay("calibrate", run_id, "--min-kappa", "0.6", cwd=tmp_path)
    assert gate.returncode == 1
    assert gate.stderr == "κ 0.500 of the case verdict is below --min-kappa 0.6\n"
    assert assay("calibrate", run_id, "--min-kappa", "0.4", cwd=tmp_path).returncode == 0
    unknown = assay("calibrate", run_id, "--grader", "nope", cwd=tmp_path)
    assert unknown.returncode == 2


def test_i28_1_the_html_report_shows_the_reviews_beside_the_machine(
    tmp_path: Path, page: Page
) -> None:
    run_id = _run(tmp_path)
    assay("review", run_id, "b", "--verdict", "fail", "--note", "wrong", cwd=tmp_path)
    assay("review", run_id, "c", "--verdict", "pass", cwd=tmp_path)
    done = assay("report", run_id, "--format", "html", "-o", "r.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    page.goto((tmp_path / "r.html").as_uri())
    page.wait_for_selector("tr.case-row")
    expect(page.locator(".review-summary .review-counts")).to_have_text(
        "reviewed 2 of 4 cases: 1 passed by people, the machine agreed on 0; reviewed pass rate "
        "50.0%"
    )
    marks = page.locator("tr.case-row .review-mark").evaluate_all(
        "nodes => nodes.map(n => n.closest('tr').dataset.caseId + ' ' + n.dataset.human)"
    )
    assert sorted(marks) == ["b fail", "c pass"]
    page.screenshot(path=screenshot_path("html-reviews"), full_page=True)
