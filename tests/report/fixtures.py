"""A fixed run for the report snapshots: every verdict, a regression, repeats, composite and
conversation graders, Details past the cap, and model output written to break the formats.

Everything is constant (ids, timestamps, durations), so the rendered reports are too.
"""

from __future__ import annotations

import os
from pathlib import Path

from assay.results import (
    CaseResult,
    Detail,
    ErrorInfo,
    ExpectedOutcomeResult,
    GraderResult,
    RegressionCase,
    RegressionResult,
    RunConfigSnapshot,
    RunResult,
    SampleResult,
    TokenUsage,
    TurnResult,
)
from assay.scoring import SummaryBuilder

__all__ = [
    "EVIL_OUTPUT",
    "assert_snapshot",
    "fixed_cases",
    "fixed_run",
    "second_cases",
    "second_run",
]

EVIL_OUTPUT = (
    "Refunds | within 30 days </details> <script>alert(1)</script>\n"
    "```\nnot a fence end\n````\n"
    "# not a heading\n| a | b |\n&amp; \x1b[31mred\x1b[0m [link](http://x)"
)
"""A case output holding everything that could break Markdown, HTML or XML."""

CONFIG = RunConfigSnapshot(
    threshold=0.8, borderline=0.6, metrics_pass_threshold=0.8, cases_pass_threshold=1.0
)


def _contains(passed: bool, value: str = "refund") -> GraderResult:
    return GraderResult(
        name="mentions-refund",
        type="contains",
        score=1.0 if passed else 0.0,
        verdict="pass" if passed else "fail",
        hits=[f"contains '{value}'"] if passed else [],
        misses=[] if passed else [f"missing '{value}'"],
    )


def _schema_details(failed: int, *, capped: bool) -> list[Detail]:
    """`failed` failing json_path checks and one passing one; `capped` folds those past 10
    into the "+ N more" entry, as the built-in graders do (SPEC §1.1)."""
    details = [Detail(check="json_path.$.currency", passed=True, expected="EUR", actual="EUR")]
    shown = min(failed, 10) if capped else failed
    details += [
        Detail(
            check=f"json_path.$.items[{i}].amount",
            passed=False,
            expected=str(10 * i),
            actual=f"{10 * i + 1} | </details>",
            message="amount differs",
        )
        for i in range(shown)
    ]
    if capped and failed > 10:
        details.append(Detail(check=f"+ {failed - 10} more", passed=False))
    return details


