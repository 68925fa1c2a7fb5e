"""SPEC §1 items 2 to 5: DEFAULT_THRESHOLD, score_to_verdict, threshold and borderline."""

from __future__ import annotations

import inspect

import pytest

from assay import scoring
from assay.scoring import (
    DEFAULT_BORDERLINE,
    DEFAULT_THRESHOLD,
    VERDICT_RANK,
    grader_verdict,
    resolve_borderline,
    resolve_threshold,
    score_to_verdict,
)

LEVELS = ("cli", "test", "suite", "project")


def test_default_threshold_is_0_8() -> None:
    assert DEFAULT_THRESHOLD == 0.8
    assert scoring.DEFAULT_THRESHOLD == 0.8


def test_default_threshold_is_the_default_of_score_to_verdict() -> None:
    default = inspect.signature(score_to_verdict).parameters["threshold"].default
    assert default == DEFAULT_THRESHOLD
    assert score_to_verdict(0.8) == "pass"
    assert score_to_verdict(0.7999) == "fail"


def test_no_borderline_band_by_default_in_score_to_verdict() -> None:
    assert inspect.signature(score_to_verdict).parameters["borderline"].default is None
    assert score_to_verdict(0.79) == "fail"


def test_default_borderline_bound_is_0_6() -> None:
    assert DEFAULT_BORDERLINE == 0.6


@pytest.mark.parametrize(
    ("score", "threshold", "expected"),
    [
        (0.8, 0.8, "pass"),  # exactly at the threshold passes
        (0.8000001, 0.8, "pass"),
        (0.7999999, 0.8, "fail"),
        (1.0, 1.0, "pass"),
        (0.999, 1.0, "fail"),
        (0.0, 0.0, "pass"),
        (0.5, 0.5, "pass"),
        (0.49, 0.5, "fail"),
    ],
)
def test_score_to_verdict_without_band(score: float, threshold: float, expected: str) -> None:
    assert score_to_verdict(score, threshold) == expected
    assert score_to_verdict(score, threshold, None) == expected


@pytest.mark.parametrize(
    ("score", "expected"),
    [
        (1.0, "pass"),
        (0.9, "pass"),  # exactly at the threshold: pass, not borderline
        (0.8999, "borderline"),  # just under the threshold: upper bound is exclusive
        (0.8, "borderline"),
        (0.7, "borderline"),  # exactly at the lower bound: inclusive
        (0.6999, "fail"),
        (0.0, "fail"),
    ],
)
def test_score_to_verdict_borderline_band(score: float, expected: str) -> None:
    assert score_to_verdict(score, 0.9, 0.7) == expected


def test_band_off_means_only_pass_or_fail() -> None:
    assert score_to_verdict(0.75, 0.8, None) == "fail"
    assert score_to_verdict(0.75, 0.8, 0.6) == "borderline"


def test_verdict_rank_orders_worst_to_best() -> None:
    assert sorted(VERDICT_RANK, key=VERDICT_RANK.__getitem__) == [
        "error",
        "fail",
        "borderline",
        "pass",
    ]


# ---- grader verdict (SPEC §1.2) ------------------------------------------------------------


@pytest.mark.parametrize(
    ("score", "min_score", "case_threshold", "expected"),
    [
        # min_score set: the bar is min_score, whatever the case threshold
        (0.69, 0.7, 0.8, "fail"),
        (0.7, 0.7, 0.8, "pass"),
        (0.75, 0.7, 0.8, "pass"),  # under the case threshold, but over min_score
        (0.85, 0.9, 0.8, "fail"),  # over the case threshold, but under min_score
        # no min_score: the bar is the case threshold
        (0.79, None, 0.8, "fail"),
        (0.8, None, 0.8, "pass"),
        (0.5, None, 0.5, "pass"),
        # min_score 0.0 is a real bar, not "unset"
        (0.0, 0.0, 0.8, "pass"),
    ],
)
def test_grader_verdict(
    score: float, min_score: float | None, case_threshold: float, expected: str
) -> None:
    assert grader_verdict(score, min_score, case_threshold) == expected


def test_grader_verdict_of_missing_score_is_error() -> None:
    assert grader_verdict(None, None, 0.8) == "error"
    assert grader_verdict(None, 0.7, 0.8) == "error"


