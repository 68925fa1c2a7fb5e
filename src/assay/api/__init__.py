"""The public Python API shared by the CLI, the server and users' code."""

from assay.api._compare import compare_stored, resolve_run_ref
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
    "EvalConfig",
    "EvalSummary",
    "compare_stored",
    "evaluate",
    "evaluate_async",
    "open_cache",
    "prepare_resume",
    "read_export",
    "resolve_run_ref",
    "resume_run",
    "run_loaded",
    "run_plan",
    "write_export",
]