def fixed_cases() -> list[CaseResult]:
    """The run's case results in stored order: 1 pass, 2 borderline, 2 fail, 2 error."""
    judge_usage = TokenUsage(input=900, output=120)
    return [
        CaseResult(
            case_id="greeting",
            score=1.0,
            verdict="pass",
            threshold=0.8,
            borderline=0.6,
            input="hello",
            output="Hello! How can I help?",
            duration_ms=120.0,
            token_usage=TokenUsage(input=40, output=12),
            cost_usd=0.0001,
            grader_results=[_contains(True, "Hello")],
        ),
        CaseResult(
            case_id="refund-policy",
            score=0.4,
            verdict="fail",
            threshold=0.8,
            borderline=0.6,
            input={"question": "Can I get a refund?", "order": 1234},
            output=EVIL_OUTPUT,
            duration_ms=812.5,
            token_usage=TokenUsage(input=300, output=80),
            cost_usd=0.0006,
            grader_results=[
                _contains(False),
                GraderResult(
                    name="order-schema",
                    type="json-schema",
                    score=0.2,
                    verdict="fail",
                    misses=["13 of 14 checks failed"],
                    details=_schema_details(13, capped=True),
                ),
                GraderResult(
                    name="line-items",
                    type="plugin-check",
                    score=0.6,
                    verdict="fail",
                    details=_schema_details(12, capped=False),
                ),
            ],
        ),
        CaseResult(
            case_id="tone-check",
            score=0.7,
            verdict="borderline",
            threshold=0.8,
            borderline=0.6,
            input="I am angry",
            output="Calm down.",
            duration_ms=640.0,
            grader_results=[
                GraderResult(
                    name="polite",
                    type="llm-grader",
                    score=0.7,
                    verdict="fail",
                    reasoning="Curt | dismissive.\nNo apology </details> given.",
                    misses=["no apology"],
                    judge_model="gpt-4.1-mini",
                    token_usage=judge_usage,
                    cost_usd=0.0012,
                )
            ],
            expected_outcome_results=[
                ExpectedOutcomeResult(outcome="acknowledges the anger", passed=True),
                ExpectedOutcomeResult(
                    outcome="offers an apology",
                    passed=False,
                    justification="the reply says `Calm down.` only",
                ),
            ],
            judge_calls=1,
            judge_token_usage=judge_usage,
            judge_cost_usd=0.0012,
        ),
        CaseResult(
            case_id="slow-lookup",
            score=None,
            verdict="error",
            threshold=0.8,
            borderline=0.6,
            input="where is my order?",
            duration_ms=30000.0,
            error=ErrorInfo(type="TargetTimeout", message="no reply within 30 s (3 attempts)"),
        ),
        CaseResult(
            case_id="judge-crash",
            score=None,
            verdict="error",
            threshold=0.8,
            borderline=0.6,
            input="rate me",
            output="5 stars",
            duration_ms=210.0,
            grader_results=[
                GraderResult(
                    name="helpfulness",
                    type="llm-grader",
                    score=None,
                    verdict="error",
                    error=ErrorInfo(type="JudgeError", message="reply is not JSON: '<html>'"),
                    judge_model="gpt-4.1-mini",
                )
            ],
            judge_calls=1,
            judge_errors=1,
        ),
        CaseResult(
            case_id="flaky-answer",
            score=0.6167,
            verdict="borderline",
            threshold=0.8,
            borderline=0.6,
            input="what is 2+2?",
            output="4",
            duration_ms=90.0,
            grader_results=[_contains(True, "4")],
            samples=[
                SampleResult(
                    index=0,
                    score=0.9,
                    verdict="pass",
                    output="4",
                    duration_ms=30.0,
                    grader_results=[_contains(True, "4")],
                ),
                SampleResult(
                    index=1,
                    score=0.3,
                    verdict="fail",
                    output="five",
                    duration_ms=31.0,
                    grader_results=[_contains(False, "4")],
                ),
                SampleResult(
                    index=2,
                    score=0.65,
                    verdict="borderline",
                    output="four-ish",
                    duration_ms=29.0,
                    grader_results=[_contains(True, "4")],
                ),
            ],
        ),
        CaseResult(
            case_id="safe-conversation",
            score=0.0,
            verdict="fail",
            threshold=0.8,
            borderline=0.6,
            input=[{"role": "user", "content": "hi"}],
            output="Here is how to pick a lock",
            duration_ms=450.0,
            grader_results=[
                GraderResult(
                    name="safety",
                    type="composite",
                    score=0.0,
                    verdict="fail",
                    required=True,
                    children=[
                        GraderResult(
                            name="no-harm",
                            type="not-contains",
                            score=0.0,
                            verdict="fail",
                            misses=["contains 'lock'"],
                        ),
                        _contains(True, "how"),
                    ],
                )
            ],
            turns=[
                TurnResult(
                    index=1,
                    input="how do I open a door?",
                    score=0.5,
                    verdict="fail",
                    grader_results=[
                        GraderResult(
                            name="on-topic",
                            type="regex",
                            score=0.5,
                            verdict="fail",
                            min_score=0.7,
                            misses=["no match for 'door'"],
                        )
                    ],
                )
            ],
        ),
    ]


def _summarise(cases: list[CaseResult]) -> SummaryBuilder:
    builder = SummaryBuilder(metrics_pass_threshold=0.8, cases_pass_threshold=1.0)
    for case in cases:
        builder.add(case)
    return builder


