"""`rubrics` (SPEC §5.2): weighted rubric items, all judged in one structured call.

The judge scores every item on an integer 0–10 scale (optionally guided by per-item score
bands), with reasoning and an evidence quote. The grader's score is the weighted mean of the
item scores on 0–1; a `required` item below its bar fails the grader outright with score 0.
`RubricItem` / `RubricItems` are shared with the test-level `rubrics:` field.
"""

from __future__ import annotations

from collections import Counter
from functools import cached_property
from typing import Annotated, ClassVar, Literal

from pydantic import AfterValidator, BaseModel, Field, field_validator

from assay._strict_model import NO_NUL, StrictModel
from assay.graders._base import GradingContext, Measurement, Unit
from assay.graders._details import detail
from assay.graders._judged import JudgedGrader
from assay.judge import Entry, keyed_schema
from assay.results import JSON

__all__ = ["RubricItem", "RubricItems", "Rubrics", "RubricsReply", "ScoreBand"]

JudgeScore = Annotated[int, Field(ge=0, le=10)]
"""A score on the judge's 0–10 scale."""


class ScoreBand(StrictModel):
    """A 0–10 band describing what a range of judge scores means for one item."""

    score_range: tuple[JudgeScore, JudgeScore]
    """The band's lowest and highest score, inclusive, e.g. `[0, 5]`."""
    outcome: Annotated[str, Field(min_length=1)]
    """What an output scoring in this band looks like."""

    def __str__(self) -> str:
        return f"[{self.score_range[0]}, {self.score_range[1]}]"


def _band_problem(bands: list[ScoreBand]) -> str | None:
    """Why `bands` do not tile 0–10 in order, naming the offending band; None if they do."""
    for i, band in enumerate(bands):
        lo, hi = band.score_range
        if lo > hi:
            return f"score_ranges[{i}] {band} is reversed; write it low to high: [{hi}, {lo}]"
    first, last = bands[0], bands[-1]
    if first.score_range[0] != 0:
        return f"score_ranges[0] {first} must start at 0"
    for i in range(1, len(bands)):
        before, band = bands[i - 1], bands[i]
        lo, prev_lo, prev_hi = band.score_range[0], *before.score_range
        where = f"score_ranges[{i}] {band}"
        if lo < prev_lo:
            return f"{where} is out of order: list the bands from 0 up to 10"
        if lo <= prev_hi:
            both = f"{lo}" if lo == prev_hi else f"{lo}–{prev_hi}"
            return f"{where} overlaps score_ranges[{i - 1}] {before}: {both} is in both"
        if lo > prev_hi + 1:
            gap = f"{prev_hi + 1}" if lo == prev_hi + 2 else f"{prev_hi + 1}–{lo - 1}"
            return f"{where} leaves a gap after score_ranges[{i - 1}] {before}: {gap} is in no band"
    if last.score_range[1] != 10:
        return f"score_ranges[{len(bands) - 1}] {last} must end at 10"
    return None


class RubricItem(StrictModel):
    """One statement the judge scores 0–10; its weight counts in the rubric's score."""

    id: Annotated[str, Field(min_length=1), NO_NUL]
    """A name unique within the rubric; the item's Detail is `rubric.<id>`."""
    outcome: Annotated[str, Field(min_length=1)]
    """The statement being judged, e.g. "States the refund deadline correctly"."""
    weight: Annotated[float, Field(ge=0.0)] = 1.0
    """The item's weight in the rubric's score; 0 reports it without scoring it."""
    required: bool = False
    """If true and the item fails, the whole rubric fails with score 0."""
    min_score: Unit | None = None
    """The item's bar on 0–1, compared on the judge's 0–10 scale (0.7 ↔ 7); without it, the
    case threshold."""
    score_ranges: Annotated[list[ScoreBand], Field(min_length=1)] | None = None
    """Bands describing what judge scores mean for this item; they must start at 0, be
    listed in order, neither overlap nor leave a gap, and end at 10."""

    @field_validator("score_ranges")
    @classmethod
    def _bands_tile_the_scale(cls, bands: list[ScoreBand] | None) -> list[ScoreBand] | None:
        if bands is not None:
            problem = _band_problem(bands)
            if problem:
                raise ValueError(problem)
        return bands

    def bar(self, threshold: float) -> float:
        """The item's pass bar on 0–1: `min_score`, else the case threshold."""
        return self.min_score if self.min_score is not None else threshold


