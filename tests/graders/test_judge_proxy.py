"""Issue 24 item 3: a code grader's judge proxy speaks AgentV's target-proxy protocol.

The proxy runs in process against the fake OpenAI server; a real grader subprocess calling
through it is in tests/interop/test_agentv_graders.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest

from assay.graders._judge_proxy_server import JudgeProxyServer
from assay.judge import JudgeClient, JudgeSpec
from assay.testing import FakeOpenAIServer


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    with FakeOpenAIServer(reply=lambda body: "ANSWER " + str(body["messages"][-1]["content"])) as s:
        yield s


async def _session(
    client: JudgeClient, max_calls: int, calls: list[tuple[str, str, Any]], token: str | None
) -> list[tuple[int, Any]]:
    out: list[tuple[int, Any]] = []
    async with JudgeProxyServer(client, max_calls) as proxy, aiohttp.ClientSession() as http:
        assert proxy.url.startswith("http://127.0.0.1:")
        assert proxy.env["AGENTV_TARGET_PROXY_URL"] == proxy.env["ASSAY_JUDGE_PROXY_URL"]
        assert proxy.env["AGENTV_PROVIDER_PROXY_TOKEN"] == proxy.token
        headers = {"Authorization": f"Bearer {token or proxy.token}"}
        for method, route, body in calls:
            async with http.request(method, proxy.url + route, json=body, headers=headers) as reply:
                out.append((reply.status, await reply.json()))
    await client.close()
    return out


def exchange(
    server: FakeOpenAIServer,
    calls: list[tuple[str, str, Any]],
    *,
    cap: int = 3,
    token: str | None = None,
) -> list[tuple[int, Any]]:
    client = JudgeClient(JudgeSpec(model="judge", base_url=server.base_url))
    return asyncio.run(_session(client, cap, calls, token))


def test_i24_3_proxy_answers_invoke_batch_and_info_and_caps_calls(
    server: FakeOpenAIServer,
) -> None:
    replies = exchange(
        server,
        [
            ("POST", "/invoke", {"question": "one", "systemPrompt": "be brief"}),
            ("POST", "/invokeBatch", {"requests": [{"question": "two"}, {"question": ""}]}),
            ("POST", "/invokeBatch", {"requests": [{"question": "x"}, {"question": "y"}]}),
            ("POST", "/invoke", {"question": "three"}),
            ("POST", "/invoke", {"question": "four"}),
            ("GET", "/info", None),
        ],
    )
    status, first = replies[0]
    assert (status, first["rawText"]) == (200, "ANSWER one")
    assert first["output"] == [{"role": "assistant", "content": "ANSWER one"}]
    assert first["tokenUsage"]["input"] > 0
    assert server.requests[0]["messages"][0] == {"role": "system", "content": "be brief"}
    assert replies[1] == (
        200,
        {
            "responses": [
                {
                    "output": [{"role": "assistant", "content": "ANSWER two"}],
                    "rawText": "ANSWER two",
                    "tokenUsage": replies[1][1]["responses"][0]["tokenUsage"],
                },
                {"output": [], "rawText": "Error: Missing required field: question"},
            ]
        },
    )
    # 2 calls made, a batch of 2 would pass the cap of 3: refused whole, as AgentV does
    assert replies[2] == (
        429,
        {"error": "Batch would exceed max calls (current: 2, batch: 2, limit: 3)"},
    )
    assert replies[3][0] == 200
    assert replies[4] == (429, {"error": "Max calls exceeded (limit: 3)"})
    assert replies[5] == (
        200,
        {
            "targetName": "judge",
            "providerLabel": "judge",
            "maxCalls": 3,
            "callCount": 3,
            "availableTargets": ["judge"],
            "availableProviderLabels": ["judge"],
        },
    )


def test_i24_3_proxy_refuses_a_wrong_token_and_another_target(server: FakeOpenAIServer) -> None:
    assert exchange(server, [("GET", "/info", None)], token="wrong") == [
        (401, {"error": "Unauthorized"})
    ]
    ((status, body),) = exchange(server, [("POST", "/invoke", {"question": "q", "target": "b"})])
    assert status == 400
    assert body["error"].startswith("Unknown target 'b'. Available: judge")
    assert server.requests == []