def test_grader_verdict_is_never_borderline() -> None:
    # the borderline band is a case-level notion
    assert grader_verdict(0.7, None, 0.8) == "fail"


# ---- threshold resolution (SPEC §1 item 4) -------------------------------------------------


def test_resolve_threshold_defaults_to_default_threshold() -> None:
    assert resolve_threshold() == DEFAULT_THRESHOLD == 0.8


@pytest.mark.parametrize("winner", range(len(LEVELS)), ids=LEVELS)
def test_resolve_threshold_each_level_overrides_every_level_below(winner: int) -> None:
    values = {"cli": 0.95, "test": 0.85, "suite": 0.75, "project": 0.65}
    # the winner and everything below it are set; everything above it is not
    kwargs = {name: values[name] for name in LEVELS[winner:]}
    assert resolve_threshold(**kwargs) == values[LEVELS[winner]]


@pytest.mark.parametrize("level", LEVELS)
def test_resolve_threshold_single_level_beats_default(level: str) -> None:
    assert resolve_threshold(**{level: 0.42}) == 0.42


def test_cli_beats_a_per_test_threshold() -> None:
    # the anchor's known bug is the reverse (SPEC §1 item 4)
    assert resolve_threshold(cli=0.5, test=0.9) == 0.5
    assert resolve_threshold(cli=0.9, test=0.5) == 0.9


@pytest.mark.parametrize("level", LEVELS)
def test_resolve_threshold_zero_is_a_value_not_unset(level: str) -> None:
    below = {name: 0.9 for name in LEVELS[LEVELS.index(level) + 1 :]}
    assert resolve_threshold(**{level: 0.0}, **below) == 0.0


# ---- borderline resolution -----------------------------------------------------------------


def test_resolve_borderline_defaults_to_0_6() -> None:
    assert resolve_borderline() == DEFAULT_BORDERLINE == 0.6


@pytest.mark.parametrize("winner", range(len(LEVELS)), ids=LEVELS)
def test_resolve_borderline_each_level_overrides_every_level_below(winner: int) -> None:
    values = {"cli": 0.55, "test": 0.45, "suite": 0.35, "project": 0.25}
    kwargs = {name: values[name] for name in LEVELS[winner:]}
    assert resolve_borderline(**kwargs) == values[LEVELS[winner]]


@pytest.mark.parametrize("level", LEVELS)
def test_resolve_borderline_off_at_a_level_turns_the_band_off(level: str) -> None:
    below = {name: 0.5 for name in LEVELS[LEVELS.index(level) + 1 :]}
    assert resolve_borderline(**{level: "off"}, **below) is None


@pytest.mark.parametrize("level", LEVELS[:-1])
def test_resolve_borderline_number_above_an_off_level_wins(level: str) -> None:
    below = {name: "off" for name in LEVELS[LEVELS.index(level) + 1 :]}
    assert resolve_borderline(**{level: 0.65}, **below) == 0.65


def test_resolve_borderline_off_only_at_project_level() -> None:
    assert resolve_borderline(project="off") is None


# ---- float noise at the bar ----------------------------------------------------------------


def test_mean_exactly_at_threshold_passes_despite_float_rounding() -> None:
    noisy = (0.7 + 0.8 + 0.9) / 3  # 0.7999999999999999 in binary floating point
    assert noisy < 0.8
    assert score_to_verdict(noisy, 0.8, 0.6) == "pass"
    assert grader_verdict(noisy, None, 0.8) == "pass"
    assert grader_verdict(noisy, 0.8, 0.5) == "pass"


def test_float_noise_at_the_borderline_bound_is_borderline() -> None:
    noisy = (0.0 + 0.6 + 0.7 + 0.8 + 0.9) / 5  # 0.5999999999999999
    assert noisy < 0.6
    assert score_to_verdict(noisy, 0.8, 0.6) == "borderline"


def test_a_real_shortfall_still_fails() -> None:
    assert score_to_verdict(0.8 - 1e-6, 0.8) == "fail"
    assert score_to_verdict(0.6 - 1e-6, 0.8, 0.6) == "fail"
    assert grader_verdict(0.7 - 1e-6, 0.7, 0.8) == "fail"
