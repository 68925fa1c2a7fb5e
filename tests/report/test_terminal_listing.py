"""Which cases the terminal summary lists (so the CLI can fetch only those from the store), in
which order, and what its result line says."""

from __future__ import annotations

import re
from collections.abc import Iterator

from rich.console import Console

from assay.report import listed_verdicts, render_run
from assay.report.terminal import ALL_CASES_UP_TO
from assay.results import CaseResult, RunConfigSnapshot, RunResult, RunSummary


def test_small_runs_list_every_case() -> None:
    assert listed_verdicts(RunSummary(total=1, passed_count=1)) is None
    assert listed_verdicts(RunSummary(total=ALL_CASES_UP_TO, failed_count=3)) is None


def test_large_runs_list_only_the_verdicts_their_cases_have_other_than_pass() -> None:
    mixed = RunSummary(total=ALL_CASES_UP_TO + 3, borderline_count=1, failed_count=1, error_count=1)
    assert listed_verdicts(mixed) == ("borderline", "fail", "error")
    errors = RunSummary(total=ALL_CASES_UP_TO + 1, passed_count=ALL_CASES_UP_TO, error_count=1)
    assert listed_verdicts(errors) == ("error",)


def test_a_large_run_where_every_case_passed_lists_none() -> None:
    # `assay run` then skips the query, and a long run never opens the store itself.
    assert listed_verdicts(RunSummary(total=5000, passed_count=5000)) == ()


def _run(summary: RunSummary) -> RunResult:
    return RunResult(
        id="20260101T000000-abcdef",
        suite="s",
        target="t",
        status="completed",
        started_at="2026-01-01T00:00:00.000+00:00",
        config=RunConfigSnapshot(
            threshold=0.8, borderline=0.6, metrics_pass_threshold=0.8, cases_pass_threshold=1.0
        ),
        summary=summary,
    )


def _failed(case_id: str) -> CaseResult:
    return CaseResult(case_id=case_id, score=0.1, verdict="fail", threshold=0.8)


def _listed(text: str) -> list[str]:
    return re.findall(r"│ (case-\d+) ", text)


def test_i21_12_a_large_run_lists_its_first_non_passing_cases_in_suite_order() -> None:
    total = ALL_CASES_UP_TO + 30
    suite = [f"case-{i:03d}" for i in range(total)]
    finished = list(reversed(suite))  # stored as they finished: the last first
    console = Console(record=True, width=120, color_system=None)
    summary = RunSummary(total=total, failed_count=total)
    render_run(console, _run(summary), (_failed(c) for c in finished), order=iter(suite))
    text = console.export_text()
    assert _listed(text) == suite[:ALL_CASES_UP_TO]
    assert "… and 30 more non-passing cases" in text


def test_i21_12_the_suite_order_is_read_only_when_a_case_is_listed() -> None:
    def order() -> Iterator[str]:
        raise AssertionError("read although nothing is listed")
        yield ""

    console = Console(record=True, width=120, color_system=None)
    summary = RunSummary(total=5000, passed_count=5000)
    render_run(console, _run(summary), (), order=order())
    assert "Cases" not in console.export_text()


def test_i21_12_cases_the_suite_does_not_name_come_last_as_stored() -> None:
    console = Console(record=True, width=120, color_system=None)
    cases = [_failed("case-9"), _failed("case-2"), _failed("case-1"), _failed("case-5")]
    render_run(
        console, _run(RunSummary(total=4, failed_count=4)), cases, order=["case-1", "case-2"]
    )
    assert _listed(console.export_text()) == ["case-1", "case-2", "case-9", "case-5"]


def test_i21_10_the_result_line_says_errors_left_the_results_incomplete() -> None:
    console = Console(record=True, width=120, color_system=None)
    summary = RunSummary(total=5, passed_count=2, error_count=3, judge_fallback_count=1)
    render_run(console, _run(summary), ())
    text = console.export_text()
    assert "  result  FAILED  3 errors: results incomplete\n" in text
    assert "  judge   ! 1 judged check fell back" in text


def test_one_error_is_counted_in_the_singular() -> None:
    console = Console(record=True, width=120, color_system=None)
    summary = RunSummary(total=3, passed_count=2, error_count=1, passed_pct=66.7, error_pct=33.3)
    render_run(console, _run(summary), ())
    text = console.export_text()
    assert "  1 error (33%)\n" in text
    assert "  result  FAILED  1 error: results incomplete\n" in text