def _valid_items(items: list[RubricItem]) -> list[RubricItem]:
    repeated = sorted(i for i, n in Counter(item.id for item in items).items() if n > 1)
    if repeated:
        raise ValueError(f"rubric item id(s) {_names(repeated)} are not unique")
    if not any(item.weight > 0 for item in items):
        raise ValueError("every rubric item's weight is 0; give at least one a weight above 0")
    return items


RubricItems = Annotated[list[RubricItem], Field(min_length=1), AfterValidator(_valid_items)]
"""A rubric: at least one item, ids unique, some weight above 0."""


class ItemVerdict(BaseModel):
    """The judge's verdict on one rubric item."""

    outcome: str
    """The item's statement, exactly as written (pinned in the call's schema)."""
    score: int = Field(ge=0, le=10)
    """0 (not met at all) to 10 (fully met)."""
    satisfied: bool
    """Whether the output meets the item's statement."""
    reasoning: str
    """Why this score, in a sentence or two."""
    evidence: str
    """A short quote from the output supporting the score; empty if there is none."""


class RubricsReply(BaseModel):
    """One verdict per rubric item, under the item's id."""

    items: dict[str, ItemVerdict]


class Rubrics(JudgedGrader):
    """Scores the output against weighted rubric items in one judge call."""

    type: Literal["rubrics"]
    rubrics: RubricItems
    """The rubric items, all judged in one call."""

    template: ClassVar[str] = "rubrics"
    template_variables: ClassVar[frozenset[str]] = frozenset({"rubrics"})

    @cached_property
    def reply_schema(self) -> dict[str, JSON]:
        """The reply schema of this grader's calls: a verdict under each item's id, its
        statement pinned, so no item can be missing, unknown or about other text."""
        entries = {item.id: Entry(ItemVerdict, {"outcome": item.outcome}) for item in self.rubrics}
        return keyed_schema("RubricsReply", "items", entries, "One verdict per rubric item, by id.")

    def _prompt_items(self) -> list[JSON]:
        return [
            {
                "id": item.id,
                "outcome": item.outcome,
                "score_ranges": [
                    {"low": b.score_range[0], "high": b.score_range[1], "outcome": b.outcome}
                    for b in item.score_ranges or []
                ],
            }
            for item in self.rubrics
        ]

    async def measure(self, ctx: GradingContext) -> Measurement:
        judgement = await self.ask(
            ctx, RubricsReply, {"rubrics": self._prompt_items()}, schema=self.reply_schema
        )
        verdicts = judgement.answer.items
        m = Measurement(score=0.0)
        total = weighted = 0.0
        failed_required: list[str] = []
        for item in self.rubrics:
            v = verdicts[item.id]
            bar = item.bar(ctx.threshold)
            # score/10 is exact for one-decimal bars, where min_score*10 is not (0.7*10 > 7)
            passed = v.score / 10 >= bar
            weighted += v.score / 10 * item.weight
            total += item.weight
            line = f"{item.id} {v.score}/10: {item.outcome}"
            (m.hits if passed else m.misses).append(line)
            if item.required and not passed:
                failed_required.append(f"'{item.id}' ({v.score}/10, needs {_tenths(bar)}/10)")
            m.details.append(
                detail(
                    f"rubric.{item.id}",
                    passed,
                    expected=item.outcome,
                    actual=f"{v.score}/10",
                    message=_message(v, passed),
                )
            )
        summary = f"{len(m.hits)} of {len(self.rubrics)} rubric items passed"
        if failed_required:
            m.verdict = "fail"
            m.gate_failed = True
            noun = "item" if len(failed_required) == 1 else "items"
            m.reasoning = f"required {noun} {', '.join(failed_required)} failed; {summary}"
        else:
            m.score = weighted / total
            m.reasoning = summary
        return m.charged(judgement)


def _message(verdict: ItemVerdict, passed: bool) -> str:
    text = verdict.reasoning.strip()
    if verdict.evidence.strip():
        text = f'{text} Evidence: "{verdict.evidence.strip()}"'.strip()
    if verdict.satisfied != passed:
        called = "satisfied" if verdict.satisfied else "not satisfied"
        side = "below" if verdict.satisfied else "at or above"
        text += f" (the judge called it {called}, but the score is {side} the bar)"
    return text


def _tenths(bar: float) -> str:
    """A 0–1 bar on the 0–10 scale, without float noise: 0.7 → "7", 0.75 → "7.5"."""
    return f"{round(bar * 10, 6):g}"


def _names(ids: list[str]) -> str:
    return ", ".join(f"'{i}'" for i in ids)
