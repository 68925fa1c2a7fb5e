"""`semantic-similarity` (SPEC §4.1): the cosine of embeddings from the local OpenAI-protocol
server's `/v1/embeddings`, through the provider layer, cached like any model call."""

from __future__ import annotations

import asyncio
import math
import time
from pathlib import Path
from typing import Any

import pytest
from tests.graders._grading import SPEC, error_of, load_errors
from tests.graders._judging import judge_pool

from assay.cache import CacheMode, ResponseCache
from assay.graders import GradingContext
from assay.graders.semantic import cosine
from assay.judge import JudgePool, JudgeSpec
from assay.providers import fake_embedding
from assay.results import GraderResult
from assay.testing import FakeOpenAIServer, fail_first

REFERENCE = "Refunds are accepted within 30 days of purchase."


def _grade(
    spec: dict[str, Any], output: str, judges: JudgePool | None, expected: Any = REFERENCE
) -> GraderResult:
    grader = SPEC.validate_python({"type": "semantic-similarity", **spec})

    async def run() -> GraderResult:
        ctx = GradingContext(
            case_id="c", output=output, threshold=0.8, expected_output=expected, judges=judges
        )
        try:
            result: GraderResult = await grader.grade(ctx)
            return result
        finally:
            if judges is not None:
                await judges.close()

    return asyncio.run(run())


def _expected(a: str, b: str) -> float:
    return max(0.0, cosine(fake_embedding(a), fake_embedding(b)))


def test_i26_4_a_close_paraphrase_passes_through_the_servers_embeddings() -> None:
    output = "Refunds are accepted within 30 days of the purchase."
    with FakeOpenAIServer() as server:
        result = _grade({}, output, judge_pool(server))
        body, seen = server.requests[-1], server.seen[-1]
    assert result.score == pytest.approx(_expected(output, REFERENCE))
    assert result.score is not None and result.score > 0.9 and result.verdict == "pass"
    assert seen.path == "/v1/embeddings"
    assert body == {"model": "text-embedding-3-small", "input": [output, REFERENCE]}
    assert result.judge_model == "text-embedding-3-small"
    assert result.token_usage is not None and result.token_usage.input == 17  # 9 + 8 words
    assert result.details[0].check == "cosine" and result.details[0].passed


def test_i26_4_an_unrelated_text_fails_with_min_score() -> None:
    output = "The weather in Lisbon is sunny today."
    with FakeOpenAIServer() as server:
        result = _grade({"min_score": 0.5, "value": REFERENCE}, output, judge_pool(server), None)
    assert result.score == pytest.approx(_expected(output, REFERENCE))
    assert result.verdict == "fail" and result.min_score == 0.5
    assert result.misses == [f"not similar enough (cosine {result.score:.3f})"]


def test_i26_4_vectors_are_cached_like_any_model_call(tmp_path: Path) -> None:
    output = "Refunds within 30 days."
    scores = []
    with FakeOpenAIServer() as server:
        for _ in range(2):
            cache = ResponseCache(tmp_path / "cache.db")
            pool = JudgePool(
                JudgeSpec(model="judge-model", base_url=server.base_url, api_key_env=""),
                cache=cache,
            )
            result = _grade({}, output, pool)
            cache.close()
            scores.append((result.score, result.reasoning.endswith("(cached)")))
        asked = server.request_count
        replay = ResponseCache(tmp_path / "cache.db", CacheMode.REPLAY)
        pool = JudgePool(
            JudgeSpec(model="judge-model", base_url=server.base_url, api_key_env=""), cache=replay
        )
        assert _grade({}, output, pool).score == scores[0][0]
        replay.close()
        assert server.request_count == asked == 1
    assert scores[0][0] == scores[1][0] and [cached for _, cached in scores] == [False, True]


def test_i26_4_a_failing_request_is_retried() -> None:
    with FakeOpenAIServer(fault=fail_first(1, "500")) as server:
        result = _grade({}, REFERENCE, judge_pool(server))
        asked = server.request_count
    assert (result.score, asked) == (pytest.approx(1.0), 2)


def test_i26_4_the_grader_may_name_its_own_provider_and_model() -> None:
    with FakeOpenAIServer() as server:
        spec = {"provider": "vllm", "base_url": server.base_url, "model": "bge-small"}
        result = _grade(spec, REFERENCE, JudgePool())
        body = server.requests[-1]
    assert result.score == pytest.approx(1.0) and body["model"] == "bge-small"


def test_i26_4_without_a_provider_it_is_an_error_not_a_zero() -> None:
    result = _grade({}, REFERENCE, JudgePool())
    assert (result.score, result.verdict) == (None, "error")
    assert (
        result.error is not None and "semantic-similarity needs a provider" in result.error.message
    )


@pytest.mark.parametrize(("output", "score"), [("", 0.0), ("   ", 0.0)])
def test_i26_4_an_empty_output_scores_zero_without_a_call(output: str, score: float) -> None:
    with FakeOpenAIServer() as server:
        result = _grade({}, output, judge_pool(server))
        asked = server.request_count
    assert (result.score, result.verdict, asked) == (score, "fail", 0)
    assert result.misses == ["the output is empty"]


def test_i26_4_unicode_texts() -> None:
    output, reference = "返金は30日以内です。", "返金は30日以内です。"
    with FakeOpenAIServer() as server:
        result = _grade({"value": reference}, output, judge_pool(server), None)
    assert result.score == pytest.approx(1.0)
    assert math.isclose(_expected("Ünïcode café", "ünïcode CAFÉ"), 1.0)


def test_i26_4_a_megabyte_output() -> None:
    output = ("Refunds are accepted within 30 days. " * 28_000)[:1_000_000]
    started = time.perf_counter()
    with FakeOpenAIServer() as server:
        result = _grade({}, output, judge_pool(server))
    assert time.perf_counter() - started < 30.0
    assert result.score == pytest.approx(_expected(output, REFERENCE))


def test_i26_4_options_and_a_test_without_a_reference(tmp_path: Path) -> None:
    assert "unknown provider" in error_of({"type": "semantic-similarity", "provider": "nope"})
    errors = load_errors(
        tmp_path, "tests:\n  - id: t\n    input: q\n    assertions: [{type: semantic-similarity}]\n"
    )
    assert len(errors) == 1 and "test 't' has neither" in errors[0]
