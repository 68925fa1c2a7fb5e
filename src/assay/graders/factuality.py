"""The factuality grader (SPEC §4, §5.5): the output's claims against the references, or JSON.

Claim modes (`strict`, `lenient`) give the output and the references (the test's expected_output
and `context`) to a `ClaimLabeller`, which splits the output into claims and labels each
`supported`, `contradicted` or `unverifiable`. `depth: shallow` is the deterministic n-gram
labeller below; `depth: deep` asks the LLM judge (`_claims.JudgeLabeller`) and falls back to
shallow without a judge or when the judge fails. `json_structural` compares JSON leaves
instead of claims, never with a judge.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import ClassVar, Literal

from assay.errors import GraderError
from assay.graders._base import GradingContext, Measurement, TestFacts
from assay.graders._claims import ClaimLabel, ClaimLabeller, JudgeLabeller
from assay.graders._details import detail, truncate
from assay.graders._judged import JudgedGrader
from assay.graders.structured import _reject_constant
from assay.judge import JudgeError
from assay.results import JSON, Detail

__all__ = [
    "MIN_CLAIM_TOKENS",
    "NUMBER_TOLERANCE",
    "SUPPORT_BAR",
    "ClaimLabel",
    "ClaimLabeller",
    "Factuality",
    "compare_json",
    "label_shallow",
    "score_claims",
    "split_sentences",
]

SUPPORT_BAR = 0.6
"""Share of a claim's content n-grams a reference sentence must contain to be about the same
thing (then it supports the claim, or contradicts it when a number or a negation differs)."""
MIN_CLAIM_TOKENS = 2
"""Sentences with fewer content tokens ("Sure!", "Thanks.") are not claims."""
NUMBER_TOLERANCE = 0.01
"""json_structural: numbers match when they differ by at most this much."""

_STOPWORD_TEXT = """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further get gets got had has have having he her here hers herself him himself his how i if in
    into is it its itself just let me might more most must my myself of off on once only or other
    our ours ourselves out over own per same shall she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up upon us
    very via was we were what when where which while who whom why will with within would yes you
    your yours yourself yourselves ok okay sure thanks thank please hello hi"""
_NEGATION_TEXT = "not no never none nobody nothing neither nor cannot without"
_STOPWORDS, _NEGATIONS = frozenset(_STOPWORD_TEXT.split()), frozenset(_NEGATION_TEXT.split())
_TOKEN = re.compile(r"(\d+(?:,\d{3})*(?:\.\d+)?)|([^\W\d_]+(?:'[^\W\d_]+)*)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
_NUMBER = "#"
_NEGATION = "!"


@dataclass(frozen=True, slots=True)
class _Features:
    """What the shallow labeller compares: content unigrams and bigrams, numbers, negation."""

    text: str
    unigrams: frozenset[str]
    bigrams: frozenset[tuple[str, str]]
    numbers: frozenset[str]
    negated: bool
    size: int


def split_sentences(text: str) -> list[str]:
    """Sentences of `text`: split after . ! ? followed by whitespace, after 。！？, and at lines."""
    return [s for s in (part.strip() for part in _SENTENCE_END.split(text)) if s]


@functools.lru_cache(maxsize=16_384)
def _term(token: str) -> str | None:
    """A word token as compared: None for a stopword, `_NEGATION` for a negation, else lower
    case with a folded plural ("refunds" → "refund", "policies" → "policy"). Cached: a
    vocabulary is small and every sentence repeats it."""
    word = token.casefold()
    if word in _NEGATIONS or word.endswith("n't"):
        return _NEGATION
    if word in _STOPWORDS:
        return None
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@functools.lru_cache(maxsize=4_096)
def _features(sentence: str) -> _Features:
    """Cached: repeats and cached replies grade the same sentences again."""
    sequence: list[str] = []
    numbers: set[str] = set()
    negated = False
    for number, word in _TOKEN.findall(sentence.replace("’", "'")):
        if number:
            numbers.add(format(Decimal(number.replace(",", "")).normalize(), "f"))
            sequence.append(_NUMBER)
            continue
        term = _term(word)
        if term == _NEGATION:
            negated = True
        elif term is not None:
            sequence.append(term)
    unigrams = frozenset(sequence)
    return _Features(
        text=sentence,
        unigrams=unigrams - {_NUMBER},
        bigrams=frozenset(itertools.pairwise(sequence)),
        numbers=frozenset(numbers),
        negated=negated,
        size=len(sequence),
    )


@functools.lru_cache(maxsize=512)
def _reference_features(references: tuple[str, ...]) -> tuple[_Features, ...]:
    """Reference sentences with content; cached since every repeat of a case shares them."""
    found = (_features(s) for r in references for s in split_sentences(r))
    return tuple(f for f in found if f.size > 0)


def _overlap(claim: _Features, ref: _Features) -> float:
    shared = len(claim.unigrams & ref.unigrams) + len(claim.bigrams & ref.bigrams)
    return shared / (len(claim.unigrams) + len(claim.bigrams))


def _conflict(claim: _Features, ref: _Features) -> str | None:
    if claim.negated != ref.negated:
        return f"negation differs: the {'claim' if claim.negated else 'reference'} is negated"
    only_claim, only_ref = claim.numbers - ref.numbers, ref.numbers - claim.numbers
    if only_claim and only_ref:
        return f"numbers differ: {', '.join(sorted(only_claim))} vs {', '.join(sorted(only_ref))}"
    return None


def _label(claim: _Features, refs: Sequence[_Features]) -> ClaimLabel:
    """Supported by the best same-topic reference without a conflict; else contradicted by the
    best one with a conflict; else unverifiable (see docs/graders/factuality.md)."""
    support: tuple[float, _Features] | None = None
    conflict: tuple[float, _Features, str] | None = None
    nearest: tuple[float, _Features] | None = None
    for ref in refs:
        score = _overlap(claim, ref)
        if nearest is None or score > nearest[0]:
            nearest = (score, ref)
        if score < SUPPORT_BAR:
            continue
        reason = _conflict(claim, ref)
        if reason is not None:
            if conflict is None or score > conflict[0]:
                conflict = (score, ref, reason)
        elif claim.numbers <= ref.numbers and (support is None or score > support[0]):
            support = (score, ref)
    if support is not None:
        return ClaimLabel(claim.text, "supported", support[1].text, f"overlap {support[0]:.2f}")
    if conflict is not None:
        score, ref, reason = conflict
        return ClaimLabel(claim.text, "contradicted", ref.text, f"{reason}; overlap {score:.2f}")
    if nearest is None or nearest[0] == 0.0:
        return ClaimLabel(claim.text, "unverifiable", None, "no reference shares a content word")
    score, ref = nearest
    reason = (
        f"states numbers the reference lacks: {', '.join(sorted(claim.numbers - ref.numbers))}"
        if score >= SUPPORT_BAR
        else f"best overlap {score:.2f} < {SUPPORT_BAR}"
    )
    return ClaimLabel(claim.text, "unverifiable", ref.text, reason)


async def label_shallow(output: str, references: Sequence[str]) -> list[ClaimLabel]:
    """The `depth: shallow` labeller: deterministic n-gram overlap, no API call."""
    refs = _reference_features(tuple(references))
    if not refs:
        raise GraderError(
            "the expected_output and context have no content words to check claims against"
        )
    claims = (_features(s) for s in split_sentences(output))
    return [_label(c, refs) for c in claims if c.size >= MIN_CLAIM_TOKENS]


_LABELLERS: dict[str, ClaimLabeller] = {"shallow": label_shallow}
"""The deterministic labellers by depth; `deep`'s is a `JudgeLabeller` bound to each case."""


