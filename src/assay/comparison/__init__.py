"""Comparing runs: the pure diff of two runs, its statistics, and the regression status; and
the agreement of machine verdicts with human reviews (calibration)."""

from assay.comparison._calibration import (
    Agreement,
    Calibration,
    ReviewSummary,
    agreement,
    calibrate,
    review_summary,
)
from assay.comparison._diff import SIGNIFICANCE_LEVEL, case_status, compare
from assay.comparison._model import (
    CASE_STATUSES,
    CaseComparison,
    CaseStatus,
    CompareStatistics,
    CompareSummary,
    CompareThresholds,
    Comparison,
    GateName,
    GateState,
)
from assay.comparison._pairwise import (
    WILSON_Z95,
    PairwiseCase,
    PairwiseComparison,
    PairwiseOutcome,
    PairwiseResult,
    Preference,
    fold_preferences,
    summarise_pairwise,
    wilson_interval,
)
from assay.comparison._regression import (
    DEFAULT_CRITICAL_THRESHOLD,
    DEFAULT_REGRESSION_TOLERANCE,
    RegressionStatus,
    regression_status,
)
from assay.comparison._stats import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    bootstrap_resamples,
    mcnemar_exact_p,
    paired_bootstrap_ci95,
)
from assay.comparison._trend import Trend, TrendPoint, build_trend, least_squares_slope

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_SEED",
    "CASE_STATUSES",
    "DEFAULT_CRITICAL_THRESHOLD",
    "DEFAULT_REGRESSION_TOLERANCE",
    "SIGNIFICANCE_LEVEL",
    "WILSON_Z95",
    "Agreement",
    "Calibration",
    "CaseComparison",
    "CaseStatus",
    "CompareStatistics",
    "CompareSummary",
    "CompareThresholds",
    "Comparison",
    "GateName",
    "GateState",
    "PairwiseCase",
    "PairwiseComparison",
    "PairwiseOutcome",
    "PairwiseResult",
    "Preference",
    "RegressionStatus",
    "ReviewSummary",
    "Trend",
    "TrendPoint",
    "agreement",
    "bootstrap_resamples",
    "build_trend",
    "calibrate",
    "case_status",
    "compare",
    "fold_preferences",
    "least_squares_slope",
    "mcnemar_exact_p",
    "paired_bootstrap_ci95",
    "regression_status",
    "review_summary",
    "summarise_pairwise",
    "wilson_interval",
]
