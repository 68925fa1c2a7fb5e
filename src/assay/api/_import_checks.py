"""What an imported run must satisfy beyond its shape: numbers a comparison can trust.

An export file or an upload comes from anywhere, so nothing in it is taken on faith: every
score is a finite number from 0 to 1 (none only when the verdict is `error`), durations and
costs are finite and not negative, and the run's summary is counted again from its case
results with its own thresholds, never read from the file.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from assay.errors import UsageError
from assay.results import CaseResult, GraderResult, RunResult, SampleResult, TurnResult
from assay.scoring import SummaryBuilder

__all__ = ["InvalidExportError", "check_case", "check_run"]

_Loc = tuple[str | int, ...]


class InvalidExportError(UsageError):
    """A value of an imported run is impossible (a score of 5.0, NaN, a negative duration).

    `loc` is where: `("results", 3, "score")`; the message names it `results[3].score`.
    """

    def __init__(self, where: str, loc: _Loc, problem: str) -> None:
        self.loc = loc
        self.problem = problem
        super().__init__(f"{where} {dotted(loc)}: {problem}")


def dotted(loc: _Loc) -> str:
    """`("results", 3, "score")` as `results[3].score`."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


def check_case(case: CaseResult, index: int, where: str) -> CaseResult:
    """`case` (the `index`-th case result of an import), checked; an error's score is
    dropped, as SPEC §8 has it (exports written before that rule kept one).

    Raises:
        InvalidExportError: A score, threshold, duration or cost is impossible, or an id,
            name or tag holds a NUL character.
    """
    loc: _Loc = ("results", index)
    _name(case.case_id, (*loc, "case_id"), where)
    for position, tag in enumerate(case.tags):
        _name(tag, (*loc, "tags", position), where)
    if case.verdict != "error" and case.score is None:
        raise InvalidExportError(
            where,
            (*loc, "score"),
            f"null, but the verdict is '{case.verdict}': only a case whose verdict is "
            "'error' has no score",
        )
    _fraction(case.score, (*loc, "score"), where)
    _fraction(case.threshold, (*loc, "threshold"), where)
    _fraction(case.borderline, (*loc, "borderline"), where)
    for bound, value in enumerate(case.score_ci95 or ()):
        _fraction(value, (*loc, "score_ci95", bound), where)
    _scores(case.rejudged_scores, (*loc, "rejudged_scores"), where)
    _amount(case.duration_ms, (*loc, "duration_ms"), where)
    _amount(case.cost_usd, (*loc, "cost_usd"), where)
    _amount(case.judge_cost_usd, (*loc, "judge_cost_usd"), where)
    _graders(case.grader_results, (*loc, "grader_results"), where)
    _turns(case.turns, (*loc, "turns"), where)
    _samples(case.samples, (*loc, "samples"), where)
    if case.verdict == "error" and case.score is not None:
        return case.model_copy(update={"score": None})
    return case


def check_run(run: RunResult, where: str) -> tuple[RunResult, SummaryBuilder]:
    """`run` (the header of an import), checked, and the builder of its summary: the
    summary is counted again from the case results, with the run's own thresholds.

    A run stored as `running` elsewhere is not running here: it is imported `interrupted`.

    Raises:
        InvalidExportError: A threshold of the run's config, its duration or cost is
            impossible.
    """
    for field in ("id", "suite", "target"):
        _name(getattr(run, field), ("run", field), where)
    config = run.config
    for name in ("threshold", "borderline", "metrics_pass_threshold", "cases_pass_threshold"):
        _fraction(getattr(config, name), ("run", "config", name), where)
    _amount(run.duration_ms, ("run", "duration_ms"), where)
    _amount(run.cost_usd, ("run", "cost_usd"), where)
    status = "interrupted" if run.status == "running" else run.status
    builder = SummaryBuilder(config.metrics_pass_threshold, config.cases_pass_threshold)
    return run.model_copy(update={"status": status}), builder


def _graders(results: Sequence[GraderResult], loc: _Loc, where: str) -> None:
    for index, result in enumerate(results):
        here = (*loc, index)
        _name(result.name, (*here, "name"), where)
        _fraction(result.score, (*here, "score"), where)
        _fraction(result.min_score, (*here, "min_score"), where)
        _amount(result.weight, (*here, "weight"), where)
        _amount(result.duration_ms, (*here, "duration_ms"), where)
        _amount(result.cost_usd, (*here, "cost_usd"), where)
        _graders(result.children, (*here, "children"), where)


def _turns(turns: Sequence[TurnResult], loc: _Loc, where: str) -> None:
    for index, turn in enumerate(turns):
        here = (*loc, index)
        _fraction(turn.score, (*here, "score"), where)
        _amount(turn.duration_ms, (*here, "duration_ms"), where)
        _graders(turn.grader_results, (*here, "grader_results"), where)


def _samples(samples: Sequence[SampleResult], loc: _Loc, where: str) -> None:
    for index, sample in enumerate(samples):
        here = (*loc, index)
        _fraction(sample.score, (*here, "score"), where)
        _amount(sample.duration_ms, (*here, "duration_ms"), where)
        _scores(sample.rejudged_scores, (*here, "rejudged_scores"), where)
        _graders(sample.grader_results, (*here, "grader_results"), where)
        _turns(sample.turns, (*here, "turns"), where)


def _scores(values: Sequence[float | None], loc: _Loc, where: str) -> None:
    for index, value in enumerate(values):
        _fraction(value, (*loc, index), where)


def _name(value: str, loc: _Loc, where: str) -> None:
    """An id, name or tag: no NUL character, as a suite file may not have one (PostgreSQL
    cannot store it, and the store keeps names as they are)."""
    if "\x00" in value:
        raise InvalidExportError(where, loc, f"{value!r} holds a NUL character")


def _fraction(value: float | None, loc: _Loc, where: str) -> None:
    """A score or threshold: none, or a finite number from 0 to 1."""
    if value is not None and not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise InvalidExportError(where, loc, f"{value!r} is not a score: a number from 0 to 1")


def _amount(value: float | None, loc: _Loc, where: str) -> None:
    """A duration, cost or weight: none, or a finite number, not negative."""
    if value is not None and not (math.isfinite(value) and value >= 0.0):
        raise InvalidExportError(where, loc, f"{value!r} is not a finite number of at least 0")
