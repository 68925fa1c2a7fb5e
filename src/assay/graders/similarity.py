"""Similarity graders: similarity (edit distance, token ratios), rouge and levenshtein (SPEC §4).

Both compare the output with a reference text — `value`, or the test's `expected_output` — and
score how close they are on 0–1. The Detail passes when the score reaches the grader's bar
(`min_score`, else the case threshold), so a report shows which comparisons fell short.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Literal, Self

from pydantic import Field, model_validator

from assay.errors import GraderError
from assay.graders._base import Grader, GradingContext, Measurement, TestFacts
from assay.graders._details import detail
from assay.graders.text import _expected_text, missing_reference

__all__ = ["Levenshtein", "Rouge", "Similarity"]

SimilarityMethod = Literal[
    "ratio", "partial_ratio", "token_sort_ratio", "token_set_ratio", "levenshtein", "indel"
]
RougeVariant = Literal["rouge1", "rouge2", "rougeL"]


@functools.cache
def _similarity_function(method: SimilarityMethod) -> Callable[[str, str], float]:
    """The rapidfuzz scorer of `method`, as a function onto 0–1."""
    from rapidfuzz import fuzz
    from rapidfuzz.distance import Indel, Levenshtein

    if method == "levenshtein":
        return Levenshtein.normalized_similarity
    if method == "indel":
        return Indel.normalized_similarity
    percent: Callable[[str, str], float] = getattr(fuzz, method)
    return lambda a, b: percent(a, b) / 100.0


class _ReferenceGrader(Grader):
    """Shared options of graders that compare the output with a reference text."""

    value: str | None = None
    """The reference text; defaults to the test's `expected_output` (JSON as compact text)."""

    def problem_with_test(self, test: TestFacts) -> str | None:
        """The reference defaults to the test's expected_output: one of them must be given."""
        return missing_reference(self, test)

    def _bar(self, ctx: GradingContext) -> float:
        return self.min_score if self.min_score is not None else ctx.threshold

    def _measurement(
        self, ctx: GradingContext, check: str, score: float, reference: str, message: str
    ) -> Measurement:
        bar = self._bar(ctx)
        passed = score >= bar
        sentence = f"{check} {score:.2f} is {'at least' if passed else 'below'} {bar:.2f}"
        return Measurement(
            score=score,
            hits=[sentence] if passed else [],
            misses=[] if passed else [sentence],
            details=[detail(check, passed, expected=reference, actual=ctx.output, message=message)],
        )


class Similarity(_ReferenceGrader):
    """How close the output is to the reference text, by edit distance or token ratio (0–1)."""

    @classmethod
    def warm_up(cls) -> None:
        """Import rapidfuzz."""
        _similarity_function("ratio")

    type: Literal["similarity"]
    method: SimilarityMethod = "ratio"
    """`ratio` (character edits, the default), `partial_ratio` (best-matching substring),
    `token_sort_ratio` (word order ignored), `token_set_ratio` (word order and repeats ignored),
    `levenshtein` (normalised Levenshtein), `indel` (normalised Indel distance, equal to ratio)."""
    case_sensitive: bool = True
    """Compare exactly; false folds case on both sides first."""

    async def measure(self, ctx: GradingContext) -> Measurement:
        reference = _expected_text(self.value, ctx, self.type)
        expected, actual = reference, ctx.output
        if not self.case_sensitive:
            expected, actual = expected.casefold(), actual.casefold()
        if not expected and not actual:
            score = 1.0  # two empty texts are identical; token_set_ratio alone would say 0
        else:
            score = min(1.0, max(0.0, _similarity_function(self.method)(expected, actual)))
        return self._measurement(
            ctx, f"similarity.{self.method}", score, reference, f"{self.method} {score:.4f}"
        )


# --- rouge --------------------------------------------------------------------------------------

_NO_SPACE_SCRIPTS = (
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
    "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f"  # Hiragana, Katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"  # Han
)
_UNICODE_TOKEN = re.compile(f"[{_NO_SPACE_SCRIPTS}]|[^\\W{_NO_SPACE_SCRIPTS}]+")
"""A character of a script written without spaces, or a run of other word characters."""

