"""The OpenAI-compatible wire over aiohttp (issue 23 item 3): what it sends, and every failure
mapped onto the `ProviderError` tree with the kinds and messages the SDK path had — against the
local OpenAI-protocol server and a raw socket that answers exactly the bytes a test gives it."""

from __future__ import annotations

import asyncio
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from assay.providers import (
    MalformedReplyError,
    ProviderConfig,
    ProviderConnectionError,
    ProviderError,
    ProviderStatusError,
    ProviderTimeoutError,
    RateLimitError,
    embed,
    open_provider,
    openai_wire,
)
from assay.results import JSON
from assay.testing import FakeOpenAIServer, fail_first

BODY: dict[str, JSON] = {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]}


def config(base_url: str, **options: object) -> ProviderConfig:
    values: dict[str, object] = {"base_url": base_url, "api_key_env": None, "who": "t"}
    values.update(options)
    return ProviderConfig(**values)  # type: ignore[arg-type]


def complete(cfg: ProviderConfig, body: dict[str, JSON] | None = None) -> dict[str, JSON]:
    """One request through a freshly opened provider, closed afterwards."""

    async def go() -> dict[str, JSON]:
        provider = open_provider(cfg, "openai")
        try:
            return await provider.complete(body or BODY)
        finally:
            await provider.close()

    return asyncio.run(go())


def failure(cfg: ProviderConfig) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        complete(cfg)
    return caught.value


@contextmanager
def raw_server(answer: bytes | None, *, reset: bool = False, delay_s: float = 0.0) -> Iterator[str]:
    """A real socket that reads each request's head and then writes `answer` verbatim (None:
    nothing) before closing — with an RST when `reset`. Yields its base URL."""
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
                if delay_s:
                    stop.wait(delay_s)
                if answer is not None:
                    conn.sendall(answer)
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


