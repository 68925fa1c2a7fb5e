"""Scoring rules as pure functions: verdicts, thresholds, aggregators, repeats, run summary."""

from assay.scoring._aggregators import (
    AggregatorSpec,
    AllOrNothing,
    Fold,
    Maximum,
    Minimum,
    SafetyGate,
    ThresholdCount,
    WeightedAverage,
    fold,
)
from assay.scoring._case import CaseBands, CaseOutcome, score_case
from assay.scoring._fallbacks import Fallback, case_fallbacks, count_fallbacks
from assay.scoring._repeats import Reduction, RepeatStrategy, reduce_samples, t_interval95
from assay.scoring._summary import (
    DEFAULT_CASES_PASS_THRESHOLD,
    DEFAULT_METRICS_PASS_THRESHOLD,
    JudgeSpend,
    SummaryBuilder,
)
from assay.scoring._turns import TurnAggregation, fold_turns
from assay.scoring._verdicts import (
    DEFAULT_BORDERLINE,
    DEFAULT_THRESHOLD,
    VERDICT_RANK,
    BorderlineLevel,
    grader_verdict,
    resolve_borderline,
    resolve_threshold,
    score_to_verdict,
)

__all__ = [
    "DEFAULT_BORDERLINE",
    "DEFAULT_CASES_PASS_THRESHOLD",
    "DEFAULT_METRICS_PASS_THRESHOLD",
    "DEFAULT_THRESHOLD",
    "VERDICT_RANK",
    "AggregatorSpec",
    "AllOrNothing",
    "BorderlineLevel",
    "CaseBands",
    "CaseOutcome",
    "Fallback",
    "Fold",
    "JudgeSpend",
    "Maximum",
    "Minimum",
    "Reduction",
    "RepeatStrategy",
    "SafetyGate",
    "SummaryBuilder",
    "ThresholdCount",
    "TurnAggregation",
    "WeightedAverage",
    "case_fallbacks",
    "count_fallbacks",
    "fold",
    "fold_turns",
    "grader_verdict",
    "reduce_samples",
    "resolve_borderline",
    "resolve_threshold",
    "score_case",
    "score_to_verdict",
    "t_interval95",
]
