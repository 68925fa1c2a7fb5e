"""Expected outcomes the judge could not judge: the case falls back to its score verdict (SPEC
§1.3 step 2), the outcomes' result says so, and the run counts it (issue 21 item 10)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.testing import FakeOpenAIServer
from tests.runner.test_runner_judged import run, suite_file


@pytest.fixture(autouse=True)
def _judge_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    monkeypatch.delenv("ASSAY_JUDGE_MODEL", raising=False)
    monkeypatch.delenv("ASSAY_JUDGE_BASE_URL", raising=False)


def test_i21_10_unjudged_outcomes_fall_back_to_the_score_and_are_counted(tmp_path: Path) -> None:
    says = {"type": "contains", "value": "30 days", "name": "says-30-days"}
    path = suite_file(
        tmp_path,
        [
            {
                "id": "passes",
                "input": "refund?",
                "expected_outcomes": ["Polite"],
                "assertions": [says],
            },
            {
                "id": "fails",
                "input": "hours?",
                "expected_outcomes": ["Polite"],
                "assertions": [says],
            },
        ],
        judge={"model": "judge-model", "max_retries": 0},
    )
    with FakeOpenAIServer(judge={}, faults={"503": 1.0}) as server:
        result = run(path, server)
    by_id = {c.case_id: c for c in result.results}
    assert [(c, by_id[c].verdict, by_id[c].score) for c in ("passes", "fails")] == [
        ("passes", "pass", 1.0),
        ("fails", "fail", 0.0),
    ]
    shown = by_id["passes"].grader_results[-1]
    assert (shown.name, shown.verdict, by_id["passes"].expected_outcome_results) == (
        "expected_outcomes",
        "error",
        [],
    )
    assert shown.fallback is not None and shown.fallback.startswith(
        "expected outcomes → score: JudgeError: "
    )
    assert (result.summary.judge_fallback_count, result.summary.error_count) == (2, 0)
    assert result.summary.judge_error_rate == 1.0  # the failed judge calls still count
