"""The judge client through the real SDKs against the local server: modes, memory of what the
server accepts, providers, keys, and the cache."""

from __future__ import annotations

import asyncio
import json
import random
import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from assay.cache import CacheMiss, CacheMode, ResponseCache
from assay.judge import (
    Entry,
    JudgeClient,
    JudgeError,
    Judgement,
    JudgeSpec,
    PromptTemplate,
    keyed_schema,
)
from assay.providers import RetryPolicy
from assay.testing import FakeOpenAIServer, fail_first

TEMPLATE = PromptTemplate("t", "Rate this: {{ output }}")


class Reply(BaseModel):
    score: float = Field(ge=0.0, le=1.0)
    reasoning: str


def ask(client: JudgeClient, output: str = "fine", **kwargs: Any) -> Judgement[Reply]:
    async def go() -> Judgement[Reply]:
        try:
            return await client.ask(TEMPLATE.render({"output": output}), Reply, **kwargs)
        finally:
            await client.close()

    return asyncio.run(go())


def client_for(server: FakeOpenAIServer, **spec: Any) -> JudgeClient:
    settings: dict[str, Any] = {"model": "judge-model", "base_url": server.base_url}
    settings.setdefault("api_key_env", "")
    settings.update(spec)
    return JudgeClient(JudgeSpec(**settings))


def test_the_mode_the_server_accepted_is_remembered() -> None:
    with FakeOpenAIServer(judge={"score": 0.5}, output_modes=()) as server:
        client = client_for(server)

        async def twice() -> None:
            prompt = TEMPLATE.render({"output": "x"})
            await client.ask(prompt, Reply)
            await client.ask(prompt, Reply)
            await client.close()

        asyncio.run(twice())
        kinds = [(r.get("response_format") or {}).get("type") for r in server.requests]
    assert kinds == ["json_schema", "json_object", None, None]
    assert client.mode == "text"


def test_an_explicit_mode_does_not_fall_back() -> None:
    with FakeOpenAIServer(judge={"score": 0.5}, output_modes=()) as server:
        client = client_for(server, structured_output="json_schema")
        with pytest.raises(JudgeError, match="rejected json_schema output"):
            ask(client)
        assert server.request_count == 1


def test_the_strict_schema_is_sent_and_the_system_rules_carry_the_nonce() -> None:
    with FakeOpenAIServer(judge={"score": 0.5}) as server:
        ask(client_for(server))
        body = server.requests[-1]
    fmt = body["response_format"]["json_schema"]
    assert (fmt["name"], fmt["strict"]) == ("Reply", True)
    assert fmt["schema"]["additionalProperties"] is False
    assert fmt["schema"]["required"] == ["score", "reasoning"]
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    nonce = user.split("<<<OUTPUT ", 1)[1].split(">>>", 1)[0]
    assert f"<<<END NAME {nonce}>>>" in system
    assert body["temperature"] == 0.0


def test_the_anthropic_judge_answers_through_a_forced_tool_call() -> None:
    with FakeOpenAIServer(judge={"score": 0.75, "reasoning": "ok"}) as server:
        client = JudgeClient(
            JudgeSpec(
                provider="anthropic", model="claude-judge", base_url=server.url, api_key_env=""
            )
        )
        judgement = ask(client)
        body = server.requests[-1]
    assert (judgement.answer.score, judgement.answer.reasoning) == (0.75, "ok")
    assert body["tool_choice"] == {"type": "tool", "name": "submit_judgement"}
    assert body["system"].startswith("You are a careful, impartial evaluator")
    assert judgement.token_usage is not None and judgement.token_usage.input > 0


def test_a_missing_api_key_is_an_error_saying_which_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ASSAY_TEST_JUDGE_KEY", raising=False)
    client = JudgeClient(JudgeSpec(model="gpt-judge", api_key_env="ASSAY_TEST_JUDGE_KEY"))
    with pytest.raises(JudgeError, match="environment variable ASSAY_TEST_JUDGE_KEY is not set"):
        ask(client)


