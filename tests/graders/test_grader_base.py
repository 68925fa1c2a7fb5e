"""The Grader base (SPEC §1.1, §1.2, CONVENTIONS "Graders"): negate, errors, grader verdict."""

from __future__ import annotations

import asyncio
from typing import Literal

import pytest
from pydantic import ValidationError

from assay.graders._base import Grader, GradingContext, Measurement
from assay.results import Detail, ErrorInfo, GraderResult, TokenUsage, Verdict


def ctx(threshold: float = 0.8) -> GradingContext:
    return GradingContext(case_id="c1", output="hello world", threshold=threshold)


class Fixed(Grader):
    """Reports a fixed measurement."""

    type: Literal["fixed"] = "fixed"
    value: float = 1.0
    passed_checks: tuple[str, ...] = ()
    failed_checks: tuple[str, ...] = ()
    forced: Verdict | None = None

    async def measure(self, ctx: GradingContext) -> Measurement:
        return Measurement(
            score=self.value,
            hits=list(self.passed_checks),
            misses=list(self.failed_checks),
            reasoning="fixed",
            details=[Detail(check=f"fixed.{c}", passed=True) for c in self.passed_checks]
            + [Detail(check=f"fixed.{c}", passed=False) for c in self.failed_checks],
            verdict=self.forced,
        )


class Crashing(Grader):
    """Raises from measure."""

    type: Literal["crashing"] = "crashing"
    message: str = "judge unreachable"

    async def measure(self, ctx: GradingContext) -> Measurement:
        raise RuntimeError(self.message)


class SilentCrash(Grader):
    type: Literal["silent-crash"] = "silent-crash"

    async def measure(self, ctx: GradingContext) -> Measurement:
        raise ValueError


class Cancelled(Grader):
    type: Literal["cancelled"] = "cancelled"

    async def measure(self, ctx: GradingContext) -> Measurement:
        raise asyncio.CancelledError


class Judged(Grader):
    type: Literal["judged"] = "judged"

    async def measure(self, ctx: GradingContext) -> Measurement:
        return Measurement(
            score=0.75,
            token_usage=TokenUsage(input=10, output=5),
            cost_usd=0.002,
            judge_model="judge-1",
            children=[GraderResult(name="kid", type="fixed", score=1.0, verdict="pass")],
        )


class ManyDetails(Grader):
    type: Literal["many-details"] = "many-details"
    failed: int = 12
    passed: int = 2

    async def measure(self, ctx: GradingContext) -> Measurement:
        details = [Detail(check=f"ok.{i}", passed=True) for i in range(self.passed)]
        details += [Detail(check=f"bad.{i}", passed=False) for i in range(self.failed)]
        return Measurement(score=0.5, details=details)


def grade(grader: Grader, threshold: float = 0.8) -> GraderResult:
    return asyncio.run(grader.grade(ctx(threshold)))


# ---- a plain result ------------------------------------------------------------------------


def test_plain_result_carries_the_common_options() -> None:
    result = grade(Fixed(value=0.9, passed_checks=("a",), failed_checks=("b",), weight=2))
    assert result.name == "fixed"  # defaults to the type
    assert result.type == "fixed"
    assert result.score == 0.9
    assert result.verdict == "pass"
    assert result.weight == 2
    assert result.required is False
    assert result.min_score is None
    assert result.hits == ["a"]
    assert result.misses == ["b"]
    assert result.reasoning == "fixed"
    assert result.details == [
        Detail(check="fixed.a", passed=True),
        Detail(check="fixed.b", passed=False),
    ]
    assert result.error is None
    assert result.duration_ms >= 0.0


def test_name_overrides_type_in_reports() -> None:
    grader = Fixed(name="politeness")
    assert grader.display_name == "politeness"
    assert grade(grader).name == "politeness"


def test_judge_fields_are_passed_through() -> None:
    result = grade(Judged())
    assert result.token_usage == TokenUsage(input=10, output=5)
    assert result.cost_usd == 0.002
    assert result.judge_model == "judge-1"
    assert [c.name for c in result.children] == ["kid"]


# ---- grader verdict: min_score vs the case threshold (SPEC §1.2) ---------------------------


@pytest.mark.parametrize(
    ("score", "min_score", "threshold", "expected"),
    [
        (0.8, None, 0.8, "pass"),  # at the case threshold
        (0.79, None, 0.8, "fail"),
        (0.6, None, 0.5, "pass"),  # the context's threshold, not DEFAULT_THRESHOLD
        (0.75, 0.7, 0.8, "pass"),  # min_score replaces the case threshold
        (0.7, 0.7, 0.8, "pass"),
        (0.69, 0.7, 0.8, "fail"),
        (0.85, 0.9, 0.8, "fail"),
    ],
)
def test_min_score_or_case_threshold_decides_the_verdict(
    score: float, min_score: float | None, threshold: float, expected: str
) -> None:
    result = grade(Fixed(value=score, min_score=min_score), threshold)
    assert result.verdict == expected
    assert result.min_score == min_score