# --- json_structural -------------------------------------------------------------------------


@dataclass
class _Tally:
    """Matching leaves, the denominator (expected leaves + unexpected entries) and Details."""

    matched: int = 0
    total: int = 0
    counts: dict[str, int] = field(default_factory=lambda: {"differ": 0, "missing": 0, "extra": 0})
    details: list[Detail] = field(default_factory=list)

    def miss(self, kind: str, path: str, expected: JSON, actual: JSON, message: str) -> None:
        """Record a mismatch; values are shown as JSON text (`"2"` vs `2`), absent ones as None."""
        self.counts[kind] += 1
        shown = [
            None if v is _ABSENT else json.dumps(v, ensure_ascii=False) for v in (expected, actual)
        ]
        self.details.append(
            detail(f"json_path.{path}", False, expected=shown[0], actual=shown[1], message=message)
        )


_ABSENT = object()
"""Marks the side of a mismatch that has no value (a missing or an unexpected entry)."""
_IDENTIFIER = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*$")


def _child(path: str, key: str) -> str:
    """JSONPath of a member, spelled like jsonschema's `json_path` (`$.a`, `$['a b']`)."""
    if _IDENTIFIER.match(key):
        return f"{path}.{key}"
    return path + "['" + key.replace("\\", "\\\\").replace("'", "\\'") + "']"


