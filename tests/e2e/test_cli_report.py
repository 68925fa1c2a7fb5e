"""Reports from the real CLI: `assay run --report`, `assay report RUN`, and the GitHub Actions
job summary."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema

from tests.conftest import write
from tests.e2e._cli import assay, assay_env

SCHEMA = xmlschema.XMLSchema(Path(__file__).parents[1] / "report" / "junit.xsd")

SUITE = """\
name: {name}
target: {{type: fake, responses: {{q1: "ok", q2: "{second}"}}}}
assertions: [{{type: contains, value: ok}}]
tests:
  - {{id: a, input: q1}}
  - {{id: b, input: q2}}
"""


def _env(**extra: str) -> dict[str, str]:
    env = assay_env(**extra)
    if "GITHUB_STEP_SUMMARY" not in extra:
        env.pop("GITHUB_STEP_SUMMARY", None)  # the tests' own CI must not get their reports
    return env


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A directory where one `assay run` of two suites (alpha fails, beta passes) wrote all
    four reports and the job summary; returns it and the two run ids."""
    directory = tmp_path_factory.mktemp("reports")
    write(directory / "alpha.eval.yaml", SUITE.format(name="alpha", second="no </details> |"))
    write(directory / "beta.eval.yaml", SUITE.format(name="beta", second="ok too"))
    write(directory / "summary.md", "earlier step\n")
    done = assay(
        "run",
        "alpha.eval.yaml",
        "beta.eval.yaml",
        "--report",
        "md:out/report.md",
        "--report",
        "junit:out/report.xml",
        "--report",
        "json:out/report.json",
        "--report",
        "html:out/report.html",
        "--json",
        cwd=directory,
        env=_env(GITHUB_STEP_SUMMARY=str(directory / "summary.md")),
    )
    assert done.returncode == 1, done.stderr  # alpha's case b fails: reports are still written
    assert "wrote the junit report to out/report.xml" in done.stderr
    ids = [run["id"] for run in json.loads(done.stdout)]
    return directory, ids


def test_run_writes_every_report_of_every_suite(reported: tuple[Path, list[str]]) -> None:
    directory, (alpha, beta) = reported
    markdown = (directory / "out" / "report.md").read_text(encoding="utf-8")
    assert markdown.startswith("## ❌ FAILED: alpha → fake\n")
    assert "\n## ✅ PASSED: beta → fake\n" in markdown
    assert "#### ❌ `b`: fail, score 0.00 (threshold 0.80)" in markdown
    assert "| no &lt;/details&gt; \\| |" in markdown  # escaped in a table cell
    assert "```text\nno </details> |\n```" in markdown  # verbatim in a code block
    junit = (directory / "out" / "report.xml").read_text(encoding="utf-8")
    SCHEMA.validate(junit)
    suites = ET.fromstring(junit).findall("testsuite")
    assert [(s.get("name"), s.get("id"), s.get("failures")) for s in suites] == [
        ("alpha.fake", alpha, "1"),
        ("beta.fake", beta, "0"),
    ]
    documents = json.loads((directory / "out" / "report.json").read_text(encoding="utf-8"))
    assert [d["id"] for d in documents] == [alpha, beta]
    assert [c["case_id"] for c in documents[0]["results"]] == ["a", "b"]
    page = (directory / "out" / "report.html").read_text(encoding="utf-8")
    blocks = re.findall(r'<script type="application/json" class="assay-run">(.*?)</script>', page)
    assert [json.loads(block)["run"]["id"] for block in blocks] == [alpha, beta]
    assert "no \\u003c/details> |" in blocks[0]  # the case output, escaped in the data block


def test_report_renders_stored_runs_the_same(reported: tuple[Path, list[str]]) -> None:
    directory, (alpha, beta) = reported
    env = _env()
    for fmt, name in (
        ("md", "report.md"),
        ("junit", "report.xml"),
        ("json", "report.json"),
        ("html", "report.html"),
    ):
        shown = assay("report", alpha, beta[:-2], "--format", fmt, cwd=directory, env=env)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout == (directory / "out" / name).read_text(encoding="utf-8"), fmt
    single = assay("report", alpha, "--format", "json", cwd=directory, env=env)
    show = assay("runs", "show", alpha, "--json", cwd=directory, env=env)
    assert single.stdout == show.stdout
    # `latest` and `latest~N` name runs as in `assay compare` (beta ran last).
    named = assay("report", "latest~1", "latest", "--format", "json", cwd=directory, env=env)
    assert [d["id"] for d in json.loads(named.stdout)] == [alpha, beta]


