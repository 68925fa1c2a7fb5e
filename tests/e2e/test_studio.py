"""The studio in real headless Chromium, served by the real `assay serve` over runs stored by
the real `assay run`: every page, runs → case → compare, the settings round trip, a run that is
still in progress, and a hostile case output that must show as text. Screenshots go to the
test artifacts folder (tests/_browser.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml
from playwright.sync_api import expect

from assay.results import CaseResult, RunConfigSnapshot, RunResult, RunSummary, now_iso
from assay.store import open_store
from tests._browser import screenshot_path
from tests.conftest import write
from tests.e2e._cli import assay
from tests.e2e._serve import ready, serving

if TYPE_CHECKING:
    from playwright.sync_api import Page

HOSTILE = '<img src=x onerror="alert(1)"></script><script>alert(2)</script>'

SUITE = """\
name: support
target: {{type: fake, responses: {{q1: "refund in 30 days", q2: "{second}", q3: "{third}"}}}}
assertions: [{{type: contains, value: refund, name: mentions-refund}}]
tests:
  - {{id: refund-window, input: q1, tags: [billing]}}
  - {{id: refund-late, input: q2, tags: [billing]}}
  - {{id: hostile, input: q3}}
"""


class Studio:
    """A running `assay serve` and what it serves."""

    def __init__(self, url: str, directory: Path, base: str, head: str, running: str) -> None:
        self.url = url
        self.directory = directory
        self.base = base
        self.head = head
        self.running = running


def _seed(directory: Path) -> tuple[str, str]:
    runs = []
    for second, third in (("refund later", "refund ok"), ("no idea", HOSTILE.replace('"', "'"))):
        write(directory / "support.eval.yaml", SUITE.format(second=second, third=third))
        done = assay("run", "support.eval.yaml", "--json", cwd=directory)
        assert done.returncode in (0, 1), done.stderr
        runs.append(json.loads(done.stdout)["id"])
    return runs[0], runs[1]


def _running_run(directory: Path) -> str:
    """A run that is still in progress: created, one case stored, not finished."""
    run = RunResult(
        id="20261123T120000-live01",
        suite="live",
        target="fake",
        status="running",
        started_at=now_iso(),  # the newest run
        config=RunConfigSnapshot(
            threshold=0.8, borderline=None, metrics_pass_threshold=0.8, cases_pass_threshold=1.0
        ),
        summary=RunSummary(),
    )
    with open_store(directory / ".assay" / "assay.db") as store:
        store.create_run(run, {})
        store.add_case_results(run.id, [_case("first", 1.0)])
    return run.id


def _case(case_id: str, score: float) -> CaseResult:
    return CaseResult(
        case_id=case_id,
        score=score,
        verdict="pass" if score >= 0.8 else "fail",
        threshold=0.8,
        output=f"output of {case_id}",
    )


@pytest.fixture(scope="module")
def studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Studio]:
    directory = tmp_path_factory.mktemp("studio")
    base, head = _seed(directory)
    running = _running_run(directory)
    with serving(directory) as url, ready(url):
        yield Studio(url, directory, base, head, running)


def test_runs_page_lists_runs_with_a_trend_per_suite(studio: Studio, page: Page) -> None:
    page.goto(studio.url + "/")
    rows = page.locator("tr.run-row")
    expect(rows).to_have_count(3)
    assert rows.first.get_attribute("data-run-id") == studio.running  # newest first
    expect(page.locator(".trend")).to_have_count(1)  # completed runs only: one suite
    trend = page.locator('.trend[data-suite="support"]')
    assert trend.locator("circle").count() == 4  # two runs × pass rate and score
    assert trend.locator("line.threshold").count() == 1
    page.screenshot(path=screenshot_path("studio-runs"), full_page=True)


def test_click_through_runs_case_and_compare(studio: Studio, page: Page) -> None:
    page.goto(studio.url + "/")
    page.locator(f'tr.run-row[data-run-id="{studio.head}"] a').click()
    expect(page.locator("tr.case-row")).to_have_count(3)
    assert page.locator(".legend").inner_text().startswith("1 pass")
    page.screenshot(path=screenshot_path("studio-run"), full_page=True)
    # The table is sorted and filtered by the server.
    page.locator("input[name=verdict][value=pass]").uncheck()
    expect(page.locator("tr.case-row")).to_have_count(2)
    page.locator("input[name=verdict][value=pass]").check()
    page.locator("select[name=tag]").select_option("billing")
    expect(page.locator("tr.case-row")).to_have_count(2)
    page.locator("select[name=tag]").select_option("")
    page.locator("select[name=grader]").select_option("mentions-refund")
    expect(page.locator("tr.case-row")).to_have_count(2)  # the cases it did not pass
    page.locator("select[name=grader]").select_option("")
    page.locator("input[name=q]").fill("late")
    expect(page.locator("tr.case-row")).to_have_count(1)
    page.locator("tr.case-row").click()
    page.locator("text=open the case page").click()
    expect(page.locator("h1")).to_have_text("Case refund-late")
    assert "missing" in page.locator(".case-panel").inner_text() or "refund" in (
        page.locator(".case-panel").inner_text()
    )
    page.screenshot(path=screenshot_path("studio-case"), full_page=True)
    # Back to the runs list, pick both runs of the suite and compare them.
    page.goto(studio.url + "/")
    for run_id in (studio.base, studio.head):
        page.locator(f'input[name=select][value="{run_id}"]').check()
    page.locator("text=Compare selected").click()
    expect(page.locator(".compare-cases")).to_be_visible()
    assert page.url.endswith(f"/compare?base={studio.base}&head={studio.head}")
    assert page.locator(".badge").first.inner_text() == "REGRESSION"
    changed = page.locator("tr.compare-row")
    assert changed.evaluate_all(
        "rows => rows.map(r => r.dataset.caseId + ' ' + r.dataset.status)"
    ) == [
        "hostile regressed",
        "refund-late regressed",
    ]
    page.screenshot(path=screenshot_path("studio-compare"), full_page=True)
    page.locator('tr.compare-row[data-case-id="refund-late"] a').click()
    expect(page.locator("h1")).to_have_text("Case refund-late")


def test_settings_change_the_threshold_and_persist_it_as_threshold(
    studio: Studio, page: Page
) -> None:
    config = studio.directory / ".assay" / "config.yaml"
    config.write_text("studio:\n  pass_threshold: 0.7\n", encoding="utf-8")
    page.goto(studio.url + "/settings")
    field = page.locator("input[name=threshold]")
    expect(field).to_have_value("0.7")  # the deprecated key is read
    field.fill("0.85")
    page.locator("button[type=submit]").click()
    expect(page.locator(".status")).to_have_text("Saved: the studio threshold is 0.85.")
    assert yaml.safe_load(config.read_text(encoding="utf-8")) == {"studio": {"threshold": 0.85}}
    page.screenshot(path=screenshot_path("studio-settings"), full_page=True)
    page.reload()
    expect(field).to_have_value("0.85")
    # The runs page draws the new threshold on the trend.
    page.goto(studio.url + "/")
    expect(page.locator(".trend .legend")).to_contain_text("studio threshold 85.0%")


def test_a_run_in_progress_shows_results_as_they_are_stored(studio: Studio, page: Page) -> None:
    page.goto(f"{studio.url}/runs/{studio.running}")
    expect(page.locator("tr.case-row")).to_have_count(1)
    expect(page.locator(".notice.live")).to_contain_text("in progress")
    with open_store(studio.directory / ".assay" / "assay.db") as store:
        store.add_case_results(studio.running, [_case("second", 0.2)])
    expect(page.locator("tr.case-row")).to_have_count(2, timeout=10_000)


def test_the_hostile_output_shows_as_text(studio: Studio, page: Page) -> None:
    page.goto(f"{studio.url}/runs/{studio.head}/cases/hostile")
    panel = page.locator(".case-panel")
    expect(panel).to_be_visible()
    assert panel.locator(".case-output").text_content() == HOSTILE.replace('"', "'")
    assert page.locator("#studio img").count() == 0
    assert page.locator("#studio script").count() == 0


def test_pages_carry_a_strict_content_security_policy(studio: Studio) -> None:
    with ready(studio.url) as client:
        for path in ("/", f"/runs/{studio.head}", "/compare", "/settings"):
            answer = client.get(path)
            assert answer.status_code == 200
            policy = answer.headers["content-security-policy"]
            assert "script-src 'self'" in policy
            assert "default-src 'none'" in policy
        assert client.get("/static/..%2F..%2Fpyproject.toml").status_code == 404
        assert client.get("/static/studio.js").status_code == 200


def test_i21_8_the_compare_page_shows_the_warnings_compare_prints(
    studio: Studio, page: Page
) -> None:
    """Runs of another suite are compared with a warning, as `assay compare` prints it."""
    other = RunResult(
        id="20261123T130000-other1",
        suite="support-v2",
        target="fake",
        status="running",  # compared as it stands, like the run in progress above
        started_at=now_iso(),
        config=RunConfigSnapshot(
            threshold=0.8, borderline=None, metrics_pass_threshold=0.8, cases_pass_threshold=1.0
        ),
        summary=RunSummary(),
    )
    with open_store(studio.directory / ".assay" / "assay.db") as store:
        store.create_run(other, {})
        store.add_case_results(other.id, [_case("refund-window", 1.0)])
    page.goto(f"{studio.url}/compare?base={studio.base}&head={other.id}")
    expect(page.locator(".compare-cases")).to_be_visible()
    warnings = page.locator(".compare-warnings li")
    expect(warnings.first).to_be_visible()
    assert (
        "warning: comparing runs of different suites ('support' and 'support-v2'): only cases "
        "with the same id are paired"
    ) in warnings.all_inner_texts()
