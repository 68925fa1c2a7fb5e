"""Calibration (issue 28 item 2): κ, its interval, the confusion matrix and the false pass rate
against values computed by hand, and which verdicts and graders are compared."""

from __future__ import annotations

import math

import pytest

from assay.comparison import agreement, calibrate, review_summary
from assay.results import CaseResult, GraderResult, Review


def pairs(pp: int, pf: int, fp: int, ff: int) -> list[tuple[str, str]]:
    """`pf`: machine pass, human fail; `fp`: machine fail, human pass."""
    return (
        [("pass", "pass")] * pp
        + [("pass", "fail")] * pf
        + [("fail", "pass")] * fp
        + [("fail", "fail")] * ff
    )


def test_i28_2_kappa_and_its_interval_match_hand_computed_values() -> None:
    # n = 50; p_o = 35/50 = 0.7; machine passes 25, people 30:
    # p_e = (25·30 + 25·20) / 2500 = 0.5; κ = (0.7 − 0.5) / 0.5 = 0.4;
    # SE = √(0.7·0.3 / (50·0.25)) = √0.0168 = 0.129615; κ ± 1.959964·SE = 0.4 ± 0.254040.
    result = agreement(pairs(20, 5, 10, 15))  # type: ignore[arg-type]
    assert result.to_json() == {
        "n": 50,
        "agreement": 0.7,
        "cohen_kappa": 0.4,
        "kappa_ci95": [0.14596, 0.65404],
        "confusion": {"pass": {"pass": 20, "fail": 5}, "fail": {"pass": 10, "fail": 15}},
        "false_pass_rate": 0.25,  # 5 of the 20 cases people failed got through
    }


def test_i28_2_perfect_agreement_chance_agreement_and_undefined_kappa() -> None:
    perfect = agreement(pairs(6, 0, 0, 4))  # type: ignore[arg-type]
    assert (perfect.cohen_kappa, perfect.kappa_ci95) == (1.0, (1.0, 1.0))
    # Machine and people independent: p_o = p_e = 0.5, κ = 0.
    chance = agreement(pairs(5, 5, 5, 5))  # type: ignore[arg-type]
    assert chance.cohen_kappa == 0.0
    lo, hi = chance.kappa_ci95 or (math.nan, math.nan)
    assert (round(lo, 6), round(hi, 6)) == (-0.438261, 0.438261)  # 1.959964·√(0.25/(20·0.25))
    # Every case passed by both: p_e = 1, κ undefined; nobody failed, no false pass rate.
    same = agreement(pairs(8, 0, 0, 0))  # type: ignore[arg-type]
    assert same.to_json()["cohen_kappa"] is None
    assert same.to_json()["kappa_ci95"] is None
    assert same.false_pass_rate is None
    assert agreement([]).to_json()["agreement"] is None


def _case(case_id: str, verdict: str, *graders: GraderResult) -> CaseResult:
    return CaseResult(
        case_id=case_id,
        verdict=verdict,  # type: ignore[arg-type]
        score=None if verdict == "error" else 0.5,
        threshold=0.8,
        grader_results=list(graders),
    )


def _grader(name: str, verdict: str, judged: bool = True) -> GraderResult:
    return GraderResult(
        name=name,
        type="llm-grader" if judged else "contains",
        score=1.0 if verdict == "pass" else 0.0,
        verdict=verdict,  # type: ignore[arg-type]
        judge_model="judge" if judged else None,
    )


def _review(case_id: str, verdict: str) -> Review:
    return Review.model_validate(
        {"run_id": "r", "case_id": case_id, "verdict": verdict, "reviewed_at": "t"}
    )


@pytest.mark.parametrize("machine", ["borderline", "fail", "error"])
def test_i28_2_anything_but_pass_is_a_machine_fail(machine: str) -> None:
    result = calibrate([(_case("a", machine), _review("a", "fail"))])
    assert result.case.confusion == {"pass": {"pass": 0, "fail": 0}, "fail": {"pass": 0, "fail": 1}}


def test_i28_2_judged_graders_are_calibrated_one_by_one_deterministic_ones_not() -> None:
    reviewed = [
        (
            _case("a", "pass", _grader("tone", "pass"), _grader("kw", "fail", False)),
            _review("a", "pass"),
        ),
        (_case("b", "fail", _grader("tone", "pass")), _review("b", "fail")),
        (_case("c", "pass", _grader("facts", "fail")), _review("c", "pass")),
    ]
    result = calibrate(reviewed)
    assert sorted(result.graders) == ["facts", "tone"]
    assert result.graders["tone"].confusion["pass"] == {"pass": 1, "fail": 1}
    assert result.graders["tone"].false_pass_rate == 1.0
    only = calibrate(reviewed, grader="facts")
    assert list(only.graders) == ["facts"]
    assert only.case.n == 3


def test_i28_1_the_reviewed_pass_rate_counts_people_where_they_reviewed() -> None:
    summary = review_summary(
        {"a": "pass", "b": "fail", "c": "borderline", "d": "pass"},
        [_review("a", "fail"), _review("c", "pass"), _review("gone", "pass")],
    )
    # a: person fail; b: machine fail; c: person pass; d: machine pass → 2 of 4.
    assert summary.reviewed_pass_rate == 0.5
    assert (summary.cases, summary.reviewed, summary.human_passed, summary.agreed) == (4, 2, 1, 0)
