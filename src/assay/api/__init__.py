"""The public Python API shared by the CLI, the server and users' code.

Names are imported on first use (PEP 562): running suites pulls in every grader and target,
and the commands that only read stored runs (`compare`, `runs export`) need none of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_MODULES = {
    "assay.api._compare": ["BASELINE_REF", "compare_stored", "is_file_ref", "resolve_run_ref"],
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
    "assay.api._export": ["read_export", "write_export"],
}
_WHERE = {name: module for module, names in _MODULES.items() for name in names}

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


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'assay.api' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value
