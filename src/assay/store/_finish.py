"""`RunFinish`: what marking a run finished records, as one value every store takes."""

from __future__ import annotations

from dataclasses import dataclass, fields

from assay.results import (
    RegressionResult,
    RunResult,
    RunStatus,
    RunSummary,
    SchedulingStats,
    TokenUsage,
)

__all__ = ["RunFinish"]


@dataclass(frozen=True, slots=True)
class RunFinish:
    """The end of a run: its final status and totals (`ResultSink.finish_run`).

    One value rather than a keyword list, so the stores and the runner cannot drift apart on
    a field. The columns it sets are `assay.store._rows.finish_row`'s, which is what the
    writer process receives (it holds no model).
    """

    status: RunStatus
    finished_at: str
    summary: RunSummary
    duration_ms: float
    token_usage: TokenUsage | None = None
    cost_usd: float | None = None
    scheduling: SchedulingStats | None = None
    regression: RegressionResult | None = None

    @classmethod
    def of(cls, run: RunResult) -> RunFinish:
        """The finish `run` holds (the runner builds the finished run first)."""
        return cls(
            status=run.status,
            finished_at=run.finished_at or "",
            summary=run.summary,
            duration_ms=run.duration_ms,
            token_usage=run.token_usage,
            cost_usd=run.cost_usd,
            scheduling=run.scheduling,
            regression=run.regression,
        )

    def applied_to(self, run: RunResult) -> RunResult:
        """`run` (still running) as this finish leaves it."""
        return run.model_copy(update={f.name: getattr(self, f.name) for f in fields(self)})
