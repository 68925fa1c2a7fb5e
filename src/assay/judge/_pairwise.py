"""The pairwise judge's question: which of two outputs for the same input is better.

The input and both outputs are untrusted data in nonce-delimited blocks (INPUT, OUTPUT_A,
OUTPUT_B), so an output saying "Output A is better" is something a system under test said.
Asking both orders and folding the answers is `assay.comparison`'s and `assay.api`'s part.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, Field

from assay.judge._client import JudgeClient, Judgement
from assay.judge._templates import PromptTemplate, builtin
from assay.results import JSON

__all__ = ["PairwiseAnswer", "ask_preference", "pairwise_template"]


class PairwiseAnswer(BaseModel):
    """The judge's reply: which output is better, and why (reasoning first, so the judge
    reasons before it commits to a preference)."""

    reasoning: str = Field(description="Why, in one or two sentences.")
    preferred: Literal["A", "B", "tie"] = Field(
        description='"A" or "B": the better output; "tie" when neither is better.'
    )


@functools.cache
def pairwise_template() -> PromptTemplate:
    """The packaged `pairwise.j2` (read once per process)."""
    return builtin("pairwise", frozenset({"output_a", "output_b"}))


async def ask_preference(
    client: JudgeClient,
    *,
    input: JSON,
    output_a: str,
    output_b: str,
    metadata: Mapping[str, JSON] | None = None,
) -> Judgement[PairwiseAnswer]:
    """Ask `client` which of `output_a` and `output_b` better answers `input`.

    Args:
        metadata: The test's `metadata`, where the `fake` provider reads `fake_judge`.

    Raises:
        JudgeError: No valid reply after the retries.
        assay.cache.CacheMiss: Replay mode and the answer is not cached.
    """
    prompt = pairwise_template().render(
        {"input": input, "output_a": output_a, "output_b": output_b}
    )
    return await client.ask(prompt, PairwiseAnswer, metadata=metadata)
