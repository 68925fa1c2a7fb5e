"""Hand-built runs for comparison tests: a case is (id, verdict, score, latency)."""

from __future__ import annotations

from assay.results import CaseResult, RunConfigSnapshot, RunResult, RunSummary, Verdict

CONFIG = RunConfigSnapshot(
    threshold=0.8, borderline=0.6, metrics_pass_threshold=0.8, cases_pass_threshold=1.0
)


def case(case_id: str, verdict: Verdict, score: float | None, ms: float = 100.0) -> CaseResult:
    """A case result with only what a comparison reads."""
    return CaseResult(case_id=case_id, verdict=verdict, score=score, threshold=0.8, duration_ms=ms)


def run(run_id: str, *cases: CaseResult) -> RunResult:
    """A completed run holding `cases` as its results."""
    return RunResult(
        id=run_id,
        suite="demo",
        target="fake",
        status="completed",
        started_at="2026-11-23T10:00:00+00:00",
        config=CONFIG,
        summary=RunSummary(),
        results=list(cases),
    )


def same(n: int, verdict: Verdict, score: float | None, ms: float = 100.0) -> list[CaseResult]:
    """`n` cases c0 … c{n-1} with the same verdict, score and latency."""
    return [case(f"c{i}", verdict, score, ms) for i in range(n)]
