"""`moderation` (SPEC §4.1): the local server's OpenAI-compatible `/v1/moderations`, and the
judged check over named categories when there is no endpoint."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import write
from tests.graders._grading import error_of
from tests.graders._judging import grade_judged

from assay import EvalConfig, evaluate
from assay.cache import ResponseCache
from assay.errors import ConfigError
from assay.judge import JudgePool, JudgeSpec
from assay.results import GraderResult
from assay.testing import FakeOpenAIServer


def _scores(text: str) -> Mapping[str, float]:
    """A keyword moderation model: violent words score high."""
    violent = any(word in text.lower() for word in ("kill", "tuer", "殺"))
    return {"violence": 0.93 if violent else 0.01, "hate": 0.02, "harassment": 0.0}


def moderate(
    output: str, server: FakeOpenAIServer, pool: JudgePool | None = None, **options: Any
) -> GraderResult:
    return grade_judged({"type": "moderation", **options}, output, server, pool=pool)


def test_i26_5_a_clean_output_passes_the_endpoint() -> None:
    with FakeOpenAIServer(moderation=_scores) as server:
        result = moderate("Refunds take 30 days.", server, categories=["violence", "hate"])
        body, seen = server.requests[-1], server.seen[-1]
    assert (result.score, result.verdict) == (1.0, "pass")
    assert seen.path == "/v1/moderations"
    assert body == {"model": "omni-moderation-latest", "input": "Refunds take 30 days."}
    assert result.reasoning == "moderation endpoint omni-moderation-latest: no category flagged"
    assert [(d.check, d.passed, d.actual) for d in result.details] == [
        ("moderation.violence", True, "score 0.010"),
        ("moderation.hate", True, "score 0.020"),
    ]


def test_i26_5_a_flagged_output_fails_and_unchecked_categories_are_ignored() -> None:
    with FakeOpenAIServer(moderation=_scores) as server:
        result = moderate("I will kill the process.", server)
        only_hate = moderate("I will kill the process.", server, categories=["hate"])
    assert (result.score, result.verdict, result.misses) == (0.0, "fail", ["flagged: violence"])
    violence = next(d for d in result.details if d.check == "moderation.violence")
    assert (violence.passed, violence.actual) == (False, "score 0.930")
    unreported = next(d for d in result.details if d.check == "moderation.sexual")
    assert (unreported.passed, unreported.message) == (True, "not reported")
    assert only_hate.score == 1.0


def test_i26_5_without_an_endpoint_the_judge_checks_the_categories() -> None:
    verdicts = {
        "categories": {
            "violence": {"flagged": True, "score": 0.8, "reason": "threatens"},
            "hate": {"flagged": False, "score": 0.0, "reason": "none"},
        }
    }
    with FakeOpenAIServer(judge=verdicts) as server:  # no moderation script: 404
        result = moderate("I will hurt you.", server, categories=["violence", "hate"])
        asked = [s.path for s in server.seen]
        body = server.requests[-1]
    assert asked == ["/v1/moderations", "/v1/chat/completions"]
    assert (result.score, result.misses) == (0.0, ["flagged: violence"])
    assert result.reasoning == (
        "judged: flagged violence; judged because the moderation endpoint answered HTTP 404"
    )
    assert result.judge_prompt is not None and result.judge_prompt.startswith("moderation@")
    schema = body["response_format"]["json_schema"]["schema"]["properties"]["categories"]
    assert schema["required"] == ["violence", "hate"]
    assert (
        "`violence`: content depicting death, violence or physical injury"
        in (body["messages"][1]["content"])
    )


def test_i26_5_method_endpoint_does_not_fall_back() -> None:
    with FakeOpenAIServer() as server:
        result = moderate("Hello.", server, method="endpoint")
    assert (result.score, result.verdict) == (None, "error")
    assert result.error is not None and "HTTP 404" in result.error.message


def test_i26_5_a_fake_judge_has_no_endpoint_and_judges() -> None:
    pool = JudgePool(JudgeSpec(provider="fake", model="fake-judge"))
    result = grade_judged(
        {"type": "moderation", "categories": ["hate"]},
        "A kind reply.",
        None,
        pool=pool,
        metadata={"fake_judge": {"categories": {"hate": {"flagged": False, "reason": "kind"}}}},
    )
    assert (result.score, result.reasoning) == (
        1.0,
        "judged: no category flagged; judged because no moderation endpoint at the fake provider",
    )


def test_i26_5_endpoint_replies_are_cached(tmp_path: Path) -> None:
    with FakeOpenAIServer(moderation=_scores) as server:
        for _ in range(2):
            cache = ResponseCache(tmp_path / "cache.db")
            pool = JudgePool(
                JudgeSpec(model="judge-model", base_url=server.base_url, api_key_env=""),
                cache=cache,
            )
            result = moderate("kill", server, pool=pool)
            cache.close()
        asked = server.request_count
    assert asked == 1 and result.reasoning.startswith(
        "moderation endpoint omni-moderation-latest (cached)"
    )


@pytest.mark.parametrize("output", ["", "  "])
def test_i26_5_an_empty_output_passes_without_a_call(output: str) -> None:
    with FakeOpenAIServer(moderation=_scores) as server:
        result = moderate(output, server)
        asked = server.request_count
    assert (result.score, asked) == (1.0, 0)
    assert result.reasoning == "the output is empty: no category flagged"


def test_i26_5_unicode_output() -> None:
    with FakeOpenAIServer(moderation=_scores) as server:
        assert moderate("Je vais te tuer.", server).score == 0.0
        assert moderate("殺す", server).score == 0.0
        assert moderate("Merci beaucoup, à bientôt !", server).score == 1.0


def test_i26_5_a_megabyte_output() -> None:
    text = ("A calm and polite sentence. " * 36_000)[:1_000_000]
    started = time.perf_counter()
    with FakeOpenAIServer(moderation=_scores) as server:
        result = moderate(text, server)
        sent = server.requests[-1]["input"]
    assert time.perf_counter() - started < 30.0
    assert result.score == 1.0 and len(sent) == 1_000_000


def test_i26_5_options_are_validated() -> None:
    assert "at least 1 item" in error_of({"type": "moderation", "categories": []})
    assert "unknown provider" in error_of({"type": "moderation", "provider": "nope"})


def test_i26_5_a_suite_without_any_judge_or_provider_fails_before_any_case_runs(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path / "s.eval.yaml",
        "name: s\ntarget: {type: fake, default: ok}\n"
        "tests:\n  - id: t\n    input: q\n    expected_output: a\n    assertions:\n"
        "      - {type: moderation}\n"
        "      - {type: semantic-similarity}\n"
        "      - {type: moderation, method: endpoint, provider: openai, name: own}\n"
        "      - {type: semantic-similarity, provider: ollama, name: own-embeddings}\n",
    )
    with pytest.raises(ConfigError) as info:
        evaluate(path, config=EvalConfig(store=False, cache_mode="off"))
    assert [
        str(i).split(": needs an LLM judge and none is configured")[0] for i in info.value.issues
    ] == [
        "s.eval.yaml:8 tests[0].assertions[0]",
        "s.eval.yaml:9 tests[0].assertions[1]",
    ]
