"""The runner: plans a suite against a target and executes it with bounded concurrency."""

from assay.runner._case import run_case
from assay.runner._execute import execute, new_run_id, now_iso
from assay.runner._plan import (
    DEFAULT_CONCURRENCY,
    CasePlan,
    RunOptions,
    RunPlan,
    iter_cases,
    plan_run,
)

__all__ = [
    "DEFAULT_CONCURRENCY",
    "CasePlan",
    "RunOptions",
    "RunPlan",
    "execute",
    "iter_cases",
    "new_run_id",
    "now_iso",
    "plan_run",
    "run_case",
]
