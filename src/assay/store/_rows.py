"""A run's `runs` row as plain data, built from the result models by the process that has them.

The store writer process (`assay.store.StoreWriter`) writes rows without importing pydantic or
`assay.results` (~10 MB of its memory), so `create_run` and `finish_run` reach it as these
dicts, which pickle as plain values. `SQLStore` builds the same rows: both write them through
`SQLDatabase`, the one place that writes runs.

This module imports no model at run time, only what it needs to build the rows (it takes the
models as arguments), so the writer process may import it too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from assay.store._text import without_nul

if TYPE_CHECKING:
    from pydantic import BaseModel

    from assay.results import RunResult
    from assay.store._finish import RunFinish
    from assay.store._owner import RunOwner

__all__ = ["FinishRow", "RunRow", "finish_row", "run_row"]

JSONObject = dict[str, Any]
"""A model dumped in JSON mode, as the `runs` table's JSON columns hold it."""


class RunRow(TypedDict):
    """A new run's row of the `runs` table (`SQLDatabase.insert_run`)."""

    id: str
    suite: str
    target: str
    status: str
    started_at: str
    finished_at: str | None
    config: JSONObject
    summary: JSONObject
    duration_ms: float
    token_usage: JSONObject | None
    cost_usd: float | None
    assay_version: str
    scheduling: JSONObject | None
    passed: bool | None
    regression: JSONObject | None
    owner: str | None


class FinishRow(TypedDict):
    """The columns finishing a run sets (`SQLDatabase.finish_run_row`); the owner is cleared."""

    status: str
    finished_at: str
    summary: JSONObject
    duration_ms: float
    token_usage: JSONObject | None
    cost_usd: float | None
    scheduling: JSONObject | None
    passed: bool
    regression: JSONObject | None


def run_row(run: RunResult, owner: RunOwner | None) -> RunRow:
    """The row that records `run`, without its case results and its snapshot (which
    `SQLDatabase.insert_run` encodes where it is written: a large suite's snapshot is one
    big text, and encoding it here made the run's process hold it several times over).

    Only a `running` run keeps its `owner` (the process completing it): nobody runs a
    finished one (an imported run)."""
    running = run.status == "running"
    return {
        "id": run.id,
        "suite": without_nul(run.suite),
        "target": without_nul(run.target),
        "status": run.status,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "config": run.config.model_dump(mode="json"),
        "summary": run.summary.model_dump(mode="json"),
        "duration_ms": run.duration_ms,
        "token_usage": _dumped(run.token_usage),
        "cost_usd": run.cost_usd,
        "assay_version": run.assay_version,
        "scheduling": _dumped(run.scheduling),
        "passed": None if running else run.passed,
        "regression": _dumped(run.regression),
        "owner": owner.encode() if owner is not None and running else None,
    }


def finish_row(finish: RunFinish) -> FinishRow:
    """The columns `finish` sets; `passed` is the run verdict (§1.5 and no critical
    regression), which `last_passing_run` filters on."""
    regression = finish.regression
    return {
        "status": finish.status,
        "finished_at": finish.finished_at,
        "summary": finish.summary.model_dump(mode="json"),
        "duration_ms": finish.duration_ms,
        "token_usage": _dumped(finish.token_usage),
        "cost_usd": finish.cost_usd,
        "scheduling": _dumped(finish.scheduling),
        "passed": finish.summary.passed and (regression is None or regression.status != "critical"),
        "regression": _dumped(regression),
    }


def _dumped(model: BaseModel | None) -> JSONObject | None:
    """A model's JSON-mode dump; None stays None (SQL NULL)."""
    return None if model is None else model.model_dump(mode="json")
