"""Helpers shared by the grader tests: validate a spec, grade one output, read config errors."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError
from tests.conftest import write

from assay.config import load_suite
from assay.errors import ConfigError
from assay.graders import GraderSpec, GradingContext
from assay.results import JSON, GraderResult

__all__ = ["SPEC", "error_of", "grade", "load_errors"]

SPEC: TypeAdapter[Any] = TypeAdapter(GraderSpec)
"""Validates any grader spec, as the suite loader does."""


def grade(
    spec: dict[str, Any],
    output: str,
    *,
    expected: JSON = None,
    threshold: float = 0.8,
    **context: Any,
) -> GraderResult:
    """Validate `spec` the way a suite does, then grade one output.

    `expected` is the test's expected_output; other GradingContext fields pass through.
    """
    grader = SPEC.validate_python(spec)
    ctx = GradingContext(
        case_id="c", output=output, threshold=threshold, expected_output=expected, **context
    )
    result: GraderResult = asyncio.run(grader.grade(ctx))
    return result


def error_of(spec: dict[str, Any]) -> str:
    """The message of the single validation error `spec` must raise."""
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python(spec)
    errors = info.value.errors()
    assert len(errors) == 1, errors
    return str(errors[0]["msg"])


def load_errors(tmp_path: Path, body: str) -> list[str]:
    """The located errors of loading a suite with a fake target and this YAML `body`."""
    path = write(tmp_path / "s.eval.yaml", "name: s\ntarget: {type: fake, default: ok}\n" + body)
    with pytest.raises(ConfigError) as info:
        load_suite(path)
    return [str(issue) for issue in info.value.issues]