def _kind(value: JSON) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "string" if isinstance(value, str) else "null"


def _leaves(value: JSON) -> int:
    """Leaves under a value; an empty object or array is one leaf."""
    if isinstance(value, dict) and value:
        return sum(_leaves(v) for v in value.values())
    if isinstance(value, list) and value:
        return sum(_leaves(v) for v in value)
    return 1


def _same_leaf(expected: JSON, actual: JSON) -> bool:
    kind = _kind(expected)
    if kind != _kind(actual):
        return False
    if kind == "number":
        return bool(abs(expected - actual) <= NUMBER_TOLERANCE + 1e-9)
    return bool(expected == actual)


def _is_primitive(value: JSON) -> bool:
    return not isinstance(value, dict | list)


class _PrimitiveSet:
    """Membership of primitives under the leaf rule: numbers within the tolerance, true ≠ 1."""

    def __init__(self, values: Sequence[JSON]) -> None:
        self.exact = {(_kind(v), v) for v in values if _kind(v) in ("string", "boolean", "null")}
        self.numbers = sorted(float(v) for v in values if _kind(v) == "number")

    def __contains__(self, value: JSON) -> bool:
        kind = _kind(value)
        if kind == "number":
            low = bisect.bisect_left(self.numbers, value - NUMBER_TOLERANCE - 1e-9)
            return low < len(self.numbers) and self.numbers[low] <= value + NUMBER_TOLERANCE + 1e-9
        return kind not in ("object", "array") and (kind, value) in self.exact


def compare_json(
    expected: JSON, actual: JSON, path: str = "$", tally: _Tally | None = None
) -> _Tally:
    """Compare `actual` with `expected` leaf by leaf (the rules: docs/graders/factuality.md)."""
    t = tally if tally is not None else _Tally()
    container = isinstance(expected, dict | list) and len(expected) > 0
    if container and _kind(actual) != _kind(expected):
        t.total += _leaves(expected)
        t.miss("differ", path, expected, actual, f"expected {_kind(expected)}, got {_kind(actual)}")
    elif container and isinstance(expected, dict):
        _compare_objects(expected, actual, path, t)
    elif container and all(_is_primitive(v) for v in expected):
        _compare_sets(expected, actual, path, t)
    elif container:
        _compare_positions(expected, actual, path, t)
    else:
        t.total += 1
        if _same_leaf(expected, actual):
            t.matched += 1
        elif _kind(expected) != _kind(actual):
            message = f"expected {_kind(expected)}, got {_kind(actual)}"
            t.miss("differ", path, expected, actual, message)
        else:
            t.miss("differ", path, expected, actual, "value differs")
    return t


def _compare_objects(
    expected: dict[str, JSON], actual: dict[str, JSON], path: str, t: _Tally
) -> None:
    for key, value in expected.items():
        if key in actual:
            compare_json(value, actual[key], _child(path, key), t)
        else:
            t.total += _leaves(value)
            t.miss("missing", _child(path, key), value, _ABSENT, "missing from the output")
    for key, value in actual.items():
        if key not in expected:
            t.total += 1
            t.miss("extra", _child(path, key), _ABSENT, value, "not in the expected output")


def _compare_positions(expected: list[JSON], actual: list[JSON], path: str, t: _Tally) -> None:
    for i, value in enumerate(expected):
        if i < len(actual):
            compare_json(value, actual[i], f"{path}[{i}]", t)
        else:
            t.total += _leaves(value)
            t.miss("missing", f"{path}[{i}]", value, _ABSENT, "missing from the output")
    for i in range(len(expected), len(actual)):
        t.total += 1
        t.miss("extra", f"{path}[{i}]", _ABSENT, actual[i], "not in the expected output")


