"""The tone grader (SPEC §4, §5.5): how far the output's register fits a tone profile.

Each dimension is measured either by the LLM judge (all of them in one call, `_tone_judged`)
or by one heuristic function `(TextFeatures, ToneProfile) -> DimensionScore` in `HEURISTICS`;
both give a `DimensionScore`, and the score is the weighted average of the active dimensions.
Every word list and cut-off below is documented, with its reason, in docs/graders/tone.md.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import Field, field_validator, model_validator

from assay._strict_model import StrictModel, suggest
from assay.graders._base import GradingContext, Measurement
from assay.graders._details import detail, truncate
from assay.graders._judged import JudgedGrader
from assay.graders._offload import off_the_loop
from assay.graders._tone_judged import judge_dimensions
from assay.graders.factuality import split_sentences
from assay.judge import JudgeError
from assay.results import Detail

__all__ = [
    "ASSERTIVENESS",
    "DIMENSIONS",
    "FORMALITY",
    "HEURISTICS",
    "SENTENCE_CEILINGS",
    "SENTIMENT",
    "WORD_BANDS",
    "Axis",
    "DimensionScore",
    "PersonaProfile",
    "TextFeatures",
    "Tone",
    "ToneProfile",
    "features",
]

DIMENSIONS = ("formality", "sentiment", "assertiveness", "verbosity", "persona_consistency")
"""The tone dimensions of SPEC §4, in report order."""
_ALIASES = {"persona": "persona_consistency"}
"""Shorthands accepted in `profile` and `weights`."""


def _near_miss(distance: float, falloff: float) -> float:
    """Outside the target band: 0.5 at its edge, falling linearly to 0 at `falloff` past it."""
    return round(0.5 * max(0.0, 1.0 - distance / falloff), 4)


@dataclass(frozen=True, slots=True)
class Axis:
    """A measurement split by two cut-offs into three classes, with graded near misses."""

    cutoffs: tuple[float, float]
    """At or below the first is the low class, at or above the second the high class."""
    names: tuple[str, str, str]
    """The low, middle and high class."""
    falloff: float
    """Distance past the target class's band at which a near miss scores 0."""

    def grade(self, value: float, target: str) -> tuple[float, str]:
        """The score against `target` and the class `value` falls in."""
        low, high = self.cutoffs
        index = 0 if value <= low else 2 if value >= high else 1
        if self.names[index] == target:
            return 1.0, target
        edges = ((-math.inf, low), (low, high), (high, math.inf))[self.names.index(target)]
        distance = max(edges[0] - value, value - edges[1], 0.0)
        return _near_miss(distance, self.falloff), self.names[index]


FORMALITY = Axis((-0.25, 0.25), ("casual", "neutral", "formal"), falloff=0.5)
"""Formality index: (formal − informal markers) / (formal + informal + 2)."""
SENTIMENT = Axis((-0.1, 0.1), ("negative", "neutral", "positive"), falloff=0.3)
"""TextBlob polarity in [-1, 1]."""
ASSERTIVENESS = Axis((-0.25, 0.25), ("tentative", "balanced", "confident"), falloff=0.5)
"""Assertiveness index: (confident signals − hedges) / (confident + hedges + 2)."""
WORD_BANDS = {"concise": (0, 60), "moderate": (60, 200), "detailed": (200, math.inf)}
"""Word counts of each verbosity (lower bound exclusive, upper inclusive)."""
SENTENCE_CEILINGS = {"concise": 20.0, "moderate": 30.0, "detailed": math.inf}
"""Longest mean sentence length (words per sentence) each verbosity allows."""
_LOG2_FALLOFF = 1.0
"""Verbosity: a near miss scores 0 at twice (or half) the band's edge."""
_SMOOTHING = 2
"""Added to the marker total of an index, so one marker moves it to ±0.33, not ±1."""

# Word lists (docs/graders/tone.md says why each exists): words, then `|`-separated phrases.
_FORMAL = """therefore however furthermore moreover consequently accordingly nevertheless
    nonetheless hence thus regarding concerning whereas herein hereby sincerely respectfully
    kindly regards dear inquiry enquiry assist assistance ensure additionally subsequently prior
    facilitate commence terminate endeavour endeavor apologise apologize inconvenience
    acknowledge appreciate |please note|please find|do not hesitate|we regret|we are pleased
    |in accordance with|with regard to|with respect to|should you|thank you for"""
