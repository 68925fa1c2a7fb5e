"""The `retrieval` grader (SPEC §4.1): did the retriever return the passages it should have?

Deterministic ranking metrics over the ids of the passages the target retrieved (its runtime
`context`, in rank order) against the test's `expected_context_ids` (the relevant set), with
binary relevance, at a cut-off `k` (default: every retrieved passage):

- `recall@k` = relevant passages in the top k / relevant passages;
- `precision@k` = relevant passages in the top k / k (/ the number retrieved when `k` is unset);
- `mrr` = 1 / rank of the first relevant passage in the top k (0 when none);
- `ndcg@k` = DCG / ideal DCG, DCG = Σ 1 / log2(rank + 1) over the relevant passages in the
  top k, the ideal placing min(relevant, k) of them first.

An id retrieved twice counts at its first rank only: the repeat is a wasted slot.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import Field

from assay.errors import GraderError
from assay.graders._base import Grader, GradingContext, Measurement, TestFacts
from assay.graders._details import detail
from assay.results import Detail

__all__ = ["Retrieval", "ranking_metric"]

Metric = Literal["recall", "precision", "mrr", "ndcg"]


def ranking_metric(
    metric: Metric, ranked: list[str | None], relevant: set[str], k: int | None
) -> float:
    """`metric` of a ranked list of ids (None: a passage without id) against the relevant set.

    Raises:
        ValueError: `relevant` is empty (every metric divides by it, or by its ideal).
    """
    if not relevant:
        raise ValueError("no relevant ids to compare with")
    top = _first_ranks(ranked[:k] if k is not None else ranked, relevant)
    if metric == "recall":
        return len(top) / len(relevant)
    if metric == "precision":
        slots = k if k is not None else len(ranked)
        return len(top) / slots if slots else 0.0
    if metric == "mrr":
        return 1.0 / min(top.values()) if top else 0.0
    ideal_count = min(len(relevant), k) if k is not None else len(relevant)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, ideal_count + 1))
    return sum(1.0 / math.log2(rank + 1) for rank in top.values()) / ideal


def _first_ranks(ranked: list[str | None], relevant: set[str]) -> dict[str, int]:
    """The 1-based rank at which each relevant id first appears."""
    found: dict[str, int] = {}
    for rank, ident in enumerate(ranked, start=1):
        if ident is not None and ident in relevant and ident not in found:
            found[ident] = rank
    return found


class Retrieval(Grader):
    """Ranking quality of the retrieved passages against the test's `expected_context_ids`."""

    type: Literal["retrieval"]
    metric: Metric = "recall"
    """`recall` (default), `precision`, `mrr` or `ndcg`, each at the cut-off `k`."""
    k: Annotated[int, Field(ge=1)] | None = None
    """Only the first `k` retrieved passages count; default: all of them."""

    def problem_with_test(self, test: TestFacts) -> str | None:
        """A test without `expected_context_ids` has no relevant set to compare with."""
        if test.expected_context_ids:
            return None
        return (
            f"retrieval compares the ids of the passages the target retrieved with the test's "
            f"`expected_context_ids`, and test '{test.test_id}' has none; add "
            "`expected_context_ids: [id, ...]`"
        )

    async def measure(self, ctx: GradingContext) -> Measurement:
        relevant = list(dict.fromkeys(ctx.expected_context_ids))
        if not relevant:
            raise GraderError("retrieval needs the test's `expected_context_ids`")
        passages = ctx.retrieved
        if passages and all(p.id is None for p in passages):
            raise GraderError(
                f"the target retrieved {len(passages)} passages without ids: return them as "
                "{id, text, score} so that they can be compared with `expected_context_ids`"
            )
        ranked = [p.id for p in passages]
        wanted = set(relevant)
        score = ranking_metric(self.metric, ranked, wanted, self.k)
        cut = ranked[: self.k] if self.k is not None else ranked
        ranks = _first_ranks(cut, wanted)
        at = f"@{self.k}" if self.k is not None else ""
        name = f"{self.metric}{at}"
        hits = [f"retrieved '{i}' at rank {ranks[i]}" for i in relevant if i in ranks]
        misses = [f"did not retrieve '{i}'{_within(self.k)}" for i in relevant if i not in ranks]
        return Measurement(
            score=score,
            hits=hits,
            misses=misses,
            reasoning=(
                f"{name} = {score:.3f}: {len(ranks)} of {len(relevant)} expected passages in "
                f"the top {len(cut)} of {len(ranked)} retrieved"
            ),
            details=_details(relevant, ranked, ranks, self.k),
        )


def _within(k: int | None) -> str:
    return f" in the top {k}" if k is not None else ""


def _details(
    relevant: list[str], ranked: list[str | None], ranks: dict[str, int], k: int | None
) -> list[Detail]:
    """One Detail per expected id (where it was found), then one per retrieved passage in the
    top k that is not relevant (or repeats a relevant one)."""
    details: list[Detail] = []
    anywhere = _first_ranks(ranked, set(relevant))
    for ident in relevant:
        if ident in ranks:
            actual, message = f"rank {ranks[ident]}", "retrieved"
        elif ident in anywhere:
            actual, message = f"rank {anywhere[ident]}", f"retrieved below the top {k}"
        else:
            actual, message = "not retrieved", "missing from the retrieved passages"
        details.append(
            detail(
                f"retrieval.expected.{ident}",
                ident in ranks,
                expected=ident,
                actual=actual,
                message=message,
            )
        )
    cut = ranked[:k] if k is not None else ranked
    for rank, got in enumerate(cut, start=1):
        if got is not None and ranks.get(got) == rank:
            continue
        why = "a repeat of a passage ranked higher" if got in ranks else "not an expected id"
        shown = got if got is not None else "(no id)"
        details.append(
            detail(f"retrieval.rank[{rank}]", False, actual=shown, message=f"irrelevant: {why}")
        )
    return details