def http(status: str, body: bytes, *headers: str) -> bytes:
    head = [f"HTTP/1.1 {status}", f"Content-Length: {len(body)}", "Connection: close", *headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


# -- what is sent ------------------------------------------------------------------------------


def test_i23_3_the_bearer_key_and_json_body_are_sent_to_chat_completions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ASSAY_TEST_KEY", "sk-test")
    with FakeOpenAIServer(api_key="sk-test") as server:
        reply = complete(config(server.base_url, api_key_env="ASSAY_TEST_KEY"))
        (seen,) = server.seen
        (sent,) = server.requests
    assert openai_wire.read_turn(reply).text == "hi"
    assert (seen.method, seen.path, seen.query) == ("POST", "/v1/chat/completions", {})
    assert seen.headers["authorization"] == "Bearer sk-test"
    assert seen.headers["content-type"] == "application/json"
    assert "api-key" not in seen.headers
    assert sent == BODY


def test_i23_3_azure_sends_its_api_key_header_deployment_path_and_api_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ASSAY_AZURE_KEY", "az-key")
    with FakeOpenAIServer(api_key="az-key") as server:
        cfg = config(
            server.url,
            provider="azure",
            api_key_env="ASSAY_AZURE_KEY",
            deployment="my-gpt",
            api_version="2024-10-21",
        )
        complete(cfg)
        (seen,) = server.seen
    assert seen.path == "/openai/deployments/my-gpt/chat/completions"
    assert seen.query == {"api-version": "2024-10-21"}
    assert seen.headers["api-key"] == "az-key"
    assert "authorization" not in seen.headers


def test_i23_3_one_session_serves_concurrent_calls_over_reused_connections() -> None:
    async def go(base_url: str) -> tuple[bool, int]:
        provider = open_provider(config(base_url), "openai")
        try:
            await asyncio.gather(*(provider.complete(BODY) for _ in range(8)))
            first = provider._session  # type: ignore[attr-defined]
            for _ in range(2):
                await asyncio.gather(*(provider.complete(BODY) for _ in range(8)))
            session = provider._session  # type: ignore[attr-defined]
            idle = sum(len(pool) for pool in session.connector._conns.values())
            return session is first, idle
        finally:
            await provider.close()

    with FakeOpenAIServer(latency_ms=20) as server:
        same, idle = asyncio.run(go(server.base_url))
        assert server.request_count == 24
    assert same
    assert 1 <= idle <= 8  # 24 requests, at most 8 at a time, over kept-alive connections


def test_i23_3_embeddings_are_posted_over_the_same_wire() -> None:
    async def go(base_url: str) -> list[list[float]]:
        provider = open_provider(config(base_url), "openai")
        try:
            return (await embed(provider, "fake-embed", ["a", "b"])).vectors
        finally:
            await provider.close()

    with FakeOpenAIServer() as server:
        vectors = asyncio.run(go(server.base_url))
        (seen,) = server.seen
    assert seen.path == "/v1/embeddings"
    assert len(vectors) == 2 and vectors[0] != vectors[1]


def test_i23_3_an_openai_compatible_call_does_not_import_the_openai_sdk() -> None:
    with FakeOpenAIServer() as server:
        script = (
            "import asyncio, sys\n"
            "from assay.providers import ProviderConfig, open_provider\n"
            "async def go():\n"
            f"    p = open_provider(ProviderConfig(base_url={server.base_url!r},"
            " api_key_env=None), 'openai')\n"
            "    await p.complete({'model': 'm', 'messages': [{'role': 'user', 'content': 'x'}]})\n"
            "    await p.close()\n"
            "asyncio.run(go())\n"
            "print('openai' in sys.modules)\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        )
    assert out.stdout.strip() == "False"


# -- every failure, mapped ----------------------------------------------------------------------


def test_i23_3_a_429_is_rate_limited_with_its_retry_after() -> None:
    with FakeOpenAIServer(fault=fail_first(1, "429"), retry_after_s=1.5) as server:
        error = failure(config(server.base_url))
    assert isinstance(error, RateLimitError)
    assert (error.status, error.retryable, error.rate_limited) == (429, True, True)
    assert (error.kind, error.retry_after_s) == ("RateLimitError", 1.5)
    assert str(error) == "rate limited (HTTP 429): injected fault: HTTP 429"


@pytest.mark.parametrize(
    ("headers", "expected"),
    [(("retry-after-ms: 250", "Retry-After: 7"), 0.25), (("Retry-After: 7",), 7.0), ((), None)],
    ids=["ms-wins", "seconds", "none"],
)
def test_i23_3_retry_after_ms_wins_and_a_429_without_one_leaves_the_wait_to_the_policy(
    headers: tuple[str, ...], expected: float | None
) -> None:
    body = b'{"error": {"message": "slow down", "type": "rate_limit_error"}}'
    with raw_server(http("429 Too Many Requests", body, *headers)) as url:
        error = failure(config(url))
    assert isinstance(error, RateLimitError)
    assert error.retry_after_s == expected
    assert str(error) == "rate limited (HTTP 429): slow down"


def test_i23_3_a_500_is_a_retryable_status_error_with_the_servers_message() -> None:
    with FakeOpenAIServer(fault=fail_first(1, "500")) as server:
        error = failure(config(server.base_url))
    assert isinstance(error, ProviderStatusError) and not isinstance(error, RateLimitError)
    assert (error.status, error.retryable, error.kind) == (500, True, "InternalServerError")
    assert error.retry_after_s is None
    assert str(error) == "HTTP 500: injected fault: HTTP 500"


@pytest.mark.parametrize(
    ("status", "kind", "retryable"),
    [
        ("400 Bad Request", "BadRequestError", False),
        ("404 Not Found", "NotFoundError", False),
        ("408 Request Timeout", "APIStatusError", True),
        ("422 Unprocessable Entity", "UnprocessableEntityError", False),
        ("502 Bad Gateway", "InternalServerError", True),
    ],
)
def test_i23_3_an_error_status_with_a_non_json_body_quotes_the_body(
    status: str, kind: str, retryable: bool
) -> None:
    with raw_server(http(status, b"<html>upstream said no</html>")) as url:
        error = failure(config(url))
    code = int(status.split(maxsplit=1)[0])
    assert isinstance(error, ProviderStatusError)
    assert (error.status, error.kind, error.retryable) == (code, kind, retryable)
    assert str(error) == f"HTTP {code}: Error code: {code} - <html>upstream said no</html>"


def test_i23_3_a_401_names_the_key_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_TEST_KEY", "wrong")
    with FakeOpenAIServer(api_key="right") as server:
        error = failure(config(server.base_url, api_key_env="ASSAY_TEST_KEY"))
    assert (error.kind, error.retryable) == ("AuthenticationError", False)
    assert str(error) == "HTTP 401: invalid API key (the API key is read from $ASSAY_TEST_KEY)"


def test_i23_3_a_connection_dropped_before_the_reply_is_a_connection_error() -> None:
    with raw_server(None) as url:
        error = failure(config(url))
    assert isinstance(error, ProviderConnectionError)
    assert (error.kind, error.retryable) == ("APIConnectionError", True)
    assert str(error) == (
        f"the connection to {url} was closed by the server before it replied "
        "(ServerDisconnectedError: Server disconnected)"
    )


def test_i23_3_a_reset_connection_is_named_as_reset() -> None:
    with raw_server(None, reset=True) as url:
        error = failure(config(url))
    assert isinstance(error, ProviderConnectionError)
    assert (error.kind, error.retryable) == ("APIConnectionError", True)
    assert str(error).startswith(
        f"the connection to {url} was reset by the server before it replied (ConnectionResetError"
    )
    assert "timed out" not in str(error)


def test_i23_3_a_refused_connection_asks_whether_the_server_runs() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    error = failure(config(url))
    assert isinstance(error, ProviderConnectionError)
    assert (error.kind, error.retryable) == ("APIConnectionError", True)
    assert str(error).startswith(
        f"the connection to {url} was refused; is the server running? (ConnectionRefusedError"
    )


def test_i23_3_a_slow_server_times_out_after_the_configured_timeout() -> None:
    with FakeOpenAIServer(fault=fail_first(1, "timeout"), hang_s=30) as server:
        started = time.monotonic()
        error = failure(config(server.base_url, timeout_s=0.3))
        elapsed = time.monotonic() - started
    assert isinstance(error, ProviderTimeoutError)
    assert (error.kind, error.retryable) == ("APITimeoutError", True)
    assert str(error) == "the request timed out after 0.3s"
    assert elapsed < 0.3 + 10  # the hang lasts 30 s


def test_i23_3_a_reply_that_is_not_json_is_a_retryable_malformed_reply() -> None:
    answer = http("200 OK", b"<html>proxy error page</html>", "Content-Type: text/html")
    with raw_server(answer) as url:
        error = failure(config(url))
    assert isinstance(error, MalformedReplyError)
    assert (error.kind, error.retryable) == ("MalformedResponse", True)
    assert str(error).startswith("the reply is not valid JSON for the API (Expecting value")


def test_i23_3_a_truncated_json_reply_is_a_retryable_malformed_reply() -> None:
    with FakeOpenAIServer(fault=fail_first(1, "malformed")) as server:
        error = failure(config(server.base_url))
    assert isinstance(error, MalformedReplyError)
    assert (error.kind, error.retryable) == ("MalformedResponse", True)


def test_i23_3_a_json_reply_that_is_no_object_is_malformed_and_final() -> None:
    with raw_server(http("200 OK", b"[1, 2]", "Content-Type: application/json")) as url:
        error = failure(config(url))
    assert isinstance(error, MalformedReplyError)
    assert (error.kind, error.retryable) == ("MalformedResponse", False)
    assert str(error) == "the reply is not a JSON object: [1, 2]"


def test_i23_3_a_reply_without_choices_is_malformed_when_read() -> None:
    answer = http("200 OK", b'{"id": "x", "object": "chat.completion"}')
    with raw_server(answer) as url:
        reply = complete(config(url))
    with pytest.raises(MalformedReplyError) as caught:
        openai_wire.read_turn(reply)
    assert (caught.value.kind, caught.value.retryable) == ("MalformedResponse", False)
    assert str(caught.value).startswith("the reply has no choices[0].message: ")


def test_i23_3_the_environments_http_proxy_carries_the_requests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    with socket.socket() as probe:  # a port nothing listens on: only the proxy can answer
        probe.bind(("127.0.0.1", 0))
        unreachable = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    with FakeOpenAIServer() as proxy:
        for name in ("HTTP_PROXY", "http_proxy"):
            monkeypatch.setenv(name, proxy.url)
        reply = complete(config(unreachable))
        (seen,) = proxy.seen
    assert openai_wire.read_turn(reply).text == "hi"
    assert seen.path == "/v1/chat/completions"


def test_i23_3_a_long_non_json_error_body_is_quoted_in_part() -> None:
    page = b"<html>" + b"x" * 5000 + b"</html>"
    with raw_server(http("503 Service Unavailable", page)) as url:
        error = failure(config(url))
    assert (error.kind, error.retryable) == ("InternalServerError", True)
    assert str(error) == "HTTP 503: Error code: 503 - <html>" + "x" * 194
