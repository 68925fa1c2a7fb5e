"""promptfoo configs, converted to assay suites by `assay import promptfoo`."""

from assay.interop.promptfoo._convert import Conversion, convert_promptfoo

__all__ = ["Conversion", "convert_promptfoo"]
