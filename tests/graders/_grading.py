"""Helpers shared by the grader tests: validate a grader spec, and read its one config error."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from assay.graders import GraderSpec

__all__ = ["SPEC", "error_of"]

SPEC: TypeAdapter[Any] = TypeAdapter(GraderSpec)
"""Validates any grader spec, as the suite loader does."""


def error_of(spec: dict[str, Any]) -> str:
    """The message of the single validation error `spec` must raise."""
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python(spec)
    errors = info.value.errors()
    assert len(errors) == 1, errors
    return str(errors[0]["msg"])