def test_a_judge_at_its_own_endpoint_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSAY_TEST_JUDGE_KEY", raising=False)
    with FakeOpenAIServer(judge={"score": 0.5}) as server:
        client = client_for(server, api_key_env="ASSAY_TEST_JUDGE_KEY")
        assert ask(client).answer.score == 0.5
    with FakeOpenAIServer(judge={"score": 0.5}, api_key="secret") as guarded:
        client = client_for(guarded, api_key_env="ASSAY_TEST_JUDGE_KEY")
        with pytest.raises(JudgeError, match=r"HTTP 401.*\$ASSAY_TEST_JUDGE_KEY"):
            ask(client)


def test_a_cached_judgement_costs_no_request_and_a_new_nonce_still_hits(tmp_path: Path) -> None:
    with FakeOpenAIServer(judge={"score": 0.6}) as server:
        with ResponseCache(tmp_path / "c.db") as cache:
            first = ask(JudgeClient(client_for(server).spec, cache=cache))
            again = ask(JudgeClient(client_for(server).spec, cache=cache))
            rejudged = ask(JudgeClient(client_for(server).spec, cache=cache), rejudge_round=1)
        asked = server.request_count
    assert (first.cached, again.cached, rejudged.cached) == (False, True, False)
    assert again.answer == first.answer and again.token_usage == first.token_usage
    assert asked == 2


def test_replay_mode_raises_on_a_missing_judgement(tmp_path: Path) -> None:
    with FakeOpenAIServer(judge={"score": 0.6}) as server:
        with (
            ResponseCache(tmp_path / "c.db", CacheMode.REPLAY) as cache,
            pytest.raises(CacheMiss),
        ):
            ask(JudgeClient(client_for(server).spec, cache=cache))
        assert server.request_count == 0


def test_prose_without_json_is_re_asked_then_an_error() -> None:
    with FakeOpenAIServer(reply=lambda body: "I think it is quite good.") as server:
        with pytest.raises(JudgeError, match="the reply holds no JSON object") as info:
            ask(client_for(server))
        asked = server.request_count
    assert asked == 3
    assert info.value.model == "judge-model" and info.value.token_usage is not None


# -- issue 22 item 5: Retry-After is capped as for targets -----------------------------------


def test_i22_5_judge_retry_after_is_capped() -> None:
    """A 429 asking for an hour waits at most the targets' cap (one shared policy): the
    default cap is 30 s, and with a short cap the call ends long before the hour."""
    default = JudgeClient(JudgeSpec(model="judge-model"))
    assert default._retry is not None and default._retry.max_delay_s == 30.0
    assert default._retry.delay(0, 3600.0, random.Random(0)) == 30.0
    assert default._retry == RetryPolicy(max_retries=3)  # the runner's policy for targets
    with FakeOpenAIServer(
        judge={"score": 0.5}, fault=fail_first(1, "429"), retry_after_s=3600
    ) as server:
        client = JudgeClient(
            client_for(server).spec, retry=RetryPolicy(max_retries=2, max_delay_s=0.2)
        )
        started = time.monotonic()
        judgement = ask(client)
        elapsed = time.monotonic() - started
        assert server.fault_counts == {"429": 1}
    assert judgement.answer.score == 0.5
    assert elapsed < 20.0  # uncapped, the retry would sleep for 3600 s


# -- issue 22 item 17: a dropped connection is named, not called a timeout ------------------


