"""Questions about a grader's kind that the plumbing asks without importing that kind's module
(the suite loader and the runner ask them of every grader; most suites hold no composite)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TypeGuard

if TYPE_CHECKING:
    from assay.graders._base import Grader
    from assay.graders.composite import Composite

__all__ = ["is_composite"]


def is_composite(grader: Grader) -> TypeGuard[Composite]:
    """`isinstance(grader, Composite)`: no composite exists before its module is imported, so
    until then the answer is no and nothing is imported to give it."""
    module = sys.modules.get("assay.graders.composite")
    return module is not None and isinstance(grader, module.Composite)
