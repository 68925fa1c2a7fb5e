"""The suite's `regression:` block (SPEC §6): which earlier run a run is measured against, and
how far its mean score may fall before the run warns or fails."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator, model_validator

from assay._strict_model import StrictModel
from assay.config._execution import Unit

__all__ = [
    "DEFAULT_CASE_SCORE_DELTA",
    "DEFAULT_CRITICAL_THRESHOLD",
    "DEFAULT_TOLERANCE",
    "BaselineChoice",
    "RegressionConfig",
]

# The same defaults as `assay.comparison` (which sits above config and cannot be imported here);
# tests/runner/test_runner_regression.py fails if the two drift apart.
DEFAULT_TOLERANCE = 0.02
DEFAULT_CRITICAL_THRESHOLD = 0.10
DEFAULT_CASE_SCORE_DELTA = 0.05

BaselineChoice = Annotated[str, Field(examples=["last_passing", "pinned"])]
"""A strategy name (`last_passing`, `pinned`), or the id (or a unique id prefix) of a stored
run."""


class RegressionConfig(StrictModel):
    """Compare every run of the suite with a baseline run; a critical drop fails the run."""

    strategy: BaselineChoice = "last_passing"
    """Which run is the baseline: `last_passing` (the latest earlier run of this suite and
    target that passed), `pinned` (the run pinned with `assay baseline pin`), or a run id.
    `assay run --baseline` overrides it."""
    tolerance: Unit = DEFAULT_TOLERANCE
    """A drop of the mean case score (0–1) up to this is noise: the status stays `clean`."""
    critical_threshold: Unit = DEFAULT_CRITICAL_THRESHOLD
    """A drop of the mean case score (0–1) of at least this is `critical` and fails the run;
    between `tolerance` and this it is a `warning`."""
    case_score_delta: Unit = DEFAULT_CASE_SCORE_DELTA
    """Per case, when pass/not-pass did not flip: a score change larger than this makes the
    case regressed or improved (as in `assay compare`)."""

    @field_validator("strategy")
    @classmethod
    def _one_word(cls, value: str) -> str:
        if not value or any(char.isspace() for char in value):
            raise ValueError(
                f"{value!r} is not a strategy: give last_passing, pinned, or a stored run's id"
            )
        return value

    @model_validator(mode="after")
    def _ordered(self) -> RegressionConfig:
        if self.tolerance > self.critical_threshold:
            raise ValueError(
                f"tolerance ({self.tolerance}) is above critical_threshold "
                f"({self.critical_threshold}); a drop becomes a warning past tolerance and "
                "critical at critical_threshold, so tolerance must not exceed it"
            )
        return self
