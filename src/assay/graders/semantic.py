"""The `semantic-similarity` grader (SPEC §4.1): cosine of provider embeddings.

The output and the reference (`value`, else the test's expected output) are embedded in one
`/embeddings` request through the provider layer (the judge's provider unless the grader
names its own), cached like any model call, and compared by cosine, clipped to 0–1: texts
that point away from each other are as dissimilar as unrelated ones.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Literal

from pydantic import Field, field_validator

from assay.errors import GraderError
from assay.graders._base import Grader, GradingContext, Measurement, TestFacts
from assay.graders._details import detail
from assay.graders._provider_config import grader_provider, required_provider
from assay.providers import check_preset
from assay.results import JSON

__all__ = ["DEFAULT_EMBEDDING_MODEL", "SemanticSimilarity", "cosine"]

DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small"


def cosine(a: list[float], b: list[float]) -> float:
    """The cosine of two vectors.

    Raises:
        GraderError: Their lengths differ, or one is all zeros (it has no direction).
    """
    if len(a) != len(b):
        raise GraderError(f"the embeddings have different lengths ({len(a)} and {len(b)})")
    norm = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    if norm == 0.0:
        raise GraderError("an embedding is all zeros: its text has no direction to compare")
    return math.fsum(x * y for x, y in zip(a, b, strict=True)) / norm


class SemanticSimilarity(Grader):
    """How close in meaning the output is to a reference: the cosine of their embeddings."""

    type: Literal["semantic-similarity"]
    value: str | None = None
    """The reference text; default: the test's expected_output (JSON as its text)."""
    model: Annotated[str, Field(min_length=1)] = DEFAULT_EMBEDDING_MODEL
    """The embedding model."""
    provider: str | None = None
    """The provider of the embeddings (`openai`, `mistral`, `ollama`, `vllm`, `fake`, ...);
    default: the run's judge's provider, endpoint and key."""
    base_url: str | None = None
    """The embeddings endpoint; default: the judge's when the provider is the judge's, else
    the provider's."""
    api_key_env: str | None = None
    """The variable holding the API key; default: as `base_url`."""

    @field_validator("provider")
    @classmethod
    def _check_provider(cls, value: str | None) -> str | None:
        return value if value is None else check_preset(value)

    @property
    def awaits_io(self) -> bool:
        """Embedding requests wait on the network."""
        return True

    @property
    def wants_default_judge(self) -> bool:
        """Without a `provider` of its own it embeds with the judge's provider."""
        return self.provider is None

    def problem_with_test(self, test: TestFacts) -> str | None:
        """Without `value`, the test's expected output is the reference."""
        if self.value is not None or test.expected_output is not None:
            return None
        return (
            f"semantic-similarity compares the output with `value` or the expected_output, and "
            f"test '{test.test_id}' has neither; add `expected_output` or the grader's `value`"
        )

    async def measure(self, ctx: GradingContext) -> Measurement:
        reference = self.value if self.value is not None else _text(ctx.expected_output)
        if reference is None:
            raise GraderError("semantic-similarity needs `value` or the test's expected_output")
        if not ctx.output.strip() or not reference.strip():
            return _blank(ctx.output, reference)
        calls = required_provider(
            ctx,
            grader_provider(
                ctx,
                provider=self.provider,
                base_url=self.base_url,
                api_key_env=self.api_key_env,
                who=f"semantic-similarity {self.model}",
            ),
            "semantic-similarity",
        )
        vectors = await calls.embed(self.model, [ctx.output, reference])
        raw = cosine(vectors.vectors[0], vectors.vectors[1])
        score = min(max(raw, 0.0), 1.0)
        message = f"cosine {raw:.4f} with {calls.config.provider} {self.model}"
        passed = score >= (self.min_score if self.min_score is not None else ctx.threshold)
        return Measurement(
            score=score,
            hits=[f"similar in meaning (cosine {score:.3f})"] if passed else [],
            misses=[] if passed else [f"not similar enough (cosine {score:.3f})"],
            reasoning=message + (" (cached)" if vectors.cached else ""),
            details=[
                detail("cosine", passed, expected=reference, actual=ctx.output, message=message)
            ],
            token_usage=vectors.token_usage,
            judge_model=self.model,
        )


def _text(value: JSON) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _blank(output: str, reference: str) -> Measurement:
    """Without text on a side there is nothing to embed: two blanks are alike, one is not."""
    both = not output.strip() and not reference.strip()
    message = (
        "both texts are empty"
        if both
        else ("the output is empty" if not output.strip() else "the reference is empty")
    )
    return Measurement(
        score=1.0 if both else 0.0,
        hits=[message] if both else [],
        misses=[] if both else [message],
        reasoning=message + "; nothing was embedded",
        details=[detail("cosine", both, expected=reference, actual=output, message=message)],
    )
