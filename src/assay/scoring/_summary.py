"""Run-level result: the distribution and the two dimensions of SPEC §1.5.

Built incrementally so a run's memory does not grow with its number of cases.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from assay.results import (
    CaseResult,
    GraderResult,
    RunSummary,
    TokenUsage,
    UsageTally,
    add_cost,
    add_usage,
)
from assay.scoring._fallbacks import count_fallbacks

__all__ = [
    "DEFAULT_CASES_PASS_THRESHOLD",
    "DEFAULT_METRICS_PASS_THRESHOLD",
    "JudgeSpend",
    "SummaryBuilder",
]

DEFAULT_METRICS_PASS_THRESHOLD = 0.8
DEFAULT_CASES_PASS_THRESHOLD = 1.0


@dataclass
class JudgeSpend:
    """What the judge did for some grader results: calls, failed calls, tokens and cost."""

    calls: int = 0
    errors: int = 0
    token_usage: TokenUsage | None = None
    cost_usd: float | None = None

    def add_call(self, usage: TokenUsage | None, cost: float | None) -> None:
        """Count one model call outside the grader results (a simulated user's turn)."""
        self.calls += 1
        self.token_usage = add_usage(self.token_usage, usage)
        self.cost_usd = add_cost(self.cost_usd, cost)

    def add(self, results: Iterable[GraderResult]) -> JudgeSpend:
        """Count judged results (composite members included); returns self."""
        for r in results:
            if r.judge_model is not None:
                self.calls += 1
                self.errors += r.error is not None
                self.token_usage = add_usage(self.token_usage, r.token_usage)
                self.cost_usd = add_cost(self.cost_usd, r.cost_usd)
            self.add(r.children)
        return self


class SummaryBuilder:
    """Accumulates case results one at a time and produces the `RunSummary`."""

    def __init__(
        self,
        metrics_pass_threshold: float = DEFAULT_METRICS_PASS_THRESHOLD,
        cases_pass_threshold: float = DEFAULT_CASES_PASS_THRESHOLD,
    ) -> None:
        self.metrics_pass_threshold = metrics_pass_threshold
        self.cases_pass_threshold = cases_pass_threshold
        self._counts = {"pass": 0, "borderline": 0, "fail": 0, "error": 0}
        self._score_sum = 0.0
        self._scored = 0
        self._judge = JudgeSpend()
        self._judge_usage = UsageTally()
        self._fallbacks = 0

    def add(self, case: CaseResult) -> None:
        """Count one case result."""
        self._counts[case.verdict] += 1
        if case.verdict != "error" and case.score is not None:
            self._score_sum += case.score
            self._scored += 1
        judge = self._judge
        judge.calls += case.judge_calls
        judge.errors += case.judge_errors
        self._judge_usage.add(case.judge_token_usage)
        judge.cost_usd = add_cost(judge.cost_usd, case.judge_cost_usd)
        self._fallbacks += count_fallbacks(case)

    def build(self) -> RunSummary:
        """The summary of every case added so far."""
        total = sum(self._counts.values())

        def pct(n: int) -> float:
            return round(100.0 * n / total, 4) if total else 0.0

        metrics_pct = round(100.0 * self._score_sum / self._scored, 4) if self._scored else 0.0
        cases_pct = pct(self._counts["pass"])
        metrics_passed = self._scored > 0 and metrics_pct >= 100.0 * self.metrics_pass_threshold
        cases_passed = total > 0 and cases_pct >= 100.0 * self.cases_pass_threshold
        return RunSummary(
            total=total,
            passed_count=self._counts["pass"],
            borderline_count=self._counts["borderline"],
            failed_count=self._counts["fail"],
            error_count=self._counts["error"],
            passed_pct=pct(self._counts["pass"]),
            borderline_pct=pct(self._counts["borderline"]),
            failed_pct=pct(self._counts["fail"]),
            error_pct=pct(self._counts["error"]),
            cases_pass_rate_pct=cases_pct,
            weighted_metrics_score_pct=metrics_pct,
            metrics_passed=metrics_passed,
            cases_passed=cases_passed,
            passed=metrics_passed and cases_passed,
            judge_error_rate=self._judge.errors / self._judge.calls if self._judge.calls else 0.0,
            judge_calls=self._judge.calls,
            judge_token_usage=self._judge_usage.total,
            judge_cost_usd=self._judge.cost_usd,
            judge_fallback_count=self._fallbacks,
        )
