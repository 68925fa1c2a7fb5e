"""The fake model API speaks the protocols exactly and injects each fault observably."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import aiohttp
import pytest

from assay.testing import FakeOpenAIServer, fail_first, last_user_text, tool_outputs

CHAT = {"model": "fake-model", "messages": [{"role": "user", "content": "hello there"}]}


def post(
    url: str, body: Any, *, headers: dict[str, str] | None = None, timeout: float = 5.0
) -> Any:
    """POST with a raw aiohttp client; returns (status, headers, text)."""

    async def go() -> tuple[int, dict[str, str], str]:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session,
            session.post(url, json=body, headers=headers) as response,
        ):
            return response.status, dict(response.headers), await response.text()

    return asyncio.run(go())


def get(url: str) -> Any:
    async def go() -> Any:
        async with aiohttp.ClientSession() as session, session.get(url) as response:
            return await response.json()

    return asyncio.run(go())


def always(kind: str) -> Callable[[dict[str, Any]], str]:
    return lambda body: kind


def test_chat_completion_has_the_openai_shape_and_echoes_by_default() -> None:
    with FakeOpenAIServer() as server:
        assert server.base_url.startswith("http://127.0.0.1:")
        assert server.base_url.endswith("/v1")
        status, _, text = post(f"{server.base_url}/chat/completions", CHAT)
    reply = json.loads(text)
    assert status == 200
    assert isinstance(reply.pop("created"), int)
    assert reply == {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "hello there", "refusal": None},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 2, "completion_tokens": 2, "total_tokens": 4},
    }


def test_a_mapping_script_answers_listed_prompts_and_echoes_the_rest() -> None:
    with FakeOpenAIServer({"hello there": "general kenobi"}) as server:
        url = f"{server.base_url}/chat/completions"
        first = json.loads(post(url, CHAT)[2])
        other = {"model": "m", "messages": [{"role": "user", "content": "unlisted"}]}
        second = json.loads(post(url, other)[2])
    assert first["choices"][0]["message"]["content"] == "general kenobi"
    assert second["choices"][0]["message"]["content"] == "unlisted"
    assert second["model"] == "m"


def test_a_reply_dict_makes_the_model_call_tools() -> None:
    reply = {
        "content": None,
        "tool_calls": [
            {"name": "get_weather", "arguments": {"city": "Paris"}},
            {"name": "raw", "arguments": "{not json"},
        ],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3},
    }
    with FakeOpenAIServer(lambda body: reply) as server:
        answer = json.loads(post(f"{server.base_url}/chat/completions", CHAT)[2])
    choice = answer["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["tool_calls"] == [
        {
            "id": "call_1_0",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        },
        {
            "id": "call_1_1",
            "type": "function",
            "function": {"name": "raw", "arguments": "{not json"},
        },
    ]
    assert answer["usage"] == {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}


def test_a_failing_script_becomes_a_500_that_says_why() -> None:
    def broken(body: dict[str, Any]) -> str:
        raise KeyError("oops")

    with FakeOpenAIServer(broken) as server:
        status, _, text = post(f"{server.base_url}/chat/completions", CHAT)
        _, _, anthropic = post(f"{server.base_url}/messages", {**CHAT, "max_tokens": 5})
    assert status == 500
    assert json.loads(text)["error"]["message"] == "reply script failed: KeyError: 'oops'"
    assert json.loads(anthropic)["error"] == {
        "type": "api_error",
        "message": "reply script failed: KeyError: 'oops'",
    }


def test_a_fault_script_naming_an_unknown_kind_becomes_a_500_that_says_why() -> None:
    with FakeOpenAIServer(fault=always("slow")) as server:
        status, _, text = post(f"{server.base_url}/chat/completions", CHAT)
    assert status == 500
    assert json.loads(text)["error"]["message"].startswith(
        "fault script failed: ValueError: unknown fault kind 'slow'"
    )


def test_invalid_requests_get_a_400_in_each_protocols_error_shape() -> None:
    with FakeOpenAIServer() as server:
        chat = post(f"{server.base_url}/chat/completions", {"model": "m", "messages": []})
        messages = post(f"{server.base_url}/messages", CHAT)
    assert chat[0] == 400
    assert json.loads(chat[2]) == {
        "error": {
            "message": "messages: a non-empty list is required",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    }
    assert messages[0] == 400
    assert json.loads(messages[2]) == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "max_tokens: an integer is required"},
    }


def test_anthropic_messages_have_content_blocks_usage_and_stop_reason() -> None:
    reply = {"content": "Let me check.", "tool_calls": [{"name": "lookup", "arguments": {"q": 1}}]}
    body = {
        "model": "claude-x",
        "max_tokens": 64,
        "system": "be brief",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "find it"}]}],
    }
    with FakeOpenAIServer(lambda b: reply if last_user_text(b) == "find it" else "?") as server:
        status, _, text = post(f"{server.url}/v1/messages", body)
    assert status == 200
    assert json.loads(text) == {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_1_0", "name": "lookup", "input": {"q": 1}},
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 4, "output_tokens": 5},
    }


def test_models_are_listed() -> None:
    with FakeOpenAIServer(models=["a", "b"]) as server:
        listing = get(f"{server.base_url}/models")
    assert listing["object"] == "list"
    assert [m["id"] for m in listing["data"]] == ["a", "b"]


def test_a_429_carries_retry_after() -> None:
    with FakeOpenAIServer(fault=always("429"), retry_after_s=0.25) as server:
        status, headers, text = post(f"{server.base_url}/chat/completions", CHAT)
        assert server.fault_counts == {"429": 1}
    assert status == 429
    assert headers["Retry-After"] == "0.25"
    assert json.loads(text)["error"]["type"] == "rate_limit_error"


def test_a_500_is_a_server_error() -> None:
    with FakeOpenAIServer(fault=always("500")) as server:
        status, _, text = post(f"{server.base_url}/chat/completions", CHAT)
    assert status == 500
    assert json.loads(text)["error"] == {
        "message": "injected fault: HTTP 500",
        "type": "server_error",
        "param": None,
        "code": None,
    }


def test_malformed_is_a_200_whose_body_is_not_json() -> None:
    with FakeOpenAIServer(fault=always("malformed")) as server:
        status, headers, text = post(f"{server.base_url}/chat/completions", CHAT)
    assert status == 200
    assert headers["Content-Type"].startswith("application/json")
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)


def test_drop_closes_the_connection_without_a_response() -> None:
    with FakeOpenAIServer(fault=always("drop")) as server:
        with pytest.raises(aiohttp.ServerDisconnectedError):
            post(f"{server.base_url}/chat/completions", CHAT)
        assert server.fault_counts == {"drop": 1}


def test_timeout_outlasts_the_client_and_does_not_hold_up_shutdown() -> None:
    server = FakeOpenAIServer(fault=always("timeout"), hang_s=60)
    with server, pytest.raises(TimeoutError):
        post(f"{server.base_url}/chat/completions", CHAT, timeout=0.2)
    started = time.perf_counter()
    server.stop()
    assert time.perf_counter() - started < 2.0


def test_a_timeout_fault_answers_after_hang_s() -> None:
    with FakeOpenAIServer(fault=always("timeout"), hang_s=0.05) as server:
        status, _, text = post(f"{server.base_url}/chat/completions", CHAT)
    assert status == 200
    assert json.loads(text)["choices"][0]["message"]["content"] == "hello there"


def test_any_http_status_can_be_injected() -> None:
    with FakeOpenAIServer(fault=always("503")) as server:
        assert post(f"{server.base_url}/chat/completions", CHAT)[0] == 503
        assert post(f"{server.url}/v1/messages", {**CHAT, "max_tokens": 1})[0] == 503


def test_fault_rates_are_drawn_from_a_seeded_rng() -> None:
    def faults(seed: int) -> dict[str, int]:
        rates = {"500": 0.25, "429": 0.25}
        with FakeOpenAIServer(faults=rates, seed=seed) as server:
            for _ in range(200):
                post(f"{server.base_url}/chat/completions", CHAT)
            return server.fault_counts

    first, again = faults(7), faults(7)
    assert first == again
    assert 30 <= first["500"] <= 70
    assert 30 <= first["429"] <= 70


def test_fail_first_fails_a_prompt_a_given_number_of_times() -> None:
    other = {"model": "m", "messages": [{"role": "user", "content": "other"}]}
    script = fail_first(2, "500", prompt="hello there")
    with FakeOpenAIServer(fault=script) as server:
        url = f"{server.base_url}/chat/completions"
        statuses = [post(url, CHAT)[0], post(url, other)[0], post(url, CHAT)[0], post(url, CHAT)[0]]
    assert statuses == [500, 200, 500, 200]


def test_counters_record_requests_up_to_the_bound() -> None:
    with FakeOpenAIServer(fault=fail_first(1, "drop"), max_recorded=2) as server:
        url = f"{server.base_url}/chat/completions"
        with pytest.raises(aiohttp.ServerDisconnectedError):
            post(url, CHAT)
        for text in ("a", "b"):
            post(url, {"model": "m", "messages": [{"role": "user", "content": text}]})
        assert server.request_count == 3
        assert server.fault_counts == {"drop": 1}
        assert [last_user_text(r) for r in server.requests] == ["a", "b"]
        server.reset_counters()
        assert (server.request_count, server.fault_counts, server.requests) == (0, {}, [])


def test_an_api_key_is_enforced_when_configured() -> None:
    with FakeOpenAIServer(api_key="sekret") as server:
        url = f"{server.base_url}/chat/completions"
        assert post(url, CHAT)[0] == 401
        assert post(url, CHAT, headers={"Authorization": "Bearer sekret"})[0] == 200
        assert post(f"{server.url}/v1/messages", CHAT, headers={"x-api-key": "nope"})[0] == 401


def test_unknown_fault_kinds_and_impossible_rates_are_rejected() -> None:
    with pytest.raises(ValueError, match="unknown fault kind 'slow'"):
        FakeOpenAIServer(faults={"slow": 0.1})
    with pytest.raises(ValueError, match="add up to more than 1"):
        FakeOpenAIServer(faults={"500": 0.6, "429": 0.6})
    with pytest.raises(ValueError, match="unknown fault kind '200'"):
        fail_first(1, "200")


def test_tool_outputs_are_read_from_both_protocols() -> None:
    openai_body = {
        "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": None, "tool_calls": []},
            {"role": "tool", "tool_call_id": "1", "content": "sunny"},
            {"role": "tool", "tool_call_id": "2", "content": "warm"},
        ]
    }
    anthropic_body = {
        "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "1"}]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "1", "content": "sunny"},
                    {"type": "tool_result", "tool_use_id": "2", "content": "warm"},
                ],
            },
        ]
    }
    assert tool_outputs(openai_body) == ["sunny", "warm"]
    assert tool_outputs(anthropic_body) == ["sunny", "warm"]
    assert last_user_text(anthropic_body) == "weather?"
    assert tool_outputs({"messages": [{"role": "user", "content": "x"}]}) == []


def test_the_module_runs_as_a_process_and_prints_its_base_url() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "assay.testing.openai_server", "--port", "0", "--latency-ms", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:")
        status, _, text = post(f"{base_url}/chat/completions", CHAT)
        assert (status, json.loads(text)["choices"][0]["message"]["content"]) == (
            200,
            "hello there",
        )
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=10)
    assert process.returncode == 0
    assert stderr == ""  # no warnings, e.g. runpy's about a module imported twice


def test_the_process_answers_judge_requests_from_its_judge_option() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "assay.testing.openai_server", "--judge", '{"score": 0.7}'],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    schema = {
        "type": "object",
        "properties": {"score": {"type": "number"}, "why": {"type": "string"}},
    }
    judge_request = {
        "model": "judge",
        "messages": [
            {
                "role": "system",
                "content": f"Rules.\nJSON Schema of the reply: {json.dumps(schema)}",
            },
            {"role": "user", "content": "grade this"},
        ],
        "response_format": {"type": "json_schema", "json_schema": {"name": "r", "schema": schema}},
    }
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        status, _, text = post(f"{base_url}/chat/completions", judge_request)
        assert status == 200
        reply = json.loads(json.loads(text)["choices"][0]["message"]["content"])
        assert reply == {"score": 0.7, "why": ""}
        # Other requests are still echoed.
        _, _, echoed = post(f"{base_url}/chat/completions", CHAT)
        assert json.loads(echoed)["choices"][0]["message"]["content"] == "hello there"
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=10)
    bad = subprocess.run(
        [sys.executable, "-m", "assay.testing.openai_server", "--judge", "[1]"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2
    assert "--judge takes a JSON object, not '[1]'" in bad.stderr


def test_the_process_rejects_a_bad_fault_option() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "assay.testing.openai_server", "--fault", "slow=0.1"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "unknown fault kind 'slow'" in result.stderr


def test_i26_5_moderations_answer_from_the_script_and_404_without_one() -> None:
    def scores(text: str) -> dict[str, float]:
        return {"violence": 0.9 if "kill" in text else 0.1, "hate": 0.0}

    with FakeOpenAIServer(moderation=scores) as server:
        status, _, text = post(
            server.base_url + "/moderations", {"model": "m", "input": "kill the bug"}
        )
        bad, _, _ = post(server.base_url + "/moderations", {"input": ["a list"]})
    reply = json.loads(text)
    assert (status, bad, reply["model"]) == (200, 400, "m")
    assert reply["results"] == [
        {
            "flagged": True,
            "categories": {"violence": True, "hate": False},
            "category_scores": {"violence": 0.9, "hate": 0.0},
        }
    ]
    with FakeOpenAIServer() as server:
        status, _, text = post(server.base_url + "/moderations", {"model": "m", "input": "x"})
    assert status == 404 and "no moderation endpoint" in text
