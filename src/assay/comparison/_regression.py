"""The regression metric of SPEC §6: how far a run's mean score fell below its baseline's.

Where `compare` diffs two runs case by case, this is the one-word status a run carries against
its baseline (`last_passing` or `pinned`): it is what `assay run --baseline` and a suite's
`regression:` block report.
"""

from __future__ import annotations

from assay.errors import UsageError
from assay.results import RegressionStatus

__all__ = [
    "DEFAULT_CRITICAL_THRESHOLD",
    "DEFAULT_REGRESSION_TOLERANCE",
    "RegressionStatus",
    "regression_status",
]

DEFAULT_REGRESSION_TOLERANCE = 0.02
"""A drop of the mean score up to this (0–1) is noise: the status stays `clean`."""

DEFAULT_CRITICAL_THRESHOLD = 0.10
"""A drop of the mean score of at least this (0–1) is `critical`."""

_DIGITS = 12  # as in compare: float noise must not push a drop across a bound


def regression_status(
    base_score: float | None,
    head_score: float,
    *,
    tolerance: float = DEFAULT_REGRESSION_TOLERANCE,
    critical_threshold: float = DEFAULT_CRITICAL_THRESHOLD,
) -> RegressionStatus:
    """The regression status of a run's mean score against its baseline's (both 0–1).

    - `new`: there is no baseline (`base_score` is None);
    - `clean`: the score rose, or fell by at most `tolerance`;
    - `warning`: it fell by more than `tolerance` and less than `critical_threshold`;
    - `critical`: it fell by `critical_threshold` or more.

    Raises:
        UsageError: A bound is outside 0–1, or `tolerance` exceeds `critical_threshold`
            (the `warning` band would be empty and the statuses contradictory).
    """
    for name, value in (("tolerance", tolerance), ("critical_threshold", critical_threshold)):
        if not 0.0 <= value <= 1.0:
            raise UsageError(f"regression {name} must be between 0 and 1, got {value}")
    if tolerance > critical_threshold:
        raise UsageError(
            f"regression tolerance ({tolerance}) must not exceed critical_threshold "
            f"({critical_threshold})"
        )
    if base_score is None:
        return "new"
    drop = round(base_score - head_score, _DIGITS)
    if drop >= critical_threshold:
        return "critical"
    if drop > tolerance:
        return "warning"
    return "clean"
