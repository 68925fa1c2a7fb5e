"""SPEC §1.3 aggregators: the fold of graded results into one case score."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from assay.results import ErrorInfo, GraderResult, Verdict
from assay.scoring import (
    AggregatorSpec,
    AllOrNothing,
    CaseBands,
    Fold,
    Maximum,
    Minimum,
    SafetyGate,
    ThresholdCount,
    WeightedAverage,
    fold,
    grader_verdict,
    score_case,
)

SPEC_ADAPTER: TypeAdapter[AggregatorSpec] = TypeAdapter(AggregatorSpec)
BANDS = CaseBands(threshold=0.8, borderline=0.6)


def graded(
    name: str,
    score: float,
    *,
    weight: float = 1.0,
    verdict: Verdict | None = None,
    threshold: float = 0.8,
) -> GraderResult:
    return GraderResult(
        name=name,
        type="fake",
        score=score,
        verdict=verdict or grader_verdict(score, None, threshold),
        weight=weight,
    )


def scores(*values: float) -> list[GraderResult]:
    return [graded(f"g{i}", v) for i, v in enumerate(values)]


# ---- weighted_average ----------------------------------------------------------------------


def test_weighted_average_equal_weights_worked_example() -> None:
    assert fold(WeightedAverage(), scores(0.9, 0.8, 0.7)).score == pytest.approx(0.8)


def test_weighted_average_weights_3_1_1_worked_example() -> None:
    results = [
        graded("a", 0.9, weight=3),
        graded("b", 0.8, weight=1),
        graded("c", 0.7, weight=1),
    ]
    # (3·0.9 + 1·0.8 + 1·0.7) / (3 + 1 + 1) = 4.2 / 5
    assert fold(WeightedAverage(), results).score == pytest.approx(0.84)


def test_weighted_average_fractional_weights() -> None:
    results = [graded("a", 1.0, weight=0.25), graded("b", 0.0, weight=0.75)]
    assert fold(WeightedAverage(), results).score == pytest.approx(0.25)


def test_weighted_average_decides_no_verdict() -> None:
    assert fold(WeightedAverage(), scores(0.9)) == Fold(0.9, None)


def test_weighted_average_is_the_default_spec() -> None:
    assert WeightedAverage().type == "weighted_average"
    assert SPEC_ADAPTER.validate_python({"type": "weighted_average"}) == WeightedAverage()


# ---- minimum / maximum ---------------------------------------------------------------------


def test_minimum_is_lowest_score_regardless_of_weight() -> None:
    results = [graded("a", 0.9, weight=10), graded("b", 0.4, weight=0.1), graded("c", 0.7)]
    assert fold(Minimum(type="minimum"), results) == Fold(0.4)


def test_maximum_is_highest_score_regardless_of_weight() -> None:
    results = [graded("a", 0.9, weight=0.1), graded("b", 0.4, weight=10), graded("c", 0.7)]
    assert fold(Maximum(type="maximum"), results) == Fold(0.9)


# ---- safety_gate ---------------------------------------------------------------------------


def test_safety_gate_failing_gate_zeroes_the_score() -> None:
    results = [
        graded("safety", 0.5, verdict="fail"),
        graded("quality", 1.0),
        graded("style", 1.0),
    ]
    assert fold(SafetyGate(type="safety_gate", required=["safety"]), results) == Fold(0.0)


def test_safety_gate_any_named_gate_failing_zeroes_the_score() -> None:
    results = [
        graded("pii", 1.0, verdict="pass"),
        graded("toxicity", 0.1, verdict="fail"),
        graded("quality", 1.0),
    ]
    spec = SafetyGate(type="safety_gate", required=["pii", "toxicity"])
    assert fold(spec, results).score == 0.0


def test_safety_gate_passing_gates_give_weighted_average_of_the_others() -> None:
    results = [
        graded("safety", 1.0, verdict="pass", weight=5),
        graded("quality", 0.6, weight=1),
        graded("style", 0.9, weight=2),
    ]
    # the gate's own score and weight are left out: (0.6·1 + 0.9·2) / 3
    folded = fold(SafetyGate(type="safety_gate", required=["safety"]), results)
    assert folded.score == pytest.approx(0.8)
    assert folded.verdict is None


def test_safety_gate_with_only_gates_averages_the_gates() -> None:
    results = [graded("a", 0.9, verdict="pass"), graded("b", 0.7, verdict="pass")]
    assert fold(SafetyGate(type="safety_gate", required=["a", "b"]), results).score == (
        pytest.approx(0.8)
    )


def test_safety_gate_uses_the_gate_verdict_not_its_score() -> None:
    # a gate with min_score 0.95 fails at 0.9 even though 0.9 passes the case threshold
    results = [graded("safety", 0.9, verdict="fail"), graded("quality", 1.0)]
    assert fold(SafetyGate(type="safety_gate", required=["safety"]), results).score == 0.0


# ---- all_or_nothing ------------------------------------------------------------------------


def test_all_or_nothing_every_grader_over_bar_gives_weighted_average() -> None:
    results = [graded("a", 0.9, weight=2), graded("b", 0.6), graded("c", 0.7)]
    folded = fold(AllOrNothing(type="all_or_nothing", threshold=0.6), results)
    assert folded.score == pytest.approx((1.8 + 0.6 + 0.7) / 4)


def test_all_or_nothing_one_grader_under_bar_gives_zero() -> None:
    results = [graded("a", 1.0), graded("b", 0.59), graded("c", 1.0)]
    assert fold(AllOrNothing(type="all_or_nothing", threshold=0.6), results) == Fold(0.0)


# ---- threshold (count of passing graders) --------------------------------------------------


def test_threshold_aggregator_fraction_of_passing_verdicts_passes() -> None:
    results = [
        graded("a", 0.9, verdict="pass"),
        graded("b", 0.85, verdict="pass"),
        graded("c", 0.2, verdict="fail"),
    ]
    folded = fold(ThresholdCount(type="threshold", threshold=0.6), results)
    assert folded.score == pytest.approx(2 / 3)
    assert folded.verdict == "pass"


def test_threshold_aggregator_fraction_under_bar_fails() -> None:
    results = [
        graded("a", 0.9, verdict="pass"),
        graded("b", 0.85, verdict="pass"),
        graded("c", 0.2, verdict="fail"),
    ]
    folded = fold(ThresholdCount(type="threshold", threshold=0.7), results)
    assert folded.score == pytest.approx(2 / 3)
    assert folded.verdict == "fail"


def test_threshold_aggregator_exactly_at_bar_passes() -> None:
    results = [graded("a", 1.0, verdict="pass"), graded("b", 0.0, verdict="fail")]
    assert fold(ThresholdCount(type="threshold", threshold=0.5), results) == Fold(0.5, "pass")


def test_threshold_aggregator_counts_verdicts_not_scores() -> None:
    # high score with a failing verdict (min_score) is not a pass
    results = [graded("a", 0.95, verdict="fail"), graded("b", 0.95, verdict="pass")]
    assert fold(ThresholdCount(type="threshold", threshold=1.0), results) == Fold(0.5, "fail")


# ---- fold preconditions --------------------------------------------------------------------


def test_fold_of_nothing_raises() -> None:
    with pytest.raises(ValueError, match="nothing to aggregate"):
        fold(WeightedAverage(), [])


def test_fold_refuses_errored_results() -> None:
    errored = GraderResult(
        name="x",
        type="fake",
        score=None,
        verdict="error",
        error=ErrorInfo(type="RuntimeError", message="boom"),
    )
    with pytest.raises(ValueError, match="errored"):
        fold(WeightedAverage(), [graded("a", 1.0), errored])


# ---- weight 0 through score_case (reported but excluded) -----------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (WeightedAverage(), 0.8),  # (0.9 + 0.7) / 2, the weight-0 0.0 is not averaged in
        (Minimum(type="minimum"), 0.7),  # the weight-0 0.0 is not the minimum
        (Maximum(type="maximum"), 0.9),
        (AllOrNothing(type="all_or_nothing", threshold=0.5), 0.8),  # 0.0 does not veto
    ],
)
def test_weight_zero_grader_is_excluded_from_every_aggregator(
    spec: AggregatorSpec, expected: float
) -> None:
    results = [graded("a", 0.9), graded("zero", 0.0, weight=0), graded("b", 0.7)]
    outcome = score_case(results, aggregator=spec, bands=BANDS)
    assert outcome.score == pytest.approx(expected)


def test_weight_zero_grader_maximum_not_inflated() -> None:
    results = [graded("a", 0.5), graded("zero", 1.0, weight=0)]
    outcome = score_case(results, aggregator=Maximum(type="maximum"), bands=BANDS)
    assert outcome.score == 0.5


def test_weight_zero_grader_not_counted_by_threshold_aggregator() -> None:
    results = [
        graded("a", 0.9, verdict="pass"),
        graded("zero", 0.1, verdict="fail", weight=0),
    ]
    outcome = score_case(
        results, aggregator=ThresholdCount(type="threshold", threshold=1.0), bands=BANDS
    )
    assert (outcome.score, outcome.verdict) == (1.0, "pass")


def test_weight_zero_grader_is_still_reported() -> None:
    # score_case does not drop anything from the list it is given
    results = [graded("a", 0.9), graded("zero", 0.0, weight=0)]
    before = [r.model_copy() for r in results]
    score_case(results, aggregator=WeightedAverage(), bands=BANDS)
    assert results == before


# ---- the threshold aggregator decides the case verdict -------------------------------------


def test_threshold_aggregator_pass_overrides_case_threshold() -> None:
    results = [
        graded("a", 0.9, verdict="pass"),
        graded("b", 0.9, verdict="pass"),
        graded("c", 0.1, verdict="fail"),
    ]
    outcome = score_case(
        results, aggregator=ThresholdCount(type="threshold", threshold=0.6), bands=BANDS
    )
    # 2/3 < 0.8 would fail score_to_verdict; the aggregator's own rule decides
    assert outcome.score == pytest.approx(2 / 3)
    assert outcome.verdict == "pass"


def test_threshold_aggregator_fail_is_not_turned_into_borderline() -> None:
    results = [
        graded("a", 0.9, verdict="pass"),
        graded("b", 0.9, verdict="pass"),
        graded("c", 0.1, verdict="fail"),
    ]
    outcome = score_case(
        results, aggregator=ThresholdCount(type="threshold", threshold=0.7), bands=BANDS
    )
    # 2/3 sits in the 0.6 to 0.8 borderline band, but the aggregator said fail
    assert outcome.verdict == "fail"


# ---- spec validation -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("short", "expected"),
    [
        ("minimum", Minimum(type="minimum")),
        ("maximum", Maximum(type="maximum")),
        ("weighted_average", WeightedAverage()),
    ],
)
def test_short_string_form_validates(short: str, expected: AggregatorSpec) -> None:
    parsed = SPEC_ADAPTER.validate_python(short)
    assert parsed == expected
    assert type(parsed) is type(expected)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {"type": "safety_gate", "required": ["pii"]},
            SafetyGate(type="safety_gate", required=["pii"]),
        ),
        (
            {"type": "all_or_nothing", "threshold": 0.7},
            AllOrNothing(type="all_or_nothing", threshold=0.7),
        ),
        ({"type": "threshold", "threshold": 1.0}, ThresholdCount(type="threshold", threshold=1.0)),
        ({"type": "threshold", "threshold": 0.0}, ThresholdCount(type="threshold", threshold=0.0)),
    ],
)
def test_mapping_form_validates(data: dict[str, object], expected: AggregatorSpec) -> None:
    assert SPEC_ADAPTER.validate_python(data) == expected


@pytest.mark.parametrize(
    "data",
    [
        {"type": "threshold", "threshold": 1.5},
        {"type": "threshold", "threshold": -0.1},
        {"type": "threshold"},
        {"type": "all_or_nothing", "threshold": 1.01},
        {"type": "all_or_nothing"},
        {"type": "safety_gate"},
        {"type": "safety_gate", "required": []},
        "safety_gate",  # short form of an aggregator that needs options
        "threshold",
        "median",
        {"type": "median"},
        {"type": "minimum", "threshold": 0.5},  # unknown key
    ],
    ids=[
        "threshold>1",
        "threshold<0",
        "threshold-missing",
        "all_or_nothing>1",
        "all_or_nothing-missing",
        "safety_gate-no-required",
        "safety_gate-empty-required",
        "short-safety_gate",
        "short-threshold",
        "short-unknown",
        "unknown-type",
        "unknown-key",
    ],
)
def test_bad_specs_are_rejected(data: object) -> None:
    with pytest.raises(ValidationError):
        SPEC_ADAPTER.validate_python(data)


def test_threshold_over_one_error_names_the_field() -> None:
    with pytest.raises(ValidationError) as info:
        SPEC_ADAPTER.validate_python({"type": "threshold", "threshold": 1.5})
    (error,) = info.value.errors()
    assert error["loc"][-1] == "threshold"
    assert error["type"] == "less_than_equal"


def test_safety_gate_without_required_error_names_the_field() -> None:
    with pytest.raises(ValidationError) as info:
        SPEC_ADAPTER.validate_python({"type": "safety_gate"})
    (error,) = info.value.errors()
    assert error["loc"][-1] == "required"
    assert error["type"] == "missing"


def test_specs_are_frozen() -> None:
    spec = AllOrNothing(type="all_or_nothing", threshold=0.5)
    with pytest.raises(ValidationError):
        spec.threshold = 0.9  # type: ignore[misc]


def test_all_or_nothing_bar_tolerates_float_noise() -> None:
    noisy = (0.7 + 0.8 + 0.9) / 3  # 0.7999999999999999
    results = [graded("a", noisy), graded("b", 1.0)]
    folded = fold(AllOrNothing(type="all_or_nothing", threshold=0.8), results)
    assert folded.score == pytest.approx(0.9)
