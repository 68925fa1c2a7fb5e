"""The bleu grader: sentence BLEU-4 of the output against one or more reference texts.

The computation is promptfoo's, so converted suites keep their verdicts: texts are lower-cased
and split on whitespace; for n = 1…4 the clipped n-gram precision is the best over the
references; a zero precision counts as 1e-7; the geometric mean (uniform weights) is
multiplied by the brevity penalty against the reference closest in length.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Annotated, Literal

from pydantic import Field, field_validator

from assay.errors import GraderError
from assay.graders._base import Grader, GradingContext, Measurement, TestFacts
from assay.graders._details import detail
from assay.graders.text import _expected_text, missing_reference

__all__ = ["Bleu", "bleu_score"]

_SMOOTHING = 1e-7
_MAX_N = 4


def _ngrams(words: list[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def bleu_score(candidate: str, references: list[str]) -> float:
    """Sentence BLEU-4 of `candidate` against `references` (see the module docstring)."""
    words = candidate.lower().split()
    refs = [r.lower().split() for r in references if r.strip()]
    if not words or not refs:
        return 0.0
    closest = min((len(r) for r in refs), key=lambda length: abs(length - len(words)))
    log_sum = 0.0
    for n in range(1, _MAX_N + 1):
        candidate_grams = _ngrams(words, n)
        total = sum(candidate_grams.values())
        clipped = max(
            sum(min(count, _ngrams(ref, n)[gram]) for gram, count in candidate_grams.items())
            for ref in refs
        )
        precision = clipped / total if total else 0.0
        log_sum += math.log(precision or _SMOOTHING) / _MAX_N
    brevity = 1.0 if len(words) > closest else math.exp(1 - closest / len(words))
    return min(1.0, brevity * math.exp(log_sum))


class Bleu(Grader):
    """BLEU-4 of the output against the reference text(s), 0–1."""

    type: Literal["bleu"]
    value: str | Annotated[list[str], Field(min_length=1)] | None = None
    """The reference text, or several (the best-matching one counts); defaults to the test's
    `expected_output`."""

    @field_validator("value")
    @classmethod
    def _not_blank(cls, value: str | list[str] | None) -> str | list[str] | None:
        texts = [value] if isinstance(value, str) else value or []
        if value is not None and not any(t.strip() for t in texts):
            raise ValueError("the reference text is empty; BLEU needs reference words")
        return value

    def problem_with_test(self, test: TestFacts) -> str | None:
        """The reference defaults to the test's expected_output: one of them must be given."""
        return missing_reference(self, test)

    async def measure(self, ctx: GradingContext) -> Measurement:
        references = (
            list(self.value)
            if isinstance(self.value, list)
            else [_expected_text(self.value, ctx, self.type)]
        )
        if not any(r.strip() for r in references):
            raise GraderError("bleu: the reference text is empty")
        score = bleu_score(ctx.output, references)
        bar = self.min_score if self.min_score is not None else ctx.threshold
        passed = score >= bar
        sentence = f"BLEU {score:.4f} is {'at least' if passed else 'below'} {bar:.2f}"
        return Measurement(
            score=score,
            hits=[sentence] if passed else [],
            misses=[] if passed else [sentence],
            details=[
                detail(
                    "bleu",
                    passed,
                    expected=references[0] if len(references) == 1 else references,
                    actual=ctx.output,
                    message=f"BLEU-4 {score:.4f}",
                )
            ],
        )
