"""Execution settings: thresholds, verdict bands, aggregation, concurrency, repeats."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from assay._strict_model import StrictModel
from assay.scoring import AggregatorSpec, BorderlineLevel, RepeatStrategy

__all__ = ["SuiteExecution", "TestExecution", "Unit", "VerdictBands", "VerdictSettings"]

Unit = Annotated[float, Field(ge=0.0, le=1.0)]


class VerdictBands(StrictModel):
    """Verdict bands: `pass` is the same knob as `threshold`; `borderline: null` turns it off."""

    pass_: Unit | None = Field(default=None, alias="pass")
    """Score at or above which a case passes (same as `threshold`)."""
    borderline: Unit | None = None
    """Lower bound of the borderline band (default 0.6); null disables the band."""

    @model_validator(mode="after")
    def _ordered(self) -> VerdictBands:
        if self.pass_ is not None and self.borderline is not None and self.borderline > self.pass_:
            raise ValueError(
                f"borderline ({self.borderline}) is above pass ({self.pass_}); the borderline "
                "band lies below the pass threshold"
            )
        return self

    def borderline_level(self) -> BorderlineLevel:
        """This level's borderline setting: a bound, "off" (explicit null), or None (unset)."""
        if "borderline" not in self.model_fields_set:
            return None
        return "off" if self.borderline is None else self.borderline


class VerdictSettings(StrictModel):
    """The verdict knobs every configuration level has: `threshold` and `verdicts`."""

    threshold: Unit | None = None
    """Case pass threshold (0–1). Overridden only by `--threshold` / `EvalConfig.threshold`."""
    verdicts: VerdictBands | None = None
    """Verdict bands; `verdicts.pass` is the same knob as `threshold`."""

    @model_validator(mode="after")
    def _one_threshold(self) -> VerdictSettings:
        bands_pass = self.verdicts.pass_ if self.verdicts else None
        if self.threshold is not None and bands_pass is not None and bands_pass != self.threshold:
            raise ValueError(
                f"threshold ({self.threshold}) and verdicts.pass ({bands_pass}) disagree; they "
                "are the same setting, keep one"
            )
        return self

    def threshold_level(self) -> float | None:
        """This level's threshold: `threshold` or `verdicts.pass`."""
        if self.threshold is not None:
            return self.threshold
        return self.verdicts.pass_ if self.verdicts else None

    def borderline_level(self) -> BorderlineLevel:
        """This level's borderline setting."""
        return self.verdicts.borderline_level() if self.verdicts else None


class TestExecution(VerdictSettings):
    """Per-test execution settings; each overrides the suite's."""

    aggregator: AggregatorSpec | None = None
    """How grader scores fold into the case score (default weighted_average)."""
    repeat: Annotated[int, Field(ge=1, le=1000)] | None = None
    """Run each case this many times and keep every sample."""
    repeat_strategy: RepeatStrategy | None = None
    """How samples reduce to the case result: mean, pass_at_k, pass_all, confidence_interval."""
    timeout_s: Annotated[float, Field(gt=0)] | None = None
    """Seconds the target may take for one case before the case is an error."""
    skip_defaults: bool | None = None
    """Do not append the suite-level `assertions` to this test."""
    rejudge_borderline: Annotated[int, Field(ge=0, le=10)] | None = None
    """Re-ask the judge this many more times when a case's score falls in the borderline band,
    and decide the verdict from the mean score of every ask (default 0: off)."""


class SuiteExecution(TestExecution):
    """Suite-wide execution settings: the per-test ones plus run-level knobs."""

    concurrency: Annotated[int, Field(ge=1, le=4096)] | None = None
    """How many target calls run at once (default 8); lowered automatically on HTTP 429."""
    judge_concurrency: Annotated[int, Field(ge=1, le=4096)] | None = None
    """How many judge calls run at once, separately from targets (default 8)."""
    max_retries: Annotated[int, Field(ge=0, le=20)] | None = None
    """Retries of a target call after a transient failure (429, 5xx, connection; default 3)."""
    metrics_pass_threshold: Unit | None = None
    """The run passes its metrics dimension when the mean case score reaches this (0.8)."""
    cases_pass_threshold: Unit | None = None
    """The run passes its cases dimension when this fraction of cases pass (1.0)."""