@contextmanager
def closing_server(*, reset: bool) -> Iterator[str]:
    """A real socket that accepts each connection, reads the request and closes it (reset:
    with an RST, as a crashing proxy does) without a reply. Yields its base URL."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(5)
                received = b""
                while b"\r\n\r\n" not in received:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    received += chunk
                if reset:
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.parametrize(
    ("reset", "cause"),
    [
        (False, "was closed by the server before it replied (ServerDisconnectedError"),
        (True, "was reset by the server before it replied (ConnectionResetError"),
    ],
)
def test_i22_17_a_dropped_judge_connection_is_named_with_its_endpoint(
    reset: bool, cause: str
) -> None:
    with closing_server(reset=reset) as url:
        client = JudgeClient(JudgeSpec(model="judge-model", base_url=url, api_key_env=""))
        client._retry = RetryPolicy(max_retries=1, max_delay_s=0.01)
        with pytest.raises(JudgeError) as info:
            ask(client)
    message = str(info.value)
    assert message.startswith(f"judge judge-model: the connection to {url} {cause}")
    assert message.endswith("(after 2 attempts)")
    assert "timed out" not in message


def test_i22_17_a_refused_judge_connection_and_a_real_timeout_are_told_apart() -> None:
    url = f"http://127.0.0.1:{unused_port()}/v1"
    client = JudgeClient(
        JudgeSpec(model="judge-model", base_url=url, api_key_env="", max_retries=0)
    )
    with pytest.raises(
        JudgeError, match=rf"^judge judge-model: the connection to {url} was refused"
    ):
        ask(client)
    with FakeOpenAIServer(judge={"score": 0.5}, faults={"timeout": 1.0}, hang_s=10) as server:
        client = client_for(server, timeout_s=0.5, max_retries=0)
        with pytest.raises(
            JudgeError, match=r"^judge judge-model: the request timed out after 0.5s$"
        ):
            ask(client)


# -- issue 21 item 9: a call's pinned schema is what is sent, shown and checked ---------------


class Said(BaseModel):
    statement: str
    holds: bool


class SaidReply(BaseModel):
    said: dict[str, Said]


PINNED = keyed_schema("SaidReply", "said", {"1": Entry(Said, {"statement": "Says 30 days"})}, "d")


def ask_pinned(client: JudgeClient) -> Judgement[SaidReply]:
    async def go() -> Judgement[SaidReply]:
        try:
            prompt = TEMPLATE.render({"output": "Refunds within 30 days."})
            return await client.ask(prompt, SaidReply, schema=PINNED)
        finally:
            await client.close()

    return asyncio.run(go())


def test_i21_9_the_pinned_schema_is_sent_as_the_strict_schema_and_the_anthropic_tool() -> None:
    with FakeOpenAIServer(judge={"said": {"1": {"holds": True}}}) as server:
        judgement = ask_pinned(client_for(server))
        openai_body = server.requests[-1]
        anthropic = JudgeClient(
            JudgeSpec(
                provider="anthropic", model="claude-judge", base_url=server.url, api_key_env=""
            )
        )
        tool_judgement = ask_pinned(anthropic)
        anthropic_body = server.requests[-1]
    assert judgement.answer.said["1"] == Said(statement="Says 30 days", holds=True)
    assert tool_judgement.answer == judgement.answer
    fmt = openai_body["response_format"]["json_schema"]
    assert (fmt["name"], fmt["strict"], fmt["schema"]) == ("SaidReply", True, PINNED)
    assert anthropic_body["tools"][0]["input_schema"] == PINNED
    assert json.dumps(PINNED) in openai_body["messages"][0]["content"]


@pytest.mark.parametrize("mode", ["json_schema", "json_object", "text"])
def test_i21_9_a_drifted_reply_is_re_asked_in_every_mode_then_is_an_error(mode: str) -> None:
    drifted = '{"said": {"1": {"statement": "Says 14 days", "holds": true}}}'
    with FakeOpenAIServer(reply=lambda body: drifted) as server:
        with pytest.raises(JudgeError) as info:
            ask_pinned(client_for(server, structured_output=mode))
        asked = server.request_count
    assert asked == 3
    assert str(info.value) == (
        "judge judge-model: no valid reply after 3 attempts; last problem: it does not match "
        "the schema ($.said['1'].statement: 'Says 14 days' is not one of ['Says 30 days'])"
    )