_SLANG = """gonna wanna gotta kinda sorta yeah yep yup nope nah hey hiya yo cool awesome lol lmao
    omg btw tbh imo idk dude bro guys stuff ok okay yay woohoo wow oops whoa ugh totally super
    |no worries|no problem"""
_FILLERS = """basically literally |i think|i guess|kind of|sort of|pretty much|you know|i mean"""
_HEDGES = """might may perhaps maybe possibly probably likely unlikely seemingly apparently
    arguably presumably somewhat seems seem |i think|i believe|i guess|i suppose|it seems
    |it appears|not sure|not certain|could be|in my opinion|as far as i know|to some extent
    |more or less|kind of|sort of"""
_CONFIDENT = """definitely certainly clearly absolutely undoubtedly surely always never
    guaranteed guarantee will must indeed exactly precisely |of course|without doubt|no doubt
    |rest assured|for sure|without question|i am confident|i'm confident|i am certain
    |i'm certain|be sure"""
_S_CONTRACTIONS = frozenset(("it's", "that's", "what's", "there's", "here's", "let's", "he's"))

_LEXICON: dict[tuple[str, ...], tuple[str, ...]] = {}
"""Each term (as a token tuple) and the categories listing it."""
for _category, _list in [
    ("formal", _FORMAL),
    ("slang", _SLANG),
    ("filler", _FILLERS),
    ("hedge", _HEDGES),
    ("confident", _CONFIDENT),
]:
    _words, *_phrases = _list.split("|")
    for _term in [(w,) for w in _words.split()] + [tuple(p.split()) for p in _phrases]:
        _LEXICON[_term] = (*_LEXICON.get(_term, ()), _category)
