"""`assay.api.judge_pairwise` and `pairwise_judge`: the judge calls of pairwise judging against
the local OpenAI-protocol server, and which judge is asked."""

from __future__ import annotations

import re
import threading
from typing import Any

import pytest

from assay.api import judge_pairwise, pairwise_judge, run_judge_concurrency
from assay.errors import UsageError
from assay.judge import JudgeSpec
from assay.results import JSON, CaseResult, RunResult
from assay.testing import FakeOpenAIServer
from tests.comparison._runs import run


def _case(case_id: str, output: str | None) -> CaseResult:
    return CaseResult(
        case_id=case_id, verdict="pass", score=1.0, threshold=0.5, output=output, input=case_id
    )


def _runs(n: int) -> tuple[RunResult, RunResult]:
    base = run("base", *(_case(f"c{i}", f"old {i}") for i in range(n)))
    head = run("head", *(_case(f"c{i}", f"new {i}") for i in range(n)))
    return base, head


def _output_a(body: dict[str, Any]) -> str:
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    match = re.search(r"<<<OUTPUT_A (\w+)>>>\n(.*?)\n<<<END OUTPUT_A \1>>>", user, re.S)
    assert match is not None
    return match.group(2)


def test_i28_3_judge_calls_run_concurrently_under_the_limit() -> None:
    lock = threading.Lock()
    state = {"in_flight": 0, "peak": 0}

    def arrived(body: dict[str, JSON]) -> None:  # consulted as each request arrives
        with lock:
            state["in_flight"] += 1
            state["peak"] = max(state["peak"], state["in_flight"])

    def judge(body: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
        with lock:  # called after the latency, as the reply is written
            state["in_flight"] -= 1
        return {"preferred": "A" if _output_a(body).startswith("new") else "B"}

    base, head = _runs(8)
    with FakeOpenAIServer(judge=judge, fault=arrived, latency_ms=150) as server:
        spec = JudgeSpec(model="j", base_url=server.base_url)
        result = judge_pairwise(None, base, head, spec, concurrency=3)
        requests = len(server.requests)
    assert requests == 16
    assert state["peak"] == 3
    assert (result.judged, result.wins, result.win_rate) == (8, 8, 1.0)


def test_i28_3_a_failed_judge_call_is_an_error_left_out_of_the_rates() -> None:
    def judge(body: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
        shown = _output_a(body)
        if shown.endswith(" 1"):  # case c1: never a valid answer
            return {"preferred": "neither"}
        return {"preferred": "A" if shown.startswith("old") else "B", "reasoning": "older"}

    base, head = _runs(3)
    head.results.append(_case("only-head", "new"))  # not paired: no base result
    head.results.append(_case("no-output", None))  # not paired: no output
    with FakeOpenAIServer(judge=judge) as server:
        spec = JudgeSpec(model="j", base_url=server.base_url)
        result = judge_pairwise(None, base, head, spec)
    assert (result.paired_cases, result.judged, result.errors) == (3, 2, 1)
    assert (result.losses, result.win_rate, result.inconsistency_rate) == (2, 0.0, 0.0)
    failed = result.cases[1]
    assert (failed.case_id, failed.outcome, failed.consistent) == ("c1", None, None)
    assert failed.error is not None and "no valid reply after 3 attempts" in failed.error
    assert result.judge_calls == 4  # answers obtained; c1's two calls gave none
    assert result.cases[0].reasoning == ["older", "older"]


RECORDED: JSON = {"provider": "openai", "model": "run-judge", "temperature": 0.2}


def test_i28_3_the_judge_is_the_runs_over_the_project_under_env_and_flags() -> None:
    env = {"OPENAI_API_KEY": "k"}
    project = JudgeSpec(model="project-judge", max_tokens=50)
    spec = pairwise_judge(RECORDED, project=project, environ=env)
    assert (spec.model, spec.temperature, spec.max_tokens) == ("run-judge", 0.2, 50)
    spec = pairwise_judge(RECORDED, project=project, environ={**env, "ASSAY_JUDGE_MODEL": "e"})
    assert spec.model == "e"
    spec = pairwise_judge(
        RECORDED, environ={**env, "ASSAY_JUDGE_MODEL": "e"}, judge_model="flag-judge"
    )
    assert spec.model == "flag-judge"
    assert pairwise_judge(None, project=project, environ=env).model == "project-judge"
    assert pairwise_judge({"model": 3}, project=project, environ=env).model == "project-judge"


def test_i28_3_a_stored_runs_endpoint_and_key_variable_are_never_reused() -> None:
    recorded: JSON = {"model": "m", "base_url": "http://evil.example/v1", "api_key_env": "AWS_KEY"}
    with pytest.raises(UsageError, match=r"pass --judge-base-url http://evil\.example/v1 if"):
        pairwise_judge(recorded, environ={"AWS_KEY": "secret"}, run_id="r1")
    spec = pairwise_judge(
        recorded, judge_base_url="http://evil.example/v1", environ={}, run_id="r1"
    )
    assert (spec.model, spec.base_url, spec.resolved_api_key_env) == (
        "m",
        "http://evil.example/v1",
        "OPENAI_API_KEY",  # the preset's, not the stored AWS_KEY
    )
    # Another judge named now: the stored endpoint does not matter.
    assert pairwise_judge(recorded, judge_model="x", environ={"OPENAI_API_KEY": "k"}).model == "x"


def test_i28_3_no_judge_or_no_key_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="--pairwise needs a judge and none is configured"):
        pairwise_judge(None, environ={})
    with pytest.raises(UsageError, match="reads its API key from OPENAI_API_KEY, which is not"):
        pairwise_judge(RECORDED, environ={})


def test_i28_3_the_default_concurrency_is_the_head_runs() -> None:
    suite: JSON = {"execution": {"judge_concurrency": 5}}
    assert run_judge_concurrency({"options": {"judge_concurrency": 3}, "suite": suite}) == 3
    assert run_judge_concurrency({"options": {"judge_concurrency": None}, "suite": suite}) == 5
    for stored in (10**9, 0, True, "4"):  # a stored snapshot is data: nonsense is ignored
        assert run_judge_concurrency({"options": {"judge_concurrency": stored}}) == 8
    assert run_judge_concurrency({}) == 8
