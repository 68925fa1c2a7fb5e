"""The runner: plans a suite against a target and executes it with bounded concurrency."""

from assay.providers import DEFAULT_MAX_RETRIES, RetryPolicy
from assay.runner._case import CaseRunner
from assay.runner._dispatch import RayOptions
from assay.runner._execute import Resume, execute, new_run_id, snapshot_of
from assay.runner._plan import (
    DEFAULT_CONCURRENCY,
    CasePlan,
    RunOptions,
    RunPlan,
    iter_cases,
    missing_keys,
    plan_run,
)
from assay.runner._regression import RegressionSettings, check_baseline, track_resumed_run
from assay.runner._resume import (
    check_resumable,
    plan_for_resume,
    plan_from_snapshot,
    stored_suite_file,
)

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_MAX_RETRIES",
    "CasePlan",
    "CaseRunner",
    "RayOptions",
    "RegressionSettings",
    "Resume",
    "RetryPolicy",
    "RunOptions",
    "RunPlan",
    "check_baseline",
    "check_resumable",
    "execute",
    "iter_cases",
    "missing_keys",
    "new_run_id",
    "plan_for_resume",
    "plan_from_snapshot",
    "plan_run",
    "snapshot_of",
    "stored_suite_file",
    "track_resumed_run",
]