_PHRASE_LENGTHS: dict[str, tuple[int, ...]] = {}
"""Lengths of the multi-word terms by first word, so most tokens need one lookup."""
for _term in _LEXICON:
    if len(_term) > 1:
        _PHRASE_LENGTHS[_term[0]] = tuple(sorted({*_PHRASE_LENGTHS.get(_term[0], ()), len(_term)}))

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+(?:'[^\W_{_CJK}]+)*")
"""A word: a run of letters and digits (inner apostrophes kept), or one CJK character."""
_CONTRACTION = re.compile(r"(?:n't|'re|'ve|'ll|'m|'d)$")
_EXPRESSIVE = re.compile(r"[\U0001F300-\U0001FAFF\u2600-\u27BF]|(?<!\S)[:;]-?[()DPp](?!\S)|!{2,}")


@dataclass(frozen=True, slots=True)
class TextFeatures:
    """What the heuristics read from one output, computed once per distinct text."""

    text: str
    """The output with typographic apostrophes (’) made plain (')."""
    words: int
    sentences: int
    """Sentences with at least one word."""
    markers: Counter[str]
    """Lexicon matches by category (`formal`, `slang`, …), plus `contraction` and `expressive`
    (emoji, emoticons, "!!")."""
    unhedged_statements: int
    """Sentences not ending in "?" that contain no hedge."""


@functools.lru_cache(maxsize=1024)
def features(output: str) -> TextFeatures:
    """Count words, sentences and marker matches; cached, as repeats grade the same text."""
    text = output.replace("’", "'")
    markers: Counter[str] = Counter()
    words = sentences = unhedged = 0
    for sentence in split_sentences(text):
        tokens = [w.casefold() for w in _WORD.findall(sentence)]
        if not tokens:
            continue
        sentences += 1
        words += len(tokens)
        hedges = markers["hedge"]
        for i, token in enumerate(tokens):
            if categories := _LEXICON.get((token,)):
                markers.update(categories)
            for n in _PHRASE_LENGTHS.get(token, ()):
                if categories := _LEXICON.get(tuple(tokens[i : i + n])):
                    markers.update(categories)
            if "'" in token and (token in _S_CONTRACTIONS or _CONTRACTION.search(token)):
                markers["contraction"] += 1
        if markers["hedge"] == hedges and not sentence.endswith("?"):
            unhedged += 1
    markers["expressive"] = len(_EXPRESSIVE.findall(text))
    return TextFeatures(text, words, sentences, markers, unhedged)


@functools.lru_cache(maxsize=1024)
def _polarity(text: str) -> float:
    """TextBlob's lexicon-based polarity, as `TextBlob(text).sentiment.polarity` gives it.

    Called directly: the `TextBlob` wrapper builds a namedtuple class on every call, which
    would double the grader's cost. A word lexicon only, so no NLTK corpus is ever needed.
    """
    from textblob.en import sentiment as pattern_sentiment  # type: ignore[import-untyped]

    polarity, _ = pattern_sentiment(text)
    return float(polarity)


# --- the profile --------------------------------------------------------------------------------


def _rename_aliases(data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        return data
    for alias, name in _ALIASES.items():
        if alias in data:
            if name in data:
                raise ValueError(f"{where} gives both '{alias}' and '{name}'; keep '{name}'")
            data = {(name if k == alias else k): v for k, v in data.items()}
    return data


class PersonaProfile(StrictModel):
    """Markers of a persona: phrases it always uses and phrases it never uses."""

    required: list[str] = Field(default_factory=list)
    """Phrases that must appear (case-insensitive, whole words), e.g. a sign-off."""
    forbidden: list[str] = Field(default_factory=list)
    """Phrases that must not appear (case-insensitive, whole words)."""

    @model_validator(mode="after")
    def _check_markers(self) -> Self:
        if not self.required and not self.forbidden:
            raise ValueError("persona needs at least one `required` or `forbidden` marker")
        if any(not m.strip() for m in (*self.required, *self.forbidden)):
            raise ValueError("persona markers must not be empty or blank")
        return self

    def describe(self, *, quoted: bool = False) -> str:
        """`required: a, b; forbidden: c`, for the Detail's expected value; `quoted` writes
        each marker as a JSON string, so the judge sees where a marker with a comma ends."""
        parts = (("required", self.required), ("forbidden", self.forbidden))
        show = json.dumps if quoted else str
        return "; ".join(f"{k}: {', '.join(show(m) for m in v)}" for k, v in parts if v)


class ToneProfile(StrictModel):
    """The tone the output should have; each dimension is optional, at least one is required."""

    formality: Literal["formal", "neutral", "casual"] | None = None
    """Register: formal vocabulary vs slang, contractions, fillers and emoji."""
    sentiment: Literal["positive", "neutral", "negative"] | None = None
    """Polarity of the wording, from TextBlob's lexicon-based analyser."""
    assertiveness: Literal["confident", "balanced", "tentative"] | None = None
    """Confident markers and unhedged statements vs hedges ("might", "perhaps", "I think")."""
    verbosity: Literal["concise", "moderate", "detailed"] | None = None
    """Length in words, and mean sentence length."""
    persona_consistency: PersonaProfile | None = None
    """Persona markers that must or must not appear (`persona` is accepted as a shorthand)."""

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        return _rename_aliases(data, "the profile")

    @model_validator(mode="after")
    def _some_dimension(self) -> Self:
        if not self.active():
            raise ValueError(
                f"the tone profile sets no dimension; give one of {', '.join(DIMENSIONS)}"
            )
        return self

    def active(self) -> list[str]:
        """Dimensions the profile sets, in report order."""
        return [d for d in DIMENSIONS if getattr(self, d) is not None]


# --- one heuristic per dimension ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DimensionScore:
    """How one dimension fared: a 0–1 score, what was measured, and how."""

    score: float
    measured: str
    """The class the output falls in (e.g. "formal"), or a summary for the persona."""
    message: str
    """The measurement behind it, e.g. "polarity +0.62"."""


def _index(plus: int, minus: int) -> float:
    return (plus - minus) / (plus + minus + _SMOOTHING)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def formality(text: TextFeatures, profile: ToneProfile) -> DimensionScore:
    """Formal markers against slang, fillers, contractions and emoji."""
    assert profile.formality is not None
    m = text.markers
    formal, informal = m["formal"], m["slang"] + m["filler"] + m["contraction"] + m["expressive"]
    value = _index(formal, informal)
    score, measured = FORMALITY.grade(value, profile.formality)
    counts = f"{_count(formal, 'formal marker')}, {_count(informal, 'informal marker')}"
    return DimensionScore(score, measured, f"index {value:+.2f}: {counts}")


def sentiment(text: TextFeatures, profile: ToneProfile) -> DimensionScore:
    """TextBlob polarity in [-1, 1] against the cut-offs."""
    assert profile.sentiment is not None
    value = _polarity(text.text)
    score, measured = SENTIMENT.grade(value, profile.sentiment)
    return DimensionScore(score, measured, f"polarity {value:+.2f}")


def assertiveness(text: TextFeatures, profile: ToneProfile) -> DimensionScore:
    """Confident markers and unhedged statements against hedges."""
    assert profile.assertiveness is not None
    confident = text.markers["confident"] + text.unhedged_statements
    hedges = text.markers["hedge"]
    value = _index(confident, hedges)
    score, measured = ASSERTIVENESS.grade(value, profile.assertiveness)
    counts = f"{_count(confident, 'confident signal')}, {_count(hedges, 'hedge')}"
    return DimensionScore(score, measured, f"index {value:+.2f}: {counts}")


def verbosity(text: TextFeatures, profile: ToneProfile) -> DimensionScore:
    """Word count in the target's band, and mean sentence length under its ceiling."""
    target = profile.verbosity
    assert target is not None
    words, sentences = text.words, text.sentences
    measured = next(name for name, (_, high) in WORD_BANDS.items() if words <= high)
    score = 1.0
    if measured != target:
        low, high = WORD_BANDS[target]
        ratio = low / max(words, 1) if words <= low else words / high
        score = _near_miss(math.log2(ratio), _LOG2_FALLOFF)
    mean = words / sentences if sentences else 0.0
    message = (
        f"{_count(words, 'word')} in {_count(sentences, 'sentence')}, "
        f"mean {mean:.1f} words per sentence"
    )
    ceiling = SENTENCE_CEILINGS[target]
    if mean > ceiling:
        score = min(score, _near_miss(math.log2(mean / ceiling), _LOG2_FALLOFF))
        message += f" (over {ceiling:g} for {target})"
        measured += " (long sentences)"
    return DimensionScore(score, measured, message)


@functools.lru_cache(maxsize=512)
def _marker_pattern(marker: str) -> re.Pattern[str]:
    """Case-insensitive; a marker edge that is a word character must be a word boundary."""
    marker = marker.replace("’", "'").strip()
    head = r"(?<!\w)" if re.match(r"\w", marker) else ""
    tail = r"(?!\w)" if re.search(r"\w$", marker) else ""
    return re.compile(head + re.escape(marker) + tail, re.IGNORECASE)


def persona_consistency(text: TextFeatures, profile: ToneProfile) -> DimensionScore:
    """Required markers present and forbidden ones absent; the score is the fraction satisfied."""
    persona = profile.persona_consistency
    assert persona is not None
    missing = [m for m in persona.required if not _marker_pattern(m).search(text.text)]
    found = [m for m in persona.forbidden if _marker_pattern(m).search(text.text)]
    total = len(persona.required) + len(persona.forbidden)
    satisfied = total - len(missing) - len(found)
    problems = [f"missing required '{truncate(m, 40)}'" for m in missing]
    problems += [f"found forbidden '{truncate(m, 40)}'" for m in found]
    message = "; ".join(problems) or "every required marker present, no forbidden one"
    measured = f"{satisfied} of {_count(total, 'marker')} satisfied"
    return DimensionScore(round(satisfied / total, 4), measured, message)


DimensionMeasure = Callable[[TextFeatures, ToneProfile], DimensionScore]
HEURISTICS: Mapping[str, DimensionMeasure] = {
    "formality": formality,
    "sentiment": sentiment,
    "assertiveness": assertiveness,
    "verbosity": verbosity,
    "persona_consistency": persona_consistency,
}
"""The heuristic measure of each dimension."""


# --- the grader ---------------------------------------------------------------------------------


class Tone(JudgedGrader):
    """How far the output's tone fits `profile`, dimension by dimension."""

    type: Literal["tone"]
    profile: ToneProfile
    """The expected tone: any of `formality`, `sentiment`, `assertiveness`, `verbosity`,
    `persona_consistency`; at least one."""
    weights: dict[str, Annotated[float, Field(ge=0.0)]] = Field(default_factory=dict)
    """Weight of each dimension in the score, e.g. `{sentiment: 2}`; unlisted ones weigh 1."""
    mode: Literal["auto", "judge", "heuristic"] = "auto"
    """`auto`: the LLM judge when one is configured, else the heuristics (also when the judge
    fails); `judge`: always the judge, an error result when there is none or it fails;
    `heuristic`: never asks a judge."""

    template: ClassVar[str] = "tone"
    template_variables: ClassVar[frozenset[str]] = frozenset({"dimensions"})

    @property
    def requires_judge(self) -> bool:
        """`mode: judge` cannot run without a judge; `auto` falls back to the heuristics."""
        return self.mode == "judge"

    @field_validator("weights", mode="before")
    @classmethod
    def _known_dimensions(cls, value: Any) -> Any:
        value = _rename_aliases(value, "weights")
        for name in value if isinstance(value, dict) else ():
            if name not in DIMENSIONS:
                raise ValueError(
                    f"unknown tone dimension '{name}'.{suggest(str(name), set(DIMENSIONS))} "
                    f"Dimensions: {', '.join(DIMENSIONS)}"
                )
        return value

    @model_validator(mode="after")
    def _weights_match_profile(self) -> Self:
        active = self.profile.active()
        unset = [name for name in self.weights if name not in active]
        if unset:
            raise ValueError(
                f"weights names '{unset[0]}', which the profile does not set; add it to the "
                "profile or remove its weight"
            )
        if all(self.weights.get(d, 1.0) == 0 for d in active):
            raise ValueError("every tone dimension of the profile has weight 0; give one > 0")
        return self

    @classmethod
    def warm_up(cls) -> None:
        """TextBlob and its sentiment lexicon (~1.2-1.8 s the first time here), and the judge
        prompt template."""
        super().warm_up()
        _polarity("")

    @property
    def awaits_io(self) -> bool:
        """Only a mode that may ask the judge waits on the network."""
        return self.mode != "heuristic"

    @property
    def uses_judge(self) -> bool:
        """Re-judging a borderline case re-asks only a mode that may ask the judge."""
        return self.awaits_io

    async def measure(self, ctx: GradingContext) -> Measurement:
        if self.mode == "heuristic" or (self.mode == "auto" and not self.has_judge(ctx)):
            return await off_the_loop(self._heuristic, ctx.output)
        try:
            judgement, verdicts = await judge_dimensions(self, ctx, self._targets())
        except JudgeError as exc:
            if self.mode == "judge":
                raise
            m = await off_the_loop(self._heuristic, ctx.output)
            m.reasoning += f"; fell back to the heuristics: judge failed: {exc}"
            m.fallback = f"judged tone → heuristic: judge failed: {exc}"
            return m.charged(exc)
        bar = self.min_score if self.min_score is not None else ctx.threshold
        results = {
            name: DimensionScore(
                score=v.score,
                measured=truncate(v.observed.strip() or "unstated", 40),
                message=truncate(v.reasoning.strip() or "no reasoning given", 200),
            )
            for name, v in verdicts.items()
        }
        m = self._combine("judged", results, lambda score: score >= bar)
        return m.charged(judgement)

    def _targets(self) -> dict[str, str]:
        """Each active dimension's target as the judge reads it."""
        persona = self.profile.persona_consistency
        return {
            d: persona.describe(quoted=True)
            if d == "persona_consistency" and persona is not None
            else str(getattr(self.profile, d))
            for d in self.profile.active()
        }

    def _heuristic(self, output: str) -> Measurement:
        text = features(output)
        results = {d: HEURISTICS[d](text, self.profile) for d in self.profile.active()}
        return self._combine("heuristic", results, lambda score: score == 1.0)

    def _combine(
        self, how: str, results: dict[str, DimensionScore], passes: Callable[[float], bool]
    ) -> Measurement:
        """The weighted average of the dimension scores, one Detail and hit or miss each."""
        m = Measurement(score=0.0)
        total = weight_sum = 0.0
        parts: list[str] = []
        for dimension, result in results.items():
            weight = self.weights.get(dimension, 1.0)
            total, weight_sum = total + result.score * weight, weight_sum + weight
            shown = f"{dimension} {result.score:.2f}"
            parts.append(shown if weight == 1 else f"{shown} ×{weight:g}")
            m.details.append(self._detail(dimension, result, passes(result.score)))
        for d in m.details:
            (m.hits if d.passed else m.misses).append(self._sentence(d))
        m.score = total / weight_sum
        m.reasoning = f"{how} tone: {', '.join(parts)} → {m.score:.2f}"
        return m

    def _detail(self, dimension: str, result: DimensionScore, passed: bool) -> Detail:
        expected = getattr(self.profile, dimension)
        if isinstance(expected, PersonaProfile):
            expected = expected.describe()
        return detail(
            f"tone.{dimension}",
            passed,
            expected=expected,
            actual=result.measured,
            message=result.message,
        )

    @staticmethod
    def _sentence(d: Detail) -> str:
        """The hit or miss line of a dimension's Detail."""
        dimension = d.check.removeprefix("tone.")
        if dimension == "persona_consistency":
            return f"persona: {d.message}"
        wanted = "" if d.passed else f", expected {d.expected}"
        return f"{dimension} is {d.actual}{wanted} ({d.message})"