def _compare_sets(expected: list[JSON], actual: list[JSON], path: str, t: _Tally) -> None:
    in_actual, in_expected = _PrimitiveSet(actual), _PrimitiveSet(expected)
    for i, value in enumerate(expected):
        t.total += 1
        if value in in_actual:
            t.matched += 1
        else:
            t.miss("missing", f"{path}[{i}]", value, _ABSENT, "not in the output's array (a set)")
    for i, value in enumerate(actual):
        if value not in in_expected:
            t.total += 1
            t.miss("extra", f"{path}[{i}]", _ABSENT, value, "not in the expected array (a set)")


# --- the grader --------------------------------------------------------------------------------

_MISS_PHRASES = {
    "differ": ("value differs", "values differ"),
    "missing": ("expected entry is missing", "expected entries are missing"),
    "extra": ("unexpected entry", "unexpected entries"),
}


def _load_json(value: JSON) -> tuple[JSON, str | None]:
    """`value` as JSON (a string is parsed) and None, or None and where parsing failed."""
    if not isinstance(value, str):
        return value, None
    try:
        return json.loads(value, parse_constant=_reject_constant), None
    except json.JSONDecodeError as exc:
        return None, f"line {exc.lineno} column {exc.colno}: {exc.msg}"
    except ValueError as exc:
        return None, str(exc)


def _json_container(value: JSON) -> JSON:
    """`value` as a JSON object or array, or None; prose is rejected without a parse attempt."""
    if isinstance(value, str) and not value.lstrip().startswith(("{", "[")):
        return None
    parsed, _ = _load_json(value)
    return parsed if isinstance(parsed, dict | list) else None


class Factuality(JudgedGrader):
    """How far the output agrees with the test's expected_output and context."""

    type: Literal["factuality"]
    mode: Literal["auto", "strict", "lenient", "json_structural"] = "auto"
    """`strict`: only supported claims pass; `lenient`: only contradicted claims fail;
    `json_structural`: compare JSON leaves; `auto`: json_structural when the expected_output and
    the output are both JSON objects or arrays, else strict."""
    depth: Literal["shallow", "deep"] = "shallow"
    """How claims are labelled: `shallow` by n-gram overlap (deterministic, no API call);
    `deep` by the LLM judge, which extracts atomic claims and labels them in one call (falls
    back to shallow, saying so in `reasoning`, without a judge or when the judge fails)."""

    template: ClassVar[str] = "factuality-claims"

    @property
    def requires_judge(self) -> bool:
        """Without a judge `depth: deep` falls back to shallow: never a configuration error."""
        return False

    @property
    def awaits_io(self) -> bool:
        """Only `deep` claim labelling waits on a judge."""
        return self.depth == "deep" and self.mode != "json_structural"

    @property
    def uses_judge(self) -> bool:
        """Re-judging a borderline case re-asks only a `deep` labeller."""
        return self.awaits_io

    def problem_with_test(self, test: TestFacts) -> str | None:
        """Why this grader cannot grade test `test_id`, or None; called when the suite loads."""
        test_id, expected_output, context = test.test_id, test.expected_output, test.context
        if self.mode == "json_structural":
            if expected_output is None:
                return (
                    f"factuality mode json_structural compares with the expected_output, and test "
                    f"'{test_id}' has none; add a JSON `expected_output`"
                )
            _, where = _load_json(expected_output)
            if where is not None:
                return (
                    f"factuality mode json_structural: the expected_output of test '{test_id}' "
                    f"is not JSON ({where}); use mode strict or lenient for text"
                )
        elif expected_output is None and not context:
            return (
                f"factuality checks the output against the expected_output and context, and test "
                f"'{test_id}' has neither; add `expected_output` or `context`"
            )
        return super().problem_with_test(test)

    async def measure(self, ctx: GradingContext) -> Measurement:
        if self.mode == "json_structural":
            return self._structural(*self._forced_json(ctx), "json_structural")
        if self.mode == "auto":
            expected = _json_container(ctx.expected_output)
            actual = _json_container(ctx.output) if expected is not None else None
            if actual is not None:
                return self._structural(expected, actual, "json_structural (auto)")
        return await self._claims(ctx, "lenient" if self.mode == "lenient" else "strict")

    @staticmethod
    def _forced_json(ctx: GradingContext) -> tuple[JSON, JSON]:
        if ctx.expected_output is None:
            raise GraderError("mode json_structural needs the test's expected_output (JSON)")
        expected, where = _load_json(ctx.expected_output)
        if where is not None:
            raise GraderError(
                f"mode json_structural: the test's expected_output is not JSON ({where})"
            )
        actual, where = _load_json(ctx.output)
        if where is not None:
            raise GraderError(
                f"mode json_structural: the output is not JSON ({where}); "
                "use mode strict or lenient to grade text"
            )
        return expected, actual

    @staticmethod
    def _structural(expected: JSON, actual: JSON, mode: str) -> Measurement:
        t = compare_json(expected, actual)
        misses = [f"{n} {_MISS_PHRASES[kind][n > 1]}" for kind, n in t.counts.items() if n]
        return Measurement(
            score=t.matched / t.total,
            hits=[f"{t.matched} of {t.total} JSON leaves match"] if t.matched else [],
            misses=misses,
            reasoning=f"{mode}: {t.matched} of {t.total} leaves match",
            details=t.details,
        )

    async def _claims(self, ctx: GradingContext, mode: Literal["strict", "lenient"]) -> Measurement:
        references = list(ctx.context)
        if ctx.expected_output is not None:
            expected = ctx.expected_output
            text = (
                expected if isinstance(expected, str) else json.dumps(expected, ensure_ascii=False)
            )
            references.insert(0, text)
        if not references:
            raise GraderError(
                "factuality needs references: add `expected_output` or `context` to the test"
            )
        shallow = _LABELLERS["shallow"]
        if self.depth == "shallow":
            return score_claims(await shallow(ctx.output, references), mode, "shallow", ctx.output)
        if not self.has_judge(ctx):
            m = score_claims(await shallow(ctx.output, references), mode, "shallow", ctx.output)
            m.reasoning += "; depth deep fell back to shallow: no judge configured"
            m.fallback = "deep factuality → shallow: no judge configured"
            return m
        judge = JudgeLabeller(self, ctx)
        try:
            labels = await judge(ctx.output, references)
        except JudgeError as exc:
            m = score_claims(await shallow(ctx.output, references), mode, "shallow", ctx.output)
            m.reasoning += f"; depth deep fell back to shallow: judge failed: {exc}"
            m.fallback = f"deep factuality → shallow: judge failed: {exc}"
            return m.charged(exc)
        assert judge.judgement is not None
        return score_claims(labels, mode, "deep", ctx.output).charged(judge.judgement)