_NEEDS_TOKENS = {"rouge1": 1, "rouge2": 2, "rougeL": 1}


class _MemoStemmer:
    """nltk's Porter stemmer with a memo: rouge-score stems every token, and stemming is slow."""

    def __init__(self) -> None:
        from nltk.stem import porter  # type: ignore[import-untyped]

        self.stem: Callable[[str], str] = functools.lru_cache(maxsize=65536)(
            porter.PorterStemmer().stem
        )


@dataclass(frozen=True)
class _Tokenizer:
    """Turns text into ROUGE tokens; also a rouge-score tokenizer (it has `tokenize`)."""

    kind: Literal["rouge", "unicode"]
    stemmer: _MemoStemmer | None

    def tokenize(self, text: str) -> list[str]:
        if self.kind == "unicode":
            return _UNICODE_TOKEN.findall(text.casefold())
        from rouge_score.tokenize import tokenize  # type: ignore[import-untyped]

        tokens: list[str] = tokenize(text, self.stemmer)
        return tokens

    def tokenize_reference(self, text: str) -> tuple[str, ...]:
        """Tokens of a reference text, cached: the same `value` is scored against every case."""
        return _reference_tokens(self, text)


@functools.lru_cache(maxsize=1024)
def _reference_tokens(tokenizer: _Tokenizer, text: str) -> tuple[str, ...]:
    return tuple(tokenizer.tokenize(text))


@functools.cache
def _tokenizer(kind: Literal["rouge", "unicode"], use_stemmer: bool) -> _Tokenizer:
    """One tokenizer per configuration, so the stemmer's memo is shared by every rouge grader."""
    return _Tokenizer(kind, _MemoStemmer() if use_stemmer else None)


@functools.cache
def _ngram_precision_recall(
    variant: RougeVariant, use_stemmer: bool, kind: Literal["rouge", "unicode"]
) -> Callable[[str, str], tuple[float, float]]:
    """rouge-score's n-gram scoring for one configuration; the RougeScorer is built once."""
    from rouge_score.rouge_scorer import RougeScorer  # type: ignore[import-untyped]

    scorer = RougeScorer([variant], tokenizer=_tokenizer(kind, use_stemmer))

    def score(reference: str, output: str) -> tuple[float, float]:
        result = scorer.score(reference, output)[variant]
        return float(result.precision), float(result.recall)

    return score