def test_report_writes_a_file_with_o(reported: tuple[Path, list[str]]) -> None:
    directory, (alpha, _) = reported
    done = assay("report", alpha, "-f", "junit", "-o", "new/alpha.xml", cwd=directory, env=_env())
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr == "wrote the junit report to new/alpha.xml\n"
    SCHEMA.validate(str(directory / "new" / "alpha.xml"))
    write(directory / "blocker", "a file where a directory should be\n")
    blocked = assay("report", alpha, "-o", "blocker/alpha.md", cwd=directory, env=_env())
    assert (blocked.returncode, blocked.stderr) == (
        2,
        "error: could not write blocker/alpha.md: File exists: blocker\n",
    )


def test_the_job_summary_gets_the_markdown_appended(reported: tuple[Path, list[str]]) -> None:
    directory, (alpha, _) = reported
    summary = directory / "summary.md"
    markdown = (directory / "out" / "report.md").read_text(encoding="utf-8")
    assert summary.read_text(encoding="utf-8") == "earlier step\n" + markdown
    env = _env(GITHUB_STEP_SUMMARY=str(summary))
    again = assay("report", alpha, "--format", "md", cwd=directory, env=env)
    assert again.returncode == 0
    assert summary.read_text(encoding="utf-8") == "earlier step\n" + markdown + again.stdout
    junit = assay("report", alpha, "--format", "junit", cwd=directory, env=env)
    assert junit.returncode == 0
    assert summary.read_text(encoding="utf-8").endswith(again.stdout)  # md only


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("report", "x", "--format", "pdf"),
            "error: --format: unknown report format 'pdf'; use one of md, junit, json, html\n",
        ),
        (
            ("run", "s.eval.yaml", "--report", "xml:r.xml"),
            "error: --report xml:r.xml: unknown report format 'xml'; "
            "use one of md, junit, json, html\n",
        ),
        (
            ("run", "s.eval.yaml", "--report", "r.md"),
            "error: --report r.md: give FORMAT:PATH (FORMAT one of md, junit, json, html), "
            "e.g. --report junit:reports/assay.xml\n",
        ),
        (
            ("run", "s.eval.yaml", "--report", "md:r.md", "--report", "json:./r.md"),
            "error: --report json:./r.md: ./r.md is already the md report's file\n",
        ),
    ],
)
def test_bad_report_requests_stop_before_anything_runs(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    write(tmp_path / "s.eval.yaml", SUITE.format(name="s", second="ok"))
    done = assay(*args, cwd=tmp_path, env=_env())
    assert (done.returncode, done.stderr) == (2, message)
    assert not (tmp_path / ".assay").exists()  # no run was started


def test_a_report_that_cannot_be_written_keeps_the_run(tmp_path: Path) -> None:
    write(tmp_path / "s.eval.yaml", SUITE.format(name="s", second="ok"))
    write(tmp_path / "blocker", "a file where a directory should be\n")
    done = assay(
        "run",
        "s.eval.yaml",
        "--report",
        "md:blocker/report.md",
        "--report",
        "junit:report.xml",
        cwd=tmp_path,
        env=_env(),
    )
    assert done.returncode == 2
    listed = json.loads(assay("runs", "list", "--json", cwd=tmp_path, env=_env()).stdout)
    assert [r["status"] for r in listed] == ["completed"]
    run_id = listed[0]["id"]
    assert (
        f"error: could not write the md report to blocker/report.md: File exists: blocker. "
        f"The runs are stored; write it again with "
        f"`assay report {run_id} --format md -o blocker/report.md`\n"
    ) in done.stderr
    SCHEMA.validate(str(tmp_path / "report.xml"))  # the other report is still written
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == [".assay", "blocker", "report.xml", "s.eval.yaml"]  # no partial file


def test_repeated_cases_are_a_testcase_per_sample(tmp_path: Path) -> None:
    write(tmp_path / "s.eval.yaml", SUITE.format(name="s", second="no"))
    done = assay("run", "s.eval.yaml", "--repeat", "2", "--report", "junit:r.xml", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    junit = (tmp_path / "r.xml").read_text(encoding="utf-8")
    SCHEMA.validate(junit)
    cases = ET.fromstring(junit).findall("testsuite/testcase")
    assert [(c.get("name"), c.find("failure") is not None) for c in cases] == [
        ("a[sample 0]", False),
        ("a[sample 1]", False),
        ("b[sample 0]", True),
        ("b[sample 1]", True),
    ]
