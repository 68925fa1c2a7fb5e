"""Which cases the terminal summary lists, so the CLI can fetch only those from the store."""

from __future__ import annotations

from assay.report import listed_verdicts
from assay.report.terminal import ALL_CASES_UP_TO


def test_small_runs_list_every_case() -> None:
    assert listed_verdicts(1) is None
    assert listed_verdicts(ALL_CASES_UP_TO) is None


def test_large_runs_list_only_cases_that_did_not_pass() -> None:
    assert listed_verdicts(ALL_CASES_UP_TO + 1) == ("borderline", "fail", "error")
