"""Pairwise judging's pure part: the Wilson interval, the fold of two answers, the summary."""

from __future__ import annotations

import pytest

from assay.comparison import (
    PairwiseCase,
    Preference,
    fold_preferences,
    summarise_pairwise,
    wilson_interval,
)


@pytest.mark.parametrize(
    ("successes", "n", "expected"),
    [
        # p = 0.5, n = 10, z = 1.959964: centre (0.5 + z²/20) / (1 + z²/10) = 0.5, margin
        # z·sqrt(0.025 + z²/400) / 1.384146 = 0.263407.
        (5, 10, (0.236593, 0.763407)),
        # p = 0: the interval starts at exactly 0 and ends at z²/n / (1 + z²/n) = 0.277533.
        (0, 10, (0.0, 0.277533)),
        (10, 10, (0.722467, 1.0)),
        # A tie counts half: 7.5 of 20, p = 0.375; centre 0.471037 / 1.192073 = 0.395140,
        # margin 1.959964·sqrt(0.01171875 + 0.00240091) / 1.192073 = 0.195370.
        (7.5, 20, (0.199771, 0.590510)),
        (3, 3, (0.438503, 1.0)),
    ],
)
def test_i28_3_wilson_interval_matches_hand_computed_values(
    successes: float, n: int, expected: tuple[float, float]
) -> None:
    interval = wilson_interval(successes, n)
    assert interval is not None
    assert interval == pytest.approx(expected, abs=1e-6)


def test_i28_3_wilson_interval_of_nothing_is_none_and_impossible_counts_raise() -> None:
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError, match="between 0 and n=3"):
        wilson_interval(4, 3)


@pytest.mark.parametrize(
    ("base_first", "head_first", "outcome", "consistent"),
    [
        ("B", "A", "win", True),  # the head's output preferred in both orders
        ("A", "B", "loss", True),  # the base's in both
        ("tie", "tie", "tie", True),
        ("A", "A", "tie", False),  # the first position both times
        ("B", "B", "tie", False),  # the second position both times
        ("B", "tie", "tie", False),  # a preference that did not survive the swap
        ("tie", "A", "tie", False),
        ("A", "tie", "tie", False),
        ("tie", "B", "tie", False),
    ],
)
def test_i28_3_fold_rules(
    base_first: Preference, head_first: Preference, outcome: str, consistent: bool
) -> None:
    assert fold_preferences(base_first, head_first) == (outcome, consistent)


def _case(case_id: str, base_first: Preference, head_first: Preference) -> PairwiseCase:
    outcome, consistent = fold_preferences(base_first, head_first)
    return PairwiseCase(case_id, outcome, consistent, base_first, head_first, ["r1", "r2"])


def test_i28_3_the_summary_counts_a_tie_as_half_a_win_over_the_judged_cases() -> None:
    cases = [
        _case("w1", "B", "A"),
        _case("w2", "B", "A"),
        _case("l1", "A", "B"),
        _case("t1", "A", "A"),
        PairwiseCase("e1", None, None, "B", None, ["r1"], "judge x: timed out"),
    ]
    result = summarise_pairwise(cases, judge="fake j", prompt="pairwise@abc")
    assert (result.paired_cases, result.judged, result.errors) == (5, 4, 1)
    assert (result.wins, result.losses, result.ties, result.inconsistent) == (2, 1, 1, 1)
    assert result.win_rate == 2.5 / 4
    assert result.win_rate_ci95 == wilson_interval(2.5, 4)
    assert result.inconsistency_rate == 0.25
    assert [c.case_id for c in result.cases] == ["w1", "w2", "l1", "t1", "e1"]


def test_i28_3_a_summary_with_nothing_judged_has_no_rates() -> None:
    result = summarise_pairwise(
        [PairwiseCase("e", None, None, None, None, [], "boom")], judge="j", prompt="p"
    )
    assert (result.judged, result.errors) == (0, 1)
    assert (result.win_rate, result.win_rate_ci95, result.inconsistency_rate) == (None, None, None)
