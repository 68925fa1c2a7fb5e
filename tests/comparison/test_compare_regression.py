"""The SPEC §6 regression metric: new / clean / warning / critical at and around its bounds."""

from __future__ import annotations

import pytest

from assay.comparison import regression_status
from assay.errors import UsageError


@pytest.mark.parametrize(
    ("base", "head", "status"),
    [
        pytest.param(None, 0.5, "new", id="no-baseline"),
        pytest.param(0.8, 0.95, "clean", id="improvement"),
        pytest.param(0.8, 0.8, "clean", id="same"),
        pytest.param(0.8, 0.79, "clean", id="below-tolerance"),
        pytest.param(0.8, 0.78, "clean", id="at-tolerance"),  # 0.8 - 0.78 is 0.0200000000004
        pytest.param(0.8, 0.779, "warning", id="above-tolerance"),
        pytest.param(0.8, 0.701, "warning", id="below-critical"),
        pytest.param(0.8, 0.7, "critical", id="at-critical"),
        pytest.param(0.8, 0.5, "critical", id="above-critical"),
    ],
)
def test_default_bounds(base: float | None, head: float, status: str) -> None:
    assert regression_status(base, head) == status


def test_bounds_are_overridable() -> None:
    assert regression_status(0.9, 0.85, tolerance=0.05, critical_threshold=0.2) == "clean"
    assert regression_status(0.9, 0.8, tolerance=0.05, critical_threshold=0.2) == "warning"
    assert regression_status(0.9, 0.7, tolerance=0.05, critical_threshold=0.2) == "critical"
    # equal bounds: no warning band, a drop is clean up to the bound and critical at it
    assert regression_status(0.9, 0.8, tolerance=0.1, critical_threshold=0.1) == "critical"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"tolerance": 0.2, "critical_threshold": 0.1},
            "regression tolerance (0.2) must not exceed critical_threshold (0.1)",
        ),
        ({"tolerance": -0.1}, "regression tolerance must be between 0 and 1, got -0.1"),
        (
            {"critical_threshold": 10},
            "regression critical_threshold must be between 0 and 1, got 10",
        ),
    ],
)
def test_bad_bounds_are_usage_errors(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(UsageError) as err:
        regression_status(0.8, 0.7, **kwargs)
    assert str(err.value) == message