def score_claims(
    labels: list[ClaimLabel], mode: Literal["strict", "lenient"], depth: str, output: str
) -> Measurement:
    """The claim score of SPEC §4 (strict: supported / claims; lenient: not contradicted /
    claims), with one Detail per claim, whichever labeller labelled them."""
    lenient = mode == "lenient"
    if not labels:
        message = "the output makes no checkable claims"
        return Measurement(
            score=1.0 if lenient else 0.0,
            hits=[message] if lenient else [],
            misses=[] if lenient else [message],
            reasoning=f"{mode}, depth {depth}: {message}",
            details=[detail("claims", lenient, actual=output, message=message)],
        )
    counts = {"supported": 0, "contradicted": 0, "unverifiable": 0}
    details: list[Detail] = []
    for i, claim in enumerate(labels):
        counts[claim.label] += 1
        passed = claim.label == "supported" or (lenient and claim.label == "unverifiable")
        shown = f"; reference: '{truncate(claim.reference)}'" if claim.reference else ""
        message = f"{claim.label} ({claim.reason}){shown}"
        details.append(
            detail(
                f"claim[{i}]",
                passed,
                expected=claim.reference,
                actual=claim.claim,
                message=message,
            )
        )
    good = counts["supported"] + (counts["unverifiable"] if lenient else 0)
    verb = "not contradicted" if lenient else "supported"
    failing = ["contradicted"] if lenient else ["contradicted", "unverifiable"]
    return Measurement(
        score=good / len(labels),
        hits=[f"{good} of {len(labels)} claims {verb}"] if good else [],
        misses=[f"{counts[k]} of {len(labels)} claims {k}" for k in failing if counts[k]],
        reasoning=(
            f"{mode}, depth {depth}: {counts['supported']} supported, "
            f"{counts['contradicted']} contradicted, {counts['unverifiable']} unverifiable "
            f"of {len(labels)} claims"
        ),
        details=details,
    )
