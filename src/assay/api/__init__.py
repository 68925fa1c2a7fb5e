"""The public Python API shared by the CLI, the server and users' code.

Names are imported on first use (PEP 562): running suites pulls in every grader and target,
and the commands that only read stored runs (`compare`, `runs export`) need none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay._lazy import lazy_getattr

if TYPE_CHECKING:
    from assay.api._callables import CallableTarget, FunctionGrader
    from assay.api._compare import (
        BASELINE_REF,
        compare,
        compare_stored,
        is_file_ref,
        resolve_run_ref,
    )
    from assay.api._dates import DATE_FORMATS, run_time_bound
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
    from assay.api._export import (
        InvalidExportError,
        Upload,
        parse_export,
        parse_upload,
        read_export,
        write_export,
    )
    from assay.api._grade import grade, grade_async
    from assay.api._order import suite_order
    from assay.api._pairwise import (
        DEFAULT_JUDGE_CONCURRENCY,
        case_metadata,
        judge_pairwise,
        judge_pairwise_async,
        pairwise_judge,
        run_judge_concurrency,
    )
    from assay.api._reviews import RunReviews, run_reviews

_MODULES = {
    "assay.api._callables": ["CallableTarget", "FunctionGrader"],
    "assay.api._compare": [
        "BASELINE_REF",
        "compare",
        "compare_stored",
        "is_file_ref",
        "resolve_run_ref",
    ],
    "assay.api._dates": ["DATE_FORMATS", "run_time_bound"],
    "assay.api._evaluate": [
        "EvalConfig",
        "EvalSummary",
        "evaluate",
        "evaluate_async",
        "open_cache",
        "prepare_resume",
        "resume_run",
        "run_loaded",
        "run_plan",
    ],
    "assay.api._export": [
        "InvalidExportError",
        "Upload",
        "parse_export",
        "parse_upload",
        "read_export",
        "write_export",
    ],
    "assay.api._grade": ["grade", "grade_async"],
    "assay.api._order": ["suite_order"],
    "assay.api._reviews": ["RunReviews", "run_reviews"],
    "assay.api._pairwise": [
        "DEFAULT_JUDGE_CONCURRENCY",
        "case_metadata",
        "judge_pairwise",
        "judge_pairwise_async",
        "pairwise_judge",
        "run_judge_concurrency",
    ],
}

__all__ = [
    "BASELINE_REF",
    "DATE_FORMATS",
    "DEFAULT_JUDGE_CONCURRENCY",
    "CallableTarget",
    "EvalConfig",
    "EvalSummary",
    "FunctionGrader",
    "InvalidExportError",
    "RunReviews",
    "Upload",
    "case_metadata",
    "compare",
    "compare_stored",
    "evaluate",
    "evaluate_async",
    "grade",
    "grade_async",
    "is_file_ref",
    "judge_pairwise",
    "judge_pairwise_async",
    "open_cache",
    "pairwise_judge",
    "parse_export",
    "parse_upload",
    "prepare_resume",
    "read_export",
    "resolve_run_ref",
    "resume_run",
    "run_judge_concurrency",
    "run_loaded",
    "run_plan",
    "run_reviews",
    "run_time_bound",
    "suite_order",
    "write_export",
]


__getattr__ = lazy_getattr(__name__, _MODULES, globals())
