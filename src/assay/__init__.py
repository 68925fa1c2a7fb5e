"""assay: evaluate LLM applications and AI agents.

Heavy modules load on first use so `import assay` and `assay --help` stay fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay._version import __version__

if TYPE_CHECKING:
    from assay.api import (
        EvalConfig,
        EvalSummary,
        compare,
        evaluate,
        evaluate_async,
        grade,
        grade_async,
    )
    from assay.comparison import CompareThresholds, Comparison
    from assay.config import LoadedSuite, load_suite
    from assay.errors import ConfigError, UsageError
    from assay.results import (
        CaseResult,
        Detail,
        ErrorInfo,
        ExpectedOutcomeResult,
        GraderResult,
        RunResult,
        RunSummary,
        TargetOutput,
        ToolCall,
        Verdict,
    )

__all__ = [
    "CaseResult",
    "CompareThresholds",
    "Comparison",
    "ConfigError",
    "Detail",
    "ErrorInfo",
    "EvalConfig",
    "EvalSummary",
    "ExpectedOutcomeResult",
    "GraderResult",
    "LoadedSuite",
    "RunResult",
    "RunSummary",
    "TargetOutput",
    "ToolCall",
    "UsageError",
    "Verdict",
    "__version__",
    "compare",
    "evaluate",
    "evaluate_async",
    "grade",
    "grade_async",
    "load_suite",
]

_LAZY = {
    "EvalConfig": "assay.api",
    "EvalSummary": "assay.api",
    "compare": "assay.api",
    "evaluate": "assay.api",
    "evaluate_async": "assay.api",
    "grade": "assay.api",
    "grade_async": "assay.api",
    "CompareThresholds": "assay.comparison",
    "Comparison": "assay.comparison",
    "LoadedSuite": "assay.config",
    "load_suite": "assay.config",
    "ConfigError": "assay.errors",
    "UsageError": "assay.errors",
    "CaseResult": "assay.results",
    "Detail": "assay.results",
    "ErrorInfo": "assay.results",
    "ExpectedOutcomeResult": "assay.results",
    "GraderResult": "assay.results",
    "RunResult": "assay.results",
    "RunSummary": "assay.results",
    "TargetOutput": "assay.results",
    "ToolCall": "assay.results",
    "Verdict": "assay.results",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'assay' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this hook
    return value
