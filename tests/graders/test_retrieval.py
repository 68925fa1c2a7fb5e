"""`retrieval` (SPEC §4.1): ranking metrics of the retrieved passage ids against the test's
`expected_context_ids`, checked against values computed by hand."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import pytest
from tests.graders._grading import error_of, grade, load_errors

from assay.graders.retrieval import ranking_metric
from assay.results import Detail, GraderResult, RetrievedPassage, TargetOutput

RANKED = ["d3", "d1", "d7", "d2", "d9"]
RELEVANT = ("d1", "d2", "d5")
# Relevant ids are retrieved at ranks 2 (d1) and 4 (d2); d5 is never retrieved.
# nDCG: DCG = 1/log2(3) + 1/log2(5) = 0.63093 + 0.43068 = 1.06161; the ideal DCG puts the three
# relevant ids first: 1 + 0.63093 + 0.5 = 2.13093.


def retrieval(
    ranked: list[str | None], expected: tuple[str, ...] = RELEVANT, **options: Any
) -> GraderResult:
    passages = [RetrievedPassage(id=i, text=f"passage {i}") for i in ranked]
    return grade(
        {"type": "retrieval", **options},
        "answer",
        target_output=TargetOutput(output="answer", context=passages),
        expected_context_ids=expected,
    )


@pytest.mark.parametrize(
    ("metric", "k", "expected"),
    [
        ("recall", None, 2 / 3),  # d1, d2 of d1, d2, d5
        ("recall", 3, 1 / 3),  # only d1 in the top 3
        ("precision", None, 2 / 5),  # 2 relevant of 5 retrieved
        ("precision", 3, 1 / 3),
        ("precision", 10, 2 / 10),  # fewer than k retrieved: still divided by k
        ("mrr", None, 1 / 2),  # first relevant at rank 2
        ("mrr", 1, 0.0),
        ("ndcg", None, 0.498189),  # 1.06161 / 2.13093
        ("ndcg", 3, 0.296082),  # 0.63093 / 2.13093
        ("ndcg", 2, 0.386853),  # 0.63093 / (1 + 0.63093): only 2 can be ideal in the top 2
    ],
)
def test_i26_3_metrics_match_hand_computed_values(
    metric: str, k: int | None, expected: float
) -> None:
    assert ranking_metric(metric, list(RANKED), set(RELEVANT), k) == pytest.approx(  # type: ignore[arg-type]
        expected, abs=1e-6
    )
    options = {"metric": metric} | ({"k": k} if k is not None else {})
    assert retrieval(list(RANKED), **options).score == pytest.approx(expected, abs=1e-6)


def test_i26_3_a_perfect_ranking_passes() -> None:
    for metric in ("recall", "precision", "mrr", "ndcg"):
        result = retrieval(["d1", "d2", "d5"], metric=metric)
        assert (result.score, result.verdict) == (1.0, "pass"), metric


def test_i26_3_a_failing_ranking_names_what_is_missing_and_irrelevant() -> None:
    result = retrieval(list(RANKED), metric="recall", k=3)
    assert result.verdict == "fail"
    assert result.reasoning == (
        "recall@3 = 0.333: 1 of 3 expected passages in the top 3 of 5 retrieved"
    )
    assert result.hits == ["retrieved 'd1' at rank 2"]
    assert result.misses == [
        "did not retrieve 'd2' in the top 3",
        "did not retrieve 'd5' in the top 3",
    ]
    assert result.details == [
        Detail(check="retrieval.expected.d1", passed=True, expected="d1", actual="rank 2",
               message="retrieved"),
        Detail(check="retrieval.expected.d2", passed=False, expected="d2", actual="rank 4",
               message="retrieved below the top 3"),
        Detail(check="retrieval.expected.d5", passed=False, expected="d5",
               actual="not retrieved", message="missing from the retrieved passages"),
        Detail(check="retrieval.rank[1]", passed=False, actual="d3",
               message="irrelevant: not an expected id"),
        Detail(check="retrieval.rank[3]", passed=False, actual="d7",
               message="irrelevant: not an expected id"),
    ]  # fmt: skip


def test_i26_3_a_repeated_id_counts_once() -> None:
    result = retrieval(["d1", "d1", "d2"], expected=("d1", "d2"), metric="precision")
    assert result.score == pytest.approx(2 / 3)
    assert result.details[-1].message == "irrelevant: a repeat of a passage ranked higher"


def test_i26_3_nothing_retrieved_scores_zero() -> None:
    for metric in ("recall", "precision", "mrr", "ndcg"):
        result = retrieval([], metric=metric)
        assert (result.score, result.verdict) == (0.0, "fail"), metric


def test_i26_3_passages_without_ids_are_an_error_not_a_zero() -> None:
    result = retrieval([None, None])
    assert (result.score, result.verdict) == (None, "error")
    assert result.error is not None and "without ids" in result.error.message


def test_i26_3_unicode_ids() -> None:
    result = retrieval(["文書-1", "dokument-ä"], expected=("dokument-ä",), metric="mrr")
    assert result.score == 0.5
    assert result.hits == ["retrieved 'dokument-ä' at rank 2"]


def test_i26_3_a_huge_ranking() -> None:
    ranked = [f"doc-{i}" for i in range(100_000)]  # ~1 MB of ids
    expected = ("doc-0", "doc-99999", "missing")
    started = time.perf_counter()
    result = retrieval(ranked, expected=expected, metric="ndcg")
    assert time.perf_counter() - started < 10.0
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    dcg = 1 + 1 / math.log2(100_001)
    assert result.score == pytest.approx(dcg / ideal)
    assert sum(not d.passed for d in result.details) == 11  # 10 kept and "+ N more"


def test_i26_3_options_and_a_test_without_expected_ids_are_config_errors(tmp_path: Path) -> None:
    assert "greater than or equal to 1" in error_of({"type": "retrieval", "k": 0})
    assert "Input should be" in error_of({"type": "retrieval", "metric": "map"})
    errors = load_errors(
        tmp_path, "tests:\n  - id: t\n    input: q\n    assertions: [{type: retrieval}]\n"
    )
    assert len(errors) == 1
    assert "test 't' has none; add `expected_context_ids: [id, ...]`" in errors[0]
