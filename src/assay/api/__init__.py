"""The public Python API shared by the CLI, the server and users' code."""

from assay.api._compare import BASELINE_REF, compare_stored, is_file_ref, resolve_run_ref
from assay.api._evaluate import (
    EvalConfig,
    EvalSummary,
    evaluate,
    evaluate_async,
    open_cache,
    prepare_resume,
    resume_run,
    run_loaded,
    run_plan,
)
from assay.api._export import read_export, write_export

__all__ = [
    "BASELINE_REF",
    "EvalConfig",
    "EvalSummary",
    "compare_stored",
    "evaluate",
    "evaluate_async",
    "is_file_ref",
    "open_cache",
    "prepare_resume",
    "read_export",
    "resolve_run_ref",
    "resume_run",
    "run_loaded",
    "run_plan",
    "write_export",
]
