"""assay: evaluate LLM applications and AI agents.

Heavy modules load on first use so `import assay` and `assay --help` stay fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay._version import __version__

if TYPE_CHECKING:
    from assay.api import EvalConfig, EvalSummary, evaluate, evaluate_async
    from assay.config import load_suite

__all__ = ["EvalConfig", "EvalSummary", "__version__", "evaluate", "evaluate_async", "load_suite"]

_LAZY = {
    "EvalConfig": "assay.api",
    "EvalSummary": "assay.api",
    "evaluate": "assay.api",
    "evaluate_async": "assay.api",
    "load_suite": "assay.config",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'assay' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