def test_required_is_reported_and_does_not_change_the_grader_verdict() -> None:
    assert grade(Fixed(value=0.75, required=True)).verdict == "fail"
    assert grade(Fixed(value=0.75, required=True, min_score=0.7)).verdict == "pass"
    assert grade(Fixed(value=0.75, required=True)).required is True


# ---- negate --------------------------------------------------------------------------------


def test_negate_flips_score_hits_misses_and_details() -> None:
    result = grade(Fixed(value=0.25, passed_checks=("a",), failed_checks=("b", "c"), negate=True))
    assert result.score == 0.75
    assert result.hits == ["b", "c"]
    assert result.misses == ["a"]
    assert result.details == [
        Detail(check="fixed.a", passed=False),
        Detail(check="fixed.b", passed=True),
        Detail(check="fixed.c", passed=True),
    ]
    assert result.reasoning == "fixed"


def test_negate_verdict_follows_the_negated_score() -> None:
    assert grade(Fixed(value=0.1, negate=True)).verdict == "pass"  # 0.9
    assert grade(Fixed(value=0.9, negate=True)).score == pytest.approx(0.1)
    assert grade(Fixed(value=0.9, negate=True)).verdict == "fail"


@pytest.mark.parametrize(("value", "negated"), [(0.0, 1.0), (1.0, 0.0)])
def test_negate_at_the_ends_of_the_scale(value: float, negated: float) -> None:
    assert grade(Fixed(value=value, negate=True)).score == negated


def test_negate_flips_a_measured_verdict() -> None:
    assert grade(Fixed(value=0.9, forced="pass", negate=True)).verdict == "fail"
    assert grade(Fixed(value=0.1, forced="fail", negate=True)).verdict == "pass"


def test_negate_does_not_turn_an_error_into_a_score() -> None:
    result = grade(Crashing(negate=True))
    assert (result.score, result.verdict) == (None, "error")


# ---- errors: never a fail, never a 0 -------------------------------------------------------


def test_exception_in_measure_becomes_an_error_result() -> None:
    result = grade(Crashing(weight=3, required=True))
    assert result.error == ErrorInfo(type="RuntimeError", message="judge unreachable")
    assert result.score is None
    assert result.verdict == "error"
    assert result.name == "crashing"
    assert result.weight == 3
    assert result.required is True
    assert result.hits == []
    assert result.misses == []
    assert result.details == []


def test_exception_without_message_uses_its_repr() -> None:
    result = grade(SilentCrash())
    assert result.error == ErrorInfo(type="ValueError", message="ValueError()")


def test_cancellation_is_not_swallowed() -> None:
    with pytest.raises(asyncio.CancelledError):
        grade(Cancelled())


@pytest.mark.parametrize(
    ("value", "message"),
    [(1.5, "score 1.5 is outside 0\N{EN DASH}1"), (-0.1, "score -0.1 is outside 0\N{EN DASH}1")],
)
def test_score_outside_the_scale_is_an_error(value: float, message: str) -> None:
    result = grade(Fixed(value=value, passed_checks=("a",)))
    assert result.error == ErrorInfo(type="GraderError", message=message)
    assert result.score is None
    assert result.verdict == "error"
    assert result.hits == []


def test_nan_score_is_an_error() -> None:
    result = grade(Fixed(value=float("nan")))
    assert result.error is not None
    assert result.error.type == "GraderError"
    assert (result.score, result.verdict) == (None, "error")


def test_score_outside_the_scale_is_an_error_even_when_negated() -> None:
    # 1 - 1.5 would be -0.5; the raw measurement is checked before negation
    result = grade(Fixed(value=1.5, negate=True))
    assert (result.score, result.verdict) == (None, "error")


def test_measured_verdict_does_not_hide_an_error() -> None:
    result = grade(Fixed(value=2.0, forced="pass"))
    assert result.verdict == "error"


# ---- verdict override ----------------------------------------------------------------------


@pytest.mark.parametrize(("value", "forced"), [(0.1, "pass"), (0.95, "fail"), (0.5, "borderline")])
def test_measurement_verdict_overrides_the_score_bar(value: float, forced: Verdict) -> None:
    result = grade(Fixed(value=value, forced=forced))
    assert result.score == value
    assert result.verdict == forced


