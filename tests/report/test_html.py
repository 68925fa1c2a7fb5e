"""The HTML report: pinned by a snapshot, its data blocks proved unbreakable by model output, and
opened in real headless Chromium, where the filters, sorting and case panels are exercised and
the hostile case must show as text."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from assay.report import write_html
from assay.report.html import content_security_policy, html_chunks
from assay.results import CaseResult, GraderResult, RetrievedPassage, RunResult
from tests._browser import screenshot_path
from tests.report.fixtures import (
    EVIL_OUTPUT,
    assert_snapshot,
    fixed_cases,
    fixed_run,
    second_cases,
    second_run,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page

HOSTILE_ID = '<img src=x onerror="alert(2)">'
HOSTILE_TAG = "<b>bold</b>"
HOSTILE_MISS = "</script><script>alert(3)</script><!--"


def _render(runs: list[tuple[RunResult, list[CaseResult]]]) -> str:
    out = io.StringIO()
    write_html(out, [(run, lambda cases=cases: iter(cases)) for run, cases in runs])
    return out.getvalue()


def _hostile_cases() -> list[CaseResult]:
    """The fixed cases plus one whose id, tags, grader and output are all written to attack."""
    hostile = CaseResult(
        case_id=HOSTILE_ID,
        score=0.0,
        verdict="fail",
        threshold=0.8,
        output=EVIL_OUTPUT,
        input={"question": HOSTILE_MISS},
        tags=[HOSTILE_TAG],
        grader_results=[
            GraderResult(
                name="<i>grader</i>",
                type="contains",
                score=0.0,
                verdict="fail",
                misses=[HOSTILE_MISS],
                reasoning="<svg onload=alert(4)>",
            )
        ],
    )
    return [*fixed_cases(), hostile]


def _hostile_run() -> RunResult:
    run = fixed_run()
    return run.model_copy(update={"suite": "</title><script>alert(5)</script>"})


def test_fixed_runs_match_the_snapshot() -> None:
    text = _render([(fixed_run(), fixed_cases()), (second_run(), second_cases())])
    assert_snapshot("support-bot-and-billing.html", text)


def _data_blocks(text: str) -> list[dict[str, object]]:
    found = re.findall(r'<script type="application/json" class="assay-run">(.*?)</script>', text)
    return [json.loads(block) for block in found]


def test_model_output_cannot_close_the_data_block() -> None:
    text = _render([(_hostile_run(), _hostile_cases())])
    # Only assay's own script elements exist: one data block per run and the views.
    assert text.count("<script") == 2
    assert text.count("</script>") == 2
    assert "<!--" not in text
    [block] = _data_blocks(text)
    results = block["results"]
    assert isinstance(results, list)
    assert results[-1]["case_id"] == HOSTILE_ID
    assert results[-1]["output"] == EVIL_OUTPUT
    assert block["run"] == json.loads(_hostile_run().model_dump_json(exclude={"results"}))
    assert (
        "<title>assay report: &lt;/title&gt;&lt;script&gt;alert(5)&lt;/script&gt;</title>" in text
    )


def test_each_run_gets_a_data_block_with_every_case() -> None:
    blocks = _data_blocks(_render([(fixed_run(), fixed_cases()), (second_run(), second_cases())]))
    assert [b["run"]["id"] for b in blocks] == [fixed_run().id, second_run().id]  # type: ignore[index]
    assert [len(b["results"]) for b in blocks] == [7, len(second_cases())]  # type: ignore[arg-type]


def test_cases_are_streamed_one_at_a_time() -> None:
    pulled: list[str] = []

    def cases() -> Iterator[CaseResult]:
        for case in fixed_cases():
            pulled.append(case.case_id)
            yield case

    chunks = html_chunks([(fixed_run(), cases)])
    seen = ""
    while "judge-crash" not in seen:
        seen += next(chunks)
    assert len(pulled) < len(fixed_cases())


def _hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


def test_the_policy_allows_exactly_the_inline_script_and_style() -> None:
    text = _render([(fixed_run(), fixed_cases())])
    [script] = re.findall(r"<script>(.*?)</script>", text, re.S)
    [style] = re.findall(r"<style>(.*?)</style>", text, re.S)
    policy = content_security_policy()
    assert f"script-src {_hash(script)};" in policy
    assert f"style-src {_hash(style)};" in policy
    assert policy.startswith("default-src 'none';")
    assert f'content="{policy}"' in text


# --- real headless Chromium ---------------------------------------------------------------


@pytest.fixture
def report(tmp_path: Path, page: Page) -> Page:
    """The hostile report opened from a file (the `page` fixture fails the test on any script
    error, console error or dialog, e.g. an injected `alert`)."""
    path = tmp_path / "report.html"
    path.write_text(_render([(_hostile_run(), _hostile_cases())]), encoding="utf-8")
    page.goto(path.as_uri())
    page.wait_for_selector("tr.case-row")
    return page


def _ids(page: Page) -> list[str]:
    return page.locator("tr.case-row").evaluate_all(
        "rows => rows.map(r => r.getAttribute('data-case-id'))"
    )


def test_the_report_renders_in_chromium(report: Page) -> None:
    report.screenshot(path=screenshot_path("html-report"), full_page=True)
    assert report.locator("section.run h2").inner_text().startswith("</title><script>alert(5)")
    assert report.locator(".badge.status-failed").inner_text() == "FAILED"
    legend = report.locator(".legend").inner_text()
    assert "1 pass (14.3%)" in legend  # the run's stored summary, not a recount
    assert "2 error (28.6%)" in legend
    # Worst first: errors, then fails by score, ties by id.
    assert _ids(report)[:2] == ["judge-crash", "slow-lookup"]
    assert len(_ids(report)) == 8
    bars = report.locator(".histogram rect")
    # Two fails at 0.0 stack in the first bin; the two errors have no score.
    assert bars.evaluate_all("bs => bs.map(b => b.getAttribute('data-bin'))") == [
        "0",
        "4",
        "6",
        "7",
        "9",
    ]
    assert report.locator(".histogram text").first.text_content() == "2"
    assert "2 error case(s) have no score" in report.locator(".histogram").inner_text()


def test_verdict_filters_search_and_sorting_work(report: Page) -> None:
    for verdict in ("pass", "borderline"):
        report.locator(f"input[name=verdict][value={verdict}]").uncheck()
    assert set(
        report.locator("tr.case-row").evaluate_all(
            "rows => rows.map(r => r.getAttribute('data-verdict'))"
        )
    ) == {"fail", "error"}
    assert len(_ids(report)) == 5
    report.locator("input[name=verdict][value=error]").uncheck()
    report.locator("input[name=q]").fill("refund-pol")
    expect(report.locator("tr.case-row")).to_have_count(1)
    assert _ids(report) == ["refund-policy"]
    report.locator("input[name=q]").fill("")
    for verdict in ("pass", "borderline", "error"):
        report.locator(f"input[name=verdict][value={verdict}]").check()
    expect(report.locator("tr.case-row")).to_have_count(8)
    report.locator("th[data-sort=score]").click()  # a new column sorts descending
    assert _ids(report)[0] == "greeting"
    report.locator("th[data-sort=score]").click()
    assert report.locator("th[data-sort=score]").get_attribute("aria-sort") == "ascending"
    assert _ids(report)[:2] == ["judge-crash", "slow-lookup"]  # no score sorts lowest
    report.locator("select[name=tag]").select_option(HOSTILE_TAG)
    assert _ids(report) == [HOSTILE_ID]
    report.locator("select[name=tag]").select_option("")
    report.locator("select[name=grader]").select_option("mentions-refund")
    assert _ids(report) == ["refund-policy"]


def test_the_hostile_case_shows_as_text(report: Page) -> None:
    hostile_row = report.locator("tr.case-row").filter(has_text=HOSTILE_ID)
    hostile_row.click()
    panel = report.locator(".case-panel")
    panel.wait_for()
    report.screenshot(path=screenshot_path("html-report-hostile-case"), full_page=True)
    assert panel.locator(".case-output").evaluate("e => e.textContent") == EVIL_OUTPUT
    text = panel.inner_text()
    assert HOSTILE_ID in text
    assert HOSTILE_MISS in text
    assert "<svg onload=alert(4)>" in text
    assert "<i>grader</i>" in text
    assert HOSTILE_TAG in hostile_row.inner_text()
    # Nothing the case carried became an element.
    for tag in ("img", "b", "i", "svg", "script"):
        for where in ("table.cases", ".case-panel"):
            assert report.locator(f"{where} {tag}").count() == 0, f"{where} {tag}"
    assert report.locator("#report script").count() == 0
    assert report.locator("#report svg").count() == 1  # the histogram only


def test_a_case_panel_shows_graders_details_samples_and_outcomes(report: Page) -> None:
    report.locator('tr.case-row[data-case-id="refund-policy"]').click()
    panel = report.locator('.case-panel[data-case-id="refund-policy"]')
    assert panel.locator("details.grader").count() == 3
    schema = panel.locator("details.grader", has_text="order-schema")
    assert schema.locator("tr.detail-fail").count() == 11  # ten shown and "+ 3 more"
    assert "+ 3 more" in schema.inner_text()
    report.locator('tr.case-row[data-case-id="flaky-answer"]').click()
    flaky = report.locator('.case-panel[data-case-id="flaky-answer"]')
    assert "Samples (3)" in (flaky.text_content() or "")
    report.locator('tr.case-row[data-case-id="tone-check"]').click()
    tone = report.locator('.case-panel[data-case-id="tone-check"]')
    assert tone.locator(".outcome.bad").count() + tone.locator(".outcome.ok").count() >= 1
    # A second click closes the panel.
    report.locator('tr.case-row[data-case-id="refund-policy"]').click()
    assert report.locator('.case-panel[data-case-id="refund-policy"]').count() == 0


def test_i26_1_a_case_panel_shows_the_retrieved_context_as_text(tmp_path: Path, page: Page) -> None:
    passages = [
        RetrievedPassage(id="refunds", text="Refunds within 30 days.", score=0.91),
        RetrievedPassage(text="<img src=x onerror=alert(6)> Ünïcode"),
    ]
    cases = [c.model_copy(update={"context": passages}) if c.case_id == "greeting" else c
             for c in fixed_cases()]  # fmt: skip
    path = tmp_path / "report.html"
    path.write_text(_render([(fixed_run(), cases)]), encoding="utf-8")
    page.goto(path.as_uri())
    page.locator('tr.case-row[data-case-id="greeting"]').click()
    panel = page.locator('.case-panel[data-case-id="greeting"]')
    table = panel.locator("table.retrieved")
    assert "Retrieved context" in (panel.text_content() or "")
    rows = table.locator("tbody tr").evaluate_all(
        "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent))"
    )
    assert rows == [
        ["1", "refunds", "0.91", "Refunds within 30 days."],
        ["2", "—", "—", "<img src=x onerror=alert(6)> Ünïcode"],
    ]
    assert panel.locator("img").count() == 0
    page.locator('tr.case-row[data-case-id="refund-policy"]').click()
    other = page.locator('.case-panel[data-case-id="refund-policy"]')
    assert other.locator("table.retrieved").count() == 0


def test_i25_4_image_parts_show_as_placeholders_in_the_case_panel(
    tmp_path: Path, page: Page
) -> None:
    from assay._content import abbreviated
    from assay.results import Message

    data = "data:image/png;base64," + base64.b64encode(b"\x89PNG" + b"\0" * 60_000).decode()
    parts = [
        {"type": "text", "text": "<img src=x onerror=alert(7)> what is this?"},
        {"type": "image_url", "image_url": {"url": data}},
    ]
    stored = abbreviated(parts)
    cases = [
        c.model_copy(
            update={
                "input": [{"role": "user", "content": stored}],
                "messages": [
                    Message(role="user", content=stored),
                    Message(role="assistant", content="A blank image."),
                ],
            }
        )
        if c.case_id == "greeting"
        else c
        for c in fixed_cases()
    ]
    html = _render([(fixed_run(), cases)])
    assert "base64," not in html and len(html) < 200_000
    path = tmp_path / "report.html"
    path.write_text(html, encoding="utf-8")
    page.goto(path.as_uri())
    page.locator('tr.case-row[data-case-id="greeting"]').click()
    panel = page.locator('.case-panel[data-case-id="greeting"]')
    shown = [m.text_content() for m in panel.locator(".msg pre").all()]
    assert shown[0] == (
        "<img src=x onerror=alert(7)> what is this?\n[image: data:image/png (60004 bytes)]"
    )
    assert panel.locator("img").count() == 0
