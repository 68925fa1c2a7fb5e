"""promptfoo configs, converted to assay suites by `assay import promptfoo`.

Names are imported on first use (PEP 562): AgentV's v5 reader borrows the assertion mapping
(`assay.interop.promptfoo._asserts`) without loading the converter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay._lazy import lazy_getattr

if TYPE_CHECKING:
    from assay.interop.promptfoo._convert import Conversion, convert_promptfoo

_MODULES = {"assay.interop.promptfoo._convert": ["Conversion", "convert_promptfoo"]}

__all__ = ["Conversion", "convert_promptfoo"]

__getattr__ = lazy_getattr(__name__, _MODULES, globals())
