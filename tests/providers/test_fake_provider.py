"""The `fake` provider as a target's model and as a judge, in suites that run offline."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay import EvalConfig, evaluate
from assay.errors import ConfigError
from assay.judge import JudgeClient, JudgeSpec, PromptTemplate
from assay.providers import ProviderConfig, embed, open_provider
from assay.results import RunResult
from tests.conftest import write

EXAMPLE = Path(__file__).parents[2] / "examples" / "offline" / "offline.eval.yaml"


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No key, no judge override, and no socket may connect anywhere."""
    monkeypatch.chdir(tmp_path)
    for variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ASSAY_JUDGE_MODEL"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.delenv("ASSAY_JUDGE_BASE_URL", raising=False)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"the fake provider opened a connection: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)


def run(path: Path, **config: Any) -> RunResult:
    return evaluate(path, config=EvalConfig(store=False, cache_mode="off", **config))


def test_the_offline_example_runs_a_tool_loop_and_a_judge_without_network() -> None:
    result = run(EXAMPLE)
    cases = {case.case_id: case for case in result.results}
    assert [c.verdict for c in result.results] == ["pass", "pass"]
    refund, order = cases["refund-window"], cases["order-status"]
    assert refund.output == "You can return it within 30 days of delivery."
    assert order.output == "Order 7 was delivered yesterday."
    [call] = order.tool_calls
    assert (call.tool, call.args, call.output) == (
        "lookup_order",
        {"id": 7},
        {"id": 7, "status": "delivered"},
    )
    judged = {
        c.case_id: [g for g in c.grader_results if g.type == "llm-grader"] for c in cases.values()
    }
    assert [g.score for g in judged["refund-window"]] == [0.9]
    assert [g.score for g in judged["order-status"]] == [1.0]
    shown = judged["refund-window"][0]
    assert (shown.reasoning, shown.hits, shown.judge_model) == (
        "States the window.",
        ["30 days"],
        "fake-judge",
    )
    assert result.summary.judge_calls == 2
    assert refund.token_usage is not None and refund.token_usage.total > 0


def suite(tmp_path: Path, target: dict[str, Any], tests: list[dict[str, Any]], **top: Any) -> Path:
    document = {"name": "fake", "target": target, "tests": tests, **top}
    return write(tmp_path / "fake.eval.yaml", yaml.safe_dump(document, sort_keys=False))


def test_the_fake_provider_speaks_anthropic_for_an_anthropic_target_and_judge(
    tmp_path: Path,
) -> None:
    path = suite(
        tmp_path,
        {"type": "anthropic", "provider": "fake", "model": "claude-fake"},
        [
            {
                "id": "t",
                "input": "hello",
                "metadata": {"fake_judge": {"score": 0.8}},
                "assertions": [{"type": "llm-grader", "prompt": "Greets"}],
            }
        ],
        judge={"provider": "fake", "model": "fake-judge"},
    )
    result = run(path)
    [case] = result.results
    assert case.output == "hello"  # no script: the last user message is echoed
    assert [g.score for g in case.grader_results] == [0.8]


def test_a_judge_without_a_script_gets_the_schema_defaults() -> None:
    client = JudgeClient(JudgeSpec(provider="fake", model="j"))

    async def go() -> float:
        from pydantic import BaseModel

        class Verdict(BaseModel):
            score: float
            passed: bool

        try:
            prompt = PromptTemplate("t", "Rate: {{ output }}").render({"output": "x"})
            judgement = await client.ask(prompt, Verdict)
            assert judgement.answer.passed is False
            return judgement.answer.score
        finally:
            await client.close()

    assert asyncio.run(go()) == 0.0


def test_a_malformed_fake_script_is_a_case_error_saying_what_to_write(tmp_path: Path) -> None:
    path = suite(
        tmp_path,
        {"type": "openai", "provider": "fake", "model": "m"},
        [
            {
                "id": "t",
                "input": "hi",
                "metadata": {"fake_replies": "not a list"},
                "assertions": [{"type": "contains", "value": "x"}],
            }
        ],
    )
    [case] = run(path).results
    assert case.verdict == "error" and case.error is not None
    assert case.error.type == "FakeScriptError"
    assert "`metadata.fake_replies` must be a non-empty list of replies" in case.error.message


def test_an_unknown_provider_in_yaml_is_a_located_did_you_mean(tmp_path: Path) -> None:
    path = suite(
        tmp_path,
        {"type": "openai", "provider": "ollma", "model": "m"},
        [{"id": "t", "input": "hi"}],
        judge={"provider": "groc", "model": "j"},
    )
    with pytest.raises(ConfigError) as caught:
        run(path)
    message = str(caught.value)
    assert "fake.eval.yaml:" in message
    assert "unknown provider 'ollma'. Did you mean 'ollama'?" in message
    assert "unknown provider 'groc'. Did you mean 'groq'?" in message


def test_fake_embeddings_are_deterministic_unit_vectors_close_for_shared_words() -> None:
    async def go() -> list[list[float]]:
        provider = open_provider(ProviderConfig(provider="fake"), "openai")
        try:
            texts = ["the parcel arrives tomorrow", "the parcel arrives today", "refund"]
            return (await embed(provider, "any", texts)).vectors
        finally:
            await provider.close()

    first, second, third = asyncio.run(go())
    assert asyncio.run(go())[0] == first

    def cosine(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert abs(cosine(first, first) - 1.0) < 1e-9
    assert cosine(first, second) > cosine(first, third)


def simulate(turns: list[Any], body: dict[str, Any]) -> str:
    async def go() -> str:
        provider = open_provider(ProviderConfig(provider="fake", purpose="simulator"), "openai")
        reply = await provider.complete(body, metadata={"fake_user_turns": turns})
        await provider.close()
        [choice] = reply["choices"]
        return str(choice["message"]["content"])

    return asyncio.run(go())


def test_the_fake_simulator_plays_the_scripted_user_turn_by_turn() -> None:
    turns = ["I want a refund", {"message": "Order 7", "done": False}]
    first = {"messages": [{"role": "user", "content": "start"}]}
    second = {
        "messages": [
            {"role": "user", "content": "start"},
            {"role": "assistant", "content": "I want a refund"},
            {"role": "user", "content": "Which order?"},
        ]
    }
    assert simulate(turns, first) == "I want a refund"
    assert simulate(turns, second) == "Order 7"
    schema = {
        "type": "object",
        "properties": {
            "message": {"type": "string"},
            "done": {"type": "boolean"},
            "reason": {"type": "string"},
        },
    }
    system = f"Play the user. JSON Schema of the reply: {json.dumps(schema)}"
    structured = {"messages": [{"role": "system", "content": system}, *second["messages"][1:]]}
    past_the_end = {"messages": [*structured["messages"], {"role": "assistant", "content": "x"}]}
    assert json.loads(simulate(turns, structured)) == {
        "message": "Order 7",
        "done": False,
        "reason": "",
    }
    assert json.loads(simulate(turns, past_the_end))["done"] is True
