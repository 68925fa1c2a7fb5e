"""One retry policy for every model call: a run's target and its judge retry with the same
`RetryPolicy` value, so both cap a server's `Retry-After` the same way."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay import EvalConfig, evaluate
from assay._concurrency import AdaptiveLimiter
from assay.providers import (
    MAX_RETRY_DELAY_S,
    ProviderConfig,
    ProviderStatusError,
    RetryPolicy,
    complete_with_retries,
    open_provider,
)
from assay.providers._scripted import is_judge_request
from assay.runner import RetryPolicy as RunnerRetryPolicy
from assay.testing import FakeOpenAIServer, fail_first
from tests.conftest import write


def test_the_runner_and_the_providers_export_the_same_policy() -> None:
    assert RunnerRetryPolicy is RetryPolicy


def test_a_target_and_its_judge_retry_with_one_policy_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    for variable in ("ASSAY_JUDGE_MODEL", "ASSAY_JUDGE_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)
    waits: list[tuple[int, float | None, float]] = []
    capped = RetryPolicy.delay

    def record(self: RetryPolicy, attempt: int, retry_after_s: float | None, rng: Any) -> float:
        waits.append((id(self), retry_after_s, capped(self, attempt, retry_after_s, rng)))
        return 0.0  # the wait is checked, not slept

    monkeypatch.setattr(RetryPolicy, "delay", record)
    failed: set[bool] = set()

    def first_of_each(body: dict[str, Any]) -> str | None:
        judge = is_judge_request(body)
        if judge in failed:
            return None
        failed.add(judge)
        return "429"

    with FakeOpenAIServer(fault=first_of_each, retry_after_s=3600, judge={"score": 0.9}) as server:
        document = {
            "name": "retries",
            "target": {"type": "openai", "model": "m", "base_url": server.base_url},
            "judge": {"model": "j", "base_url": server.base_url},
            "tests": [
                {"id": "t", "input": "hi", "assertions": [{"type": "llm-grader", "prompt": "ok"}]}
            ],
        }
        path = write(tmp_path / "r.eval.yaml", yaml.safe_dump(document))
        result = evaluate(path, config=EvalConfig(store=False, cache_mode="off"))
    [case] = result.results
    assert case.verdict == "pass" and [g.score for g in case.grader_results] == [0.9]
    assert failed == {False, True}
    assert len(waits) == 2  # one retry of the target, one of the judge
    assert len({policy for policy, _, _ in waits}) == 1, "target and judge used two policies"
    assert [(after, wait) for _, after, wait in waits] == [(3600.0, MAX_RETRY_DELAY_S)] * 2


def send(server: FakeOpenAIServer, policy: RetryPolicy, limiter: AdaptiveLimiter) -> int:
    async def go() -> int:
        provider = open_provider(ProviderConfig(base_url=server.base_url), "openai")
        body: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        try:
            _, sent = await complete_with_retries(
                provider, body, policy=policy, rng=random.Random(0), limiter=limiter
            )
            return sent
        finally:
            await provider.close()

    return asyncio.run(go())


def test_a_429_lowers_the_limit_and_the_request_is_sent_again() -> None:
    limiter = AdaptiveLimiter(8)
    with FakeOpenAIServer(fault=fail_first(1, "429"), retry_after_s=0.01) as server:
        assert send(server, RetryPolicy(max_retries=2), limiter) == 2
        assert server.request_count == 2
    assert limiter.stats().lowest == 4 and limiter.stats().rate_limited == 1


def test_the_last_failure_says_how_many_requests_were_sent() -> None:
    with FakeOpenAIServer(fault=fail_first(5, "503")) as server:
        with pytest.raises(ProviderStatusError) as caught:
            send(server, RetryPolicy(max_retries=2, base_delay_s=0.001), AdaptiveLimiter(4))
        assert server.request_count == 3
    assert (caught.value.status, caught.value.attempts) == (503, 3)
