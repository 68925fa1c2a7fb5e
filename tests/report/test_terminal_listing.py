"""Which cases the terminal summary lists, so the CLI can fetch only those from the store."""

from __future__ import annotations

from assay.report import listed_verdicts
from assay.report.terminal import ALL_CASES_UP_TO
from assay.results import RunSummary


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