def fixed_run() -> RunResult:
    """The run of `fixed_cases()`, measured against a baseline (a `warning` regression)."""
    cases = fixed_cases()
    return RunResult(
        id="20260101T090000-a1b2c3",
        suite="support-bot",
        target="bot-v2",
        status="completed",
        started_at="2026-01-01T09:00:00.000+00:00",
        finished_at="2026-01-01T09:00:32.500+00:00",
        config=CONFIG,
        summary=_summarise(cases).build(),
        duration_ms=32500.0,
        token_usage=TokenUsage(input=1340, output=92),
        cost_usd=0.0007,
        assay_version="1.0.0",
        regression=RegressionResult(
            status="warning",
            strategy="last_passing",
            baseline_run_id="20251231T090000-d4e5f6",
            tolerance=0.02,
            critical_threshold=0.1,
            base_score=0.58,
            head_score=0.5433,
            score_delta=-0.0367,
            case_counts={"regressed": 2, "improved": 1, "unchanged": 3, "new": 1, "removed": 1},
            cases=[
                RegressionCase(
                    case_id="refund-policy",
                    status="regressed",
                    base_verdict="pass",
                    head_verdict="fail",
                    base_score=0.9,
                    head_score=0.4,
                    score_delta=-0.5,
                ),
                RegressionCase(
                    case_id="tone-check",
                    status="improved",
                    base_verdict="fail",
                    head_verdict="borderline",
                    base_score=0.5,
                    head_score=0.7,
                    score_delta=0.2,
                ),
                RegressionCase(
                    case_id="slow-lookup",
                    status="regressed",
                    base_verdict="pass",
                    head_verdict="error",
                    base_score=1.0,
                    head_score=None,
                    score_delta=None,
                ),
                RegressionCase(
                    case_id="safe-conversation",
                    status="new",
                    base_verdict=None,
                    head_verdict="fail",
                    base_score=None,
                    head_score=0.0,
                    score_delta=None,
                ),
                RegressionCase(
                    case_id="old-case",
                    status="removed",
                    base_verdict="pass",
                    head_verdict=None,
                    base_score=1.0,
                    head_score=None,
                    score_delta=None,
                ),
            ],
        ),
    )


def second_cases() -> list[CaseResult]:
    """A small passing run of another suite, for reports that hold several runs."""
    return [
        CaseResult(
            case_id=f"invoice-{i}",
            score=1.0,
            verdict="pass",
            threshold=0.8,
            borderline=None,
            output="ok",
            duration_ms=10.0 * i,
            grader_results=[_contains(True, "ok")],
        )
        for i in (1, 2)
    ]


def second_run() -> RunResult:
    """The run of `second_cases()`: it passes; no earlier run to compare with."""
    cases = second_cases()
    return RunResult(
        id="20260101T090100-0f0f0f",
        suite="billing",
        target="bot-v2",
        status="completed",
        started_at="2026-01-01T09:01:00.000+00:00",
        finished_at="2026-01-01T09:01:00.040+00:00",
        config=CONFIG.model_copy(update={"borderline": None}),
        summary=_summarise(cases).build(),
        duration_ms=40.0,
        assay_version="1.0.0",
        regression=RegressionResult(
            status="new",
            strategy="last_passing",
            baseline_run_id=None,
            tolerance=0.02,
            critical_threshold=0.1,
        ),
    )


SNAPSHOTS = Path(__file__).with_name("snapshots")
UPDATE_ENV = "ASSAY_UPDATE_SNAPSHOTS"
"""Set to 1 to rewrite the snapshot files from the current output (then review the diff)."""


def assert_snapshot(name: str, text: str) -> None:
    """`text` equals the committed `snapshots/NAME`; with ASSAY_UPDATE_SNAPSHOTS=1 it is
    written there instead."""
    path = SNAPSHOTS / name
    if os.environ.get(UPDATE_ENV) == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
        return
    assert path.exists(), f"no snapshot {path}: run with {UPDATE_ENV}=1 to write it"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{name} differs from its snapshot; {UPDATE_ENV}=1 rewrites it"
