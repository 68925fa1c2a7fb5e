"""Graders flag their own judge fallbacks (`GraderResult.fallback`), which the run summary counts
as `judge_fallback_count`: deep factuality measured shallow, judged tone measured by the
heuristics (issue 21 item 10). Expected outcomes are flagged in tests/runner."""

from __future__ import annotations

from tests.graders import test_factuality_deep as factuality
from tests.graders import test_tone_judged as tone

from assay.testing import FakeOpenAIServer


def test_i21_10_a_deep_factuality_fallback_is_flagged_on_its_result() -> None:
    assert factuality.grade(None).fallback == "deep factuality → shallow: no judge configured"
    with FakeOpenAIServer(judge={"claims": factuality.CLAIMS}, faults={"500": 1.0}) as server:
        failed = factuality.grade(server)
    assert failed.fallback is not None
    assert failed.fallback.startswith("deep factuality → shallow: judge failed: ")
    assert "HTTP 500" in failed.fallback
    with FakeOpenAIServer(judge={"claims": factuality.CLAIMS}) as server:
        assert factuality.grade(server).fallback is None


def test_i21_10_a_judged_tone_fallback_is_flagged_on_its_result() -> None:
    # `auto` without a judge is the documented choice of the heuristics, not a fallback.
    assert tone.grade(None).fallback is None
    with FakeOpenAIServer(judge={"dimensions": tone.VERDICTS}, faults={"500": 1.0}) as server:
        failed = tone.grade(server)
    assert failed.fallback is not None
    assert failed.fallback.startswith("judged tone → heuristic: judge failed: ")
    assert "HTTP 500" in failed.fallback
    with FakeOpenAIServer(judge={"dimensions": tone.VERDICTS}) as server:
        assert tone.grade(server).fallback is None