# ---- details cap ---------------------------------------------------------------------------


def test_details_are_capped_to_ten_failed_plus_a_summary() -> None:
    result = grade(ManyDetails(failed=13, passed=2))
    assert [d.check for d in result.details] == [
        "ok.0",
        "ok.1",
        *(f"bad.{i}" for i in range(10)),
        "+ 3 more",
    ]
    assert result.details[-1] == Detail(check="+ 3 more", passed=False)


def test_details_are_capped_after_negation() -> None:
    # 12 passed details become 12 failed ones
    result = grade(ManyDetails(failed=0, passed=12, negate=True))
    assert len(result.details) == 11
    assert result.details[-1] == Detail(check="+ 2 more", passed=False)
    assert not any(d.passed for d in result.details)


def test_ten_failed_details_are_all_kept() -> None:
    result = grade(ManyDetails(failed=10, passed=0))
    assert [d.check for d in result.details] == [f"bad.{i}" for i in range(10)]


# ---- the config model ----------------------------------------------------------------------


def test_grader_config_is_frozen() -> None:
    grader = Fixed()
    with pytest.raises(ValidationError):
        grader.weight = 2  # type: ignore[misc]


def test_unknown_option_is_rejected_with_a_suggestion() -> None:
    with pytest.raises(ValidationError, match=r"unknown key 'wieght'\. Did you mean 'weight'"):
        Fixed.model_validate({"type": "fixed", "wieght": 2})


@pytest.mark.parametrize(
    "options",
    [{"weight": -1}, {"min_score": 1.1}, {"min_score": -0.1}, {"type": "other"}],
    ids=["negative-weight", "min_score>1", "min_score<0", "wrong-type"],
)
def test_bad_common_options_are_rejected(options: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Fixed.model_validate(options)


def test_weight_zero_is_allowed() -> None:
    assert grade(Fixed(weight=0)).weight == 0


class Reporting(Grader):
    """Reports exactly the measurement it is given."""

    type: Literal["reporting"] = "reporting"

    async def measure(self, ctx: GradingContext) -> Measurement:
        return _GIVEN[0]


_GIVEN: list[Measurement] = []


@pytest.mark.parametrize(
    "given",
    [
        Measurement(score=0.5, cost_usd=0.0),
        Measurement(score=0.5, cost_usd=0.002),
        Measurement(score=0.5, judge_prompt="llm-grader@abc"),
        Measurement(score=0.5, token_usage=TokenUsage(input=3, output=1)),
        Measurement(score=0.5, judge_model="m", reasoning="why", hits=["h"], misses=["x"]),
        Measurement(
            score=0.5, children=[GraderResult(name="a", type="a", score=1.0, verdict="pass")]
        ),
        Measurement(score=0.5),
    ],
    ids=["zero-cost", "cost", "prompt", "tokens", "judged", "children", "bare"],
)
def test_every_reported_field_reaches_the_result_and_the_rest_keep_their_defaults(
    given: Measurement,
) -> None:
    _GIVEN[:] = [given]
    result = asyncio.run(Reporting(weight=0.0, min_score=0.0).grade(ctx()))
    for name in ("hits", "misses", "reasoning", "children", "token_usage", "cost_usd"):
        assert getattr(result, name) == getattr(given, name), name
    assert (result.judge_model, result.judge_prompt) == (given.judge_model, given.judge_prompt)
    assert (result.weight, result.min_score, result.required, result.error) == (
        0.0,
        0.0,
        False,
        None,
    )
    assert result.verdict == "pass" and result.score == 0.5  # min_score 0.0 is kept, not dropped


class IntScore(Grader):
    """Reports its score as an int, as a plugin grader may."""

    type: Literal["int-score"] = "int-score"

    async def measure(self, ctx: GradingContext) -> Measurement:
        return Measurement(score=1, hits=["whole"], details=[Detail(check="int", passed=True)])


def test_i10_a_grader_result_is_validated_as_its_constructor_validates() -> None:
    """`_result` validates its field dict directly: an int score is still stored as a float,
    and the result equals the one `GraderResult(**fields)` makes, fields set included."""
    result = grade(IntScore(weight=2.0, negate=True))
    assert type(result.score) is float and result.score == 0.0
    assert '"score":0.0' in result.model_dump_json()
    expected = GraderResult(
        name="int-score",
        type="int-score",
        score=0.0,
        verdict="fail",
        weight=2.0,
        misses=["whole"],
        details=[Detail(check="int", passed=False)],
        duration_ms=result.duration_ms,
    )
    assert result == expected
    assert result.model_fields_set == expected.model_fields_set
