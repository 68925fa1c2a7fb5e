"""The public Python API shared by the CLI, the server and users' code."""

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

__all__ = [
    "EvalConfig",
    "EvalSummary",
    "evaluate",
    "evaluate_async",
    "open_cache",
    "prepare_resume",
    "resume_run",
    "run_loaded",
    "run_plan",
]
