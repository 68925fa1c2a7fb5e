"""What the studio says about scores, in real headless Chromium over a real `assay serve`: a
case's score coloured against its own threshold (not the studio's), a failing agent judge's
score against its bar, errors and judge fallbacks, base and head latency and score changes in
points on the compare page, and a keyed legend on the trend charts (issue 21 items 10, 11)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from assay.results import (
    CaseResult,
    ErrorInfo,
    GraderResult,
    RunConfigSnapshot,
    RunResult,
    RunSummary,
)
from assay.scoring import SummaryBuilder
from assay.store import RunFinish, open_store
from tests._browser import screenshot_path
from tests.conftest import write
from tests.e2e._serve import ready, serving

if TYPE_CHECKING:
    from playwright.sync_api import Page

BASE, HEAD = "20261101T100000-base01", "20261101T110000-head01"


def _cases(latency_ms: float, lenient: float) -> list[CaseResult]:
    judge = GraderResult(
        name="agent-judge",
        type="agent-judge",
        score=0.55,
        verdict="fail",
        judge_model="judge-model",
        hits=["tool_routing 4/5"],
        reasoning="overall 55/100",
    )
    facts = GraderResult(
        name="facts",
        type="factuality",
        score=1.0,
        verdict="pass",
        fallback="deep factuality → shallow: judge failed: HTTP 503",
    )
    common = {"threshold": 0.8, "borderline": 0.6, "duration_ms": latency_ms}
    return [
        # Passes its own 0.5 bar although it is below the studio's 0.8.
        CaseResult(
            case_id="lenient",
            score=lenient,
            verdict="pass",
            **{**common, "threshold": 0.5, "borderline": None},  # type: ignore[arg-type]
        ),
        CaseResult(
            case_id="strict",
            score=0.85,
            verdict="borderline",
            **{**common, "threshold": 0.9},  # type: ignore[arg-type]
        ),
        CaseResult(case_id="judged", score=0.55, verdict="fail", grader_results=[judge], **common),  # type: ignore[arg-type]
        CaseResult(
            case_id="fell-back", score=1.0, verdict="pass", grader_results=[facts], **common
        ),  # type: ignore[arg-type]
        CaseResult(
            case_id="broken",
            score=None,
            verdict="error",
            error=ErrorInfo(type="TimeoutError", message="target took longer than 2s"),
            **common,  # type: ignore[arg-type]
        ),
    ]


def _store_run(path: Path, run_id: str, started_at: str, cases: list[CaseResult]) -> None:
    builder = SummaryBuilder()
    for case in cases:
        builder.add(case)
    run = RunResult(
        id=run_id,
        suite="scores",
        target="bot",
        status="running",
        started_at=started_at,
        config=RunConfigSnapshot(
            threshold=0.8, borderline=0.6, metrics_pass_threshold=0.8, cases_pass_threshold=1.0
        ),
        summary=RunSummary(),
    )
    with open_store(path) as store:
        store.create_run(run, {})
        store.add_case_results(run_id, cases)
        store.finish_run(
            run_id,
            RunFinish(
                status="completed",
                finished_at=started_at,
                summary=builder.build(),
                duration_ms=5000.0,
            ),
        )


@pytest.fixture(scope="module")
def studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    directory = tmp_path_factory.mktemp("studio-scores")
    write(directory / ".assay" / "config.yaml", "studio:\n  threshold: 0.8\n")
    db = directory / ".assay" / "assay.db"
    _store_run(db, BASE, "2026-11-01T10:00:00.000+00:00", _cases(1200.0, 0.7))
    _store_run(db, HEAD, "2026-11-01T11:00:00.000+00:00", _cases(1800.0, 0.6))
    with serving(directory) as url, ready(url):
        yield url


def test_i21_11_a_cases_score_is_coloured_against_its_own_threshold(
    studio: str, page: Page
) -> None:
    page.goto(f"{studio}/runs/{HEAD}")
    expect(page.locator("tr.case-row")).to_have_count(5)

    def score_cell(case_id: str) -> str:
        cell = page.locator(f'tr.case-row[data-case-id="{case_id}"] td').nth(2)
        return f"{cell.inner_text()} {cell.get_attribute('class')}"

    # 0.60 is under the studio's 0.8 but passes its own 0.5; 0.85 is under its own 0.9.
    assert score_cell("lenient") == "0.60 num mono score-pass"
    assert score_cell("strict") == "0.85 num mono score-borderline"
    assert score_cell("judged") == "0.55 num mono score-below"
    assert score_cell("broken") == "— num mono "
    judged = page.locator('tr.case-row[data-case-id="judged"] td.miss')
    assert judged.inner_text() == "agent-judge: score 0.55 is below the case threshold 0.80"
    fell_back = page.locator('tr.case-row[data-case-id="fell-back"] td.miss')
    assert fell_back.inner_text() == "judge fell back: facts"
    page.screenshot(path=screenshot_path("studio-scores-run"), full_page=True)


def test_i21_10_errors_and_judge_fallbacks_are_shown(studio: str, page: Page) -> None:
    page.goto(f"{studio}/runs/{HEAD}")
    expect(page.locator(".notice.errors")).to_have_text(
        "1 error: results incomplete — the cases that errored have no score and count as not passed"
    )
    expect(page.locator(".notice.fallbacks")).to_contain_text("1 judged check fell back")
    page.goto(f"{studio}/runs/{HEAD}/cases/fell-back")
    box = page.locator(".case-panel > .fallback-box")
    expect(box).to_have_text(
        "The judge fell back: facts: deep factuality → shallow: judge failed: HTTP 503"
    )
    expect(page.locator(".grader .fallback-box")).to_have_text(
        "fell back: deep factuality → shallow: judge failed: HTTP 503"
    )
    page.screenshot(path=screenshot_path("studio-scores-fallback"), full_page=True)


def test_i21_11_a_failing_agent_judge_says_its_score_against_its_bar(
    studio: str, page: Page
) -> None:
    page.goto(f"{studio}/runs/{HEAD}/cases/judged")
    grader = page.locator("details.grader").first
    expect(grader).to_have_attribute("open", "")
    expect(grader.locator(".below-bar")).to_have_text(
        "fails: score 0.55 is below the case threshold 0.80"
    )
    page.screenshot(path=screenshot_path("studio-scores-judge"), full_page=True)


def test_i21_11_compare_shows_both_latencies_and_score_changes_in_points(
    studio: str, page: Page
) -> None:
    page.goto(f"{studio}/compare?base={BASE}&head={HEAD}")
    latency = page.locator("tr.latency td")
    expect(latency).to_have_count(4)
    assert latency.all_inner_texts() == ["mean latency", "1.20 s", "1.80 s", "+50.0%"]
    rows = page.locator("table.compare-summary tbody tr")
    assert rows.nth(0).locator("td").all_inner_texts() == ["pass rate", "40.0%", "40.0%", "0.0 pt"]
    # Mean score over the scored cases: (0.7+0.85+0.55+1)/4 → (0.6+0.85+0.55+1)/4.
    assert rows.nth(1).locator("td").all_inner_texts() == [
        "mean score",
        "77.5%",
        "75.0%",
        "-2.5 pt",
    ]
    lenient = page.locator('tr.compare-row[data-case-id="lenient"] td')
    expect(lenient).to_have_count(7)
    assert lenient.all_inner_texts()[4:] == ["0.70", "0.60", "-10.0 pt"]
    page.screenshot(path=screenshot_path("studio-scores-compare"), full_page=True)


def test_i21_11_trend_charts_have_a_keyed_legend(studio: str, page: Page) -> None:
    page.goto(studio + "/")
    trend = page.locator('.trend[data-suite="scores"]')
    expect(trend).to_be_visible()
    keys = trend.locator(".legend .key")
    expect(keys).to_have_count(3)
    assert [k.strip() for k in keys.all_inner_texts()] == [
        "cases pass rate",
        "mean score",
        "studio threshold 80.0%",
    ]
    for series in ("pass rate", "score"):
        line = trend.locator(f'polyline[data-series="{series}"]')
        swatch = trend.locator(f'.key[data-series="{series}"] line')
        assert swatch.get_attribute("stroke") == line.get_attribute("stroke")
    threshold = trend.locator('.key[data-series="threshold"] line')
    assert threshold.get_attribute("stroke-dasharray") == "4 3"
    trend.screenshot(path=screenshot_path("studio-scores-trend"))
