"""Verdict bands: the single home of DEFAULT_THRESHOLD and the score → verdict rule (SPEC §1)."""

from __future__ import annotations

from typing import Literal

from assay.results import Verdict

__all__ = [
    "DEFAULT_BORDERLINE",
    "DEFAULT_THRESHOLD",
    "VERDICT_RANK",
    "BorderlineLevel",
    "grader_verdict",
    "reaches",
    "resolve_borderline",
    "resolve_threshold",
    "score_to_verdict",
]

DEFAULT_THRESHOLD = 0.8
"""Score at or above which a case passes, unless configured otherwise."""

DEFAULT_BORDERLINE = 0.6
"""Lower bound of the borderline band, unless configured otherwise."""

VERDICT_RANK: dict[Verdict, int] = {"error": -1, "fail": 0, "borderline": 1, "pass": 2}
"""Order of verdicts from worst to best, for picking best/worst samples."""

BorderlineLevel = float | Literal["off"] | None
"""One configuration level's borderline setting: a bound, explicitly off, or not set (None)."""

_TOLERANCE = 1e-9
"""Float noise allowed when comparing a score with a bar: the mean of 0.7, 0.8 and 0.9 is
0.7999999999999999 in binary floating point, and must still pass a 0.8 threshold."""


def reaches(score: float, bar: float) -> bool:
    """Whether `score` is at or above `bar`, ignoring float rounding noise."""
    return score >= bar - _TOLERANCE


def score_to_verdict(
    score: float, threshold: float = DEFAULT_THRESHOLD, borderline: float | None = None
) -> Verdict:
    """Map a 0–1 score to pass / borderline / fail.

    `pass` when `score >= threshold`; `borderline` when a bound is set and
    `borderline <= score < threshold`; otherwise `fail`.
    """
    if reaches(score, threshold):
        return "pass"
    if borderline is not None and reaches(score, borderline):
        return "borderline"
    return "fail"


def grader_verdict(score: float | None, min_score: float | None, case_threshold: float) -> Verdict:
    """A grader's own verdict (SPEC §1.2): against `min_score` if set, else the case threshold."""
    if score is None:
        return "error"
    bar = min_score if min_score is not None else case_threshold
    return "pass" if reaches(score, bar) else "fail"


def resolve_threshold(
    *,
    cli: float | None = None,
    test: float | None = None,
    suite: float | None = None,
    project: float | None = None,
) -> float:
    """Resolve a case threshold: CLI/API > test > suite > project config > DEFAULT_THRESHOLD."""
    for level in (cli, test, suite, project):
        if level is not None:
            return level
    return DEFAULT_THRESHOLD


def resolve_borderline(
    *,
    cli: BorderlineLevel = None,
    test: BorderlineLevel = None,
    suite: BorderlineLevel = None,
    project: BorderlineLevel = None,
) -> float | None:
    """Resolve the borderline bound in the same order as the threshold; "off" disables the band."""
    for level in (cli, test, suite, project):
        if level == "off":
            return None
        if level is not None:
            return level
    return DEFAULT_BORDERLINE
