"""ReDoS corpus (issue #4): catastrophic-backtracking patterns run in linear time under RE2.

Each classic pattern is matched against a 100 KB adversarial input built to make a
backtracking engine explode; RE2 answers in milliseconds. Patterns RE2 cannot run
(backreferences, lookaround) and over-long ones are rejected when the suite loads.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from pydantic import ValidationError
from tests.graders._grading import SPEC

from assay.graders import GradingContext
from assay.results import GraderResult

SIZE = 100_000

CORPUS = [
    # (pattern, adversarial input): each input nearly matches, forcing a backtracker to try
    # exponentially (or polynomially) many ways before failing.
    (r"(a+)+$", "a" * SIZE + "!"),
    (r"(a|aa)+$", "a" * SIZE + "!"),
    (r"(a|a?)+$", "a" * SIZE + "!"),
    (r"(.*a){20}", "a" * 19 + "b" * (SIZE - 19)),
    (r"(\w+\s?)*$", "word " * (SIZE // 5) + "!"),
    (r"^(([a-z])+.)+[A-Z]([a-z])+$", "a" * SIZE + "!"),
    (r"(x+x+)+y", "x" * SIZE),
    (r"^(\d+)*$", "1" * SIZE + "x"),
]


def _grade(pattern: str, output: str) -> tuple[GraderResult, float]:
    grader = SPEC.validate_python({"type": "regex", "value": pattern})
    ctx = GradingContext(case_id="redos", output=output, threshold=0.8)
    started = time.perf_counter()
    result: GraderResult = asyncio.run(grader.grade(ctx))
    return result, time.perf_counter() - started


@pytest.mark.parametrize(("pattern", "output"), CORPUS, ids=[p for p, _ in CORPUS])
def test_catastrophic_patterns_finish_in_linear_time(pattern: str, output: str) -> None:
    assert len(output) >= SIZE
    result, elapsed = _grade(pattern, output)
    assert result.error is None
    assert result.score in (0.0, 1.0)
    # A backtracking engine needs hours to days on these inputs; RE2 needs milliseconds. The
    # bound is loose so a busy CI machine cannot make it flaky, and still 4+ orders of
    # magnitude below what backtracking would take.
    assert elapsed < 1.0, f"{pattern!r} took {elapsed:.3f}s on {len(output)} characters"


def test_the_adversarial_inputs_are_really_adversarial() -> None:
    # Python's backtracking `re` on a short version of the first input already takes
    # exponential time in its length: each extra character doubles the work.
    import re

    def backtracking(n: int) -> float:
        best = float("inf")
        for _ in range(3):  # best of 3: a scheduler hiccup cannot fake or hide the growth
            started = time.perf_counter()
            re.match(r"(a+)+$", "a" * n + "!")
            best = min(best, time.perf_counter() - started)
        return best

    assert backtracking(22) > 4 * backtracking(18)


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"(a)\1", "not valid RE2"),
        (r"foo(?=bar)", "not valid RE2"),
        (r"(?<!x)y", "not valid RE2"),
        ("a" * 501, "the limit is 500"),
    ],
    ids=["backreference", "lookahead", "lookbehind", "too-long"],
)
def test_patterns_re2_cannot_run_are_rejected_at_load(pattern: str, reason: str) -> None:
    with pytest.raises(ValidationError, match=reason):
        SPEC.validate_python({"type": "regex", "value": pattern})