def _fmeasure(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


class Rouge(_ReferenceGrader):
    """ROUGE F-measure of the output against the reference text (rouge-score's tokenisation)."""

    @classmethod
    def warm_up(cls) -> None:
        """Import rouge-score (and the NLTK parts it loads): over a second the first time."""
        from rouge_score import rouge_scorer  # type: ignore[import-untyped]

        del rouge_scorer

    type: Literal["rouge"]
    variant: RougeVariant = "rougeL"
    """`rouge1` (shared words), `rouge2` (shared word pairs) or `rougeL` (longest common
    subsequence of words: rewards the same content in the same order)."""
    use_stemmer: bool = False
    """Reduce English words to their Porter stem first, so "refunds" matches "refund"."""
    tokenizer: Literal["rouge", "unicode"] = "rouge"
    """`rouge`: rouge-score's tokeniser (lower-cased a–z and 0–9 runs, as in ROUGE-1.5.5; other
    letters are dropped); `unicode`: words in any script, one token per character in scripts
    written without spaces (Chinese, Japanese, Thai)."""

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.use_stemmer and self.tokenizer == "unicode":
            raise ValueError(
                "use_stemmer applies the English Porter stemmer and works only with "
                "`tokenizer: rouge`; remove use_stemmer or the unicode tokenizer"
            )
        if self.value is not None:
            problem = self._reference_problem(self.value)
            if problem:
                raise ValueError(f"`value` {problem}")
        return self

    def problem_with_test(self, test: TestFacts) -> str | None:
        """Why the test's expected_output cannot be the reference, or None (checked at load)."""
        missing = missing_reference(self, test)
        if missing is not None:
            return missing
        test_id, expected_output = test.test_id, test.expected_output
        if self.value is not None or expected_output is None:
            return None
        reference = (
            expected_output
            if isinstance(expected_output, str)
            else json.dumps(expected_output, ensure_ascii=False)
        )  # rendered as `_expected_text` renders it when grading
        problem = self._reference_problem(reference)
        return f"rouge: the expected_output of test '{test_id}' {problem}" if problem else None

    def _reference_problem(self, reference: str) -> str | None:
        """Why `reference` cannot be scored against, or None."""
        if not reference.strip():
            return "is empty; ROUGE needs reference words"
        tokens = _tokenizer(self.tokenizer, self.use_stemmer).tokenize_reference(reference)
        needed = _NEEDS_TOKENS[self.variant]
        if not tokens and self.tokenizer == "rouge":
            return (
                "has no words rouge-score can read (it keeps only a–z and 0–9, so other scripts "
                "are dropped); set `tokenizer: unicode`"
            )
        if len(tokens) < needed:
            words = f"{len(tokens)} word" + ("" if len(tokens) == 1 else "s")
            return f"has only {words}; {self.variant} needs at least {needed}"
        return None

    async def measure(self, ctx: GradingContext) -> Measurement:
        reference = _expected_text(self.value, ctx, self.type)
        problem = self._reference_problem(reference)
        if problem:
            raise GraderError(f"rouge: the reference text {problem}")
        tokenizer = _tokenizer(self.tokenizer, self.use_stemmer)
        if self.variant == "rougeL":
            precision, recall = self._lcs(tokenizer, reference, ctx.output)
        else:
            score = _ngram_precision_recall(self.variant, self.use_stemmer, self.tokenizer)
            precision, recall = score(reference, ctx.output)
        f = _fmeasure(precision, recall)
        message = f"precision {precision:.4f}, recall {recall:.4f}, F {f:.4f}"
        if f == 0.0 and ctx.output.strip() and not tokenizer.tokenize(ctx.output):
            message += "; the output has no words the tokenizer keeps"
        return self._measurement(ctx, f"rouge.{self.variant}", f, reference, message)

    @staticmethod
    def _lcs(tokenizer: _Tokenizer, reference: str, output: str) -> tuple[float, float]:
        """ROUGE-L precision and recall, with the longest common subsequence found by rapidfuzz.

        rouge-score fills an n×m table in pure Python (seconds and hundreds of MB for a 1 MB
        output); rapidfuzz's bit-parallel LCS gives the same length in microseconds.
        """
        from rapidfuzz.distance import LCSseq

        expected = tokenizer.tokenize_reference(reference)
        actual = tokenizer.tokenize(output)
        if not actual:
            return 0.0, 0.0
        common = LCSseq.similarity(expected, actual)
        return common / len(actual), common / len(expected)


# --- levenshtein --------------------------------------------------------------------------------


class Levenshtein(_ReferenceGrader):
    """The output is within `max_distance` character edits of the reference (score 1 or 0)."""

    @classmethod
    def warm_up(cls) -> None:
        """Import rapidfuzz."""
        _similarity_function("levenshtein")

    type: Literal["levenshtein"]
    max_distance: Annotated[int, Field(ge=0)] = 5
    """Most insertions, deletions and substitutions allowed (promptfoo's `threshold`)."""

    async def measure(self, ctx: GradingContext) -> Measurement:
        from rapidfuzz.distance import Levenshtein as Distance

        reference = _expected_text(self.value, ctx, self.type)
        distance = Distance.distance(reference, ctx.output, score_cutoff=None)
        passed = distance <= self.max_distance
        sentence = f"Levenshtein distance {distance} is {'within' if passed else 'over'} " + (
            f"{self.max_distance}"
        )
        return Measurement(
            score=1.0 if passed else 0.0,
            hits=[sentence] if passed else [],
            misses=[] if passed else [sentence],
            details=[
                detail(
                    "levenshtein",
                    passed,
                    expected=reference,
                    actual=ctx.output,
                    message=f"distance {distance}, at most {self.max_distance}",
                )
            ],
        )
