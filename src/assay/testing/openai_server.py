"""A real local HTTP server speaking the OpenAI Chat Completions protocol, for tests and benchmarks.

Faking a model at the HTTP seam (rather than mocking the SDK) exercises the real `openai` and
`anthropic` client code: serialisation, the aiohttp transport, status-code handling and error
classes. The server also speaks a minimal Anthropic Messages protocol (`POST /v1/messages`) and
answers embeddings (`POST /v1/embeddings`) and moderation (`POST /v1/moderations`, when a
`moderation` script is given; a 404 otherwise, as servers without the endpoint answer). Chat,
embeddings and moderation are served under any path prefix (chat also under none)
(`/openai/deployments/NAME/chat/completions?api-version=...` as Azure's, `/api/v1/...` as
OpenRouter's), and `seen` records each request's method, path, query and headers, so tests can
check where a provider preset sends its requests.

Replies come from a script, faults are injected at configurable rates (seeded, so runs repeat)
or decided per request by a function, and every request is counted for assertions:

```python
with FakeOpenAIServer(reply={"hi": "hello"}, faults={"429": 0.05}, latency_ms=5) as server:
    client = AsyncOpenAI(base_url=server.base_url, api_key="unused")
```

Run it as a separate process for benchmarks; it prints its base URL once it listens:
`python -m assay.testing.openai_server --port 8000 --latency-ms 50 --fault 429=0.05`.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import random
import signal
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Self, TypeAlias

from aiohttp import web

from assay.providers import fake_embedding
from assay.results import JSON
from assay.testing._judge_script import JudgeScript, is_judge_request, judge_reply

__all__ = [
    "FakeOpenAIServer",
    "FaultScript",
    "JudgeScript",
    "ModerationScript",
    "Reply",
    "ReplyScript",
    "SeenRequest",
    "fail_first",
    "last_user_text",
    "tool_outputs",
]

Reply: TypeAlias = str | dict[str, JSON]
"""A scripted reply: the text, or `{content, tool_calls: [{name, arguments}], usage,
finish_reason}` (every key optional; `usage` is `{prompt_tokens, completion_tokens}`)."""
ReplyScript: TypeAlias = Callable[[dict[str, JSON]], Reply] | Mapping[str, Reply]
"""Decides the reply: a function of the request body, or a mapping from the last user message
to the reply (inputs it does not list are echoed)."""
ModerationScript: TypeAlias = Callable[[str], Mapping[str, float]]
"""Scores a moderation input: category → score 0–1; a category at 0.5 or more is flagged."""
FaultScript: TypeAlias = Callable[[dict[str, JSON]], str | None]
"""Decides the fault for one request body: a fault kind, or None to answer normally."""

_SPECIAL_FAULTS = ("timeout", "malformed", "drop")
_REPLY_KEYS = frozenset({"content", "tool_calls", "usage", "finish_reason"})
_MALFORMED_BODY = '{"id": "chatcmpl-malformed", "object": "chat.completion", "choices": [{'
_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def last_user_text(body: Mapping[str, JSON]) -> str:
    """The text of the last user message of an OpenAI or Anthropic request body ("" if none)."""
    for message in reversed(_messages(body)):
        if message.get("role") == "user":
            text = _text(message.get("content"))
            if text or not _tool_result_blocks(message):
                return text
    return ""


def tool_outputs(body: Mapping[str, JSON]) -> list[str]:
    """The tool results the client sent after the model's last turn, in order.

    Lets a reply script answer the second round of a tool loop from what the tools returned.
    """
    outputs: list[str] = []
    for message in reversed(_messages(body)):
        role = message.get("role")
        if role == "tool":
            outputs.append(_text(message.get("content")))
        elif role == "user" and _tool_result_blocks(message):
            outputs.extend(_text(b.get("content")) for b in reversed(_tool_result_blocks(message)))
        else:
            break
    return outputs[::-1]


def fail_first(times: int, kind: str = "500", *, prompt: str | None = None) -> FaultScript:
    """A fault script failing the first `times` requests with `kind`, then answering normally.

    Args:
        times: How many requests fail.
        kind: The fault, as in `FakeOpenAIServer(faults=...)`.
        prompt: Count and fail only requests whose last user message is this text.
    """
    _check_kind(kind)
    seen = 0

    def decide(body: dict[str, JSON]) -> str | None:
        nonlocal seen
        if prompt is not None and last_user_text(body) != prompt:
            return None
        seen += 1
        return kind if seen <= times else None

    return decide


@dataclass(frozen=True)
class SeenRequest:
    """Where a request went and what it carried besides its body."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    """Header names in lower case."""


@dataclass(frozen=True)
class _Reply:
    content: str | None
    tool_calls: list[tuple[str, JSON]]
    usage: tuple[int, int] | None
    finish_reason: str | None


class FakeOpenAIServer:
    """An aiohttp server on 127.0.0.1 answering `POST /v1/chat/completions`, `POST /v1/messages`
    and `GET /v1/models`, run in a background thread with its own event loop.

    Fault kinds: an HTTP status such as `"429"` or `"500"` (an error body in the protocol's
    shape; a 429 carries `Retry-After`), `"timeout"` (no reply for `hang_s`, longer than any
    sensible client timeout), `"malformed"` (status 200 with a truncated JSON body) and `"drop"`
    (the connection closes without a response).
    """

    def __init__(
        self,
        reply: ReplyScript | None = None,
        *,
        latency_ms: float = 0.0,
        faults: Mapping[str, float] | None = None,
        fault: FaultScript | None = None,
        seed: int = 0,
        retry_after_s: float | None = 0.05,
        hang_s: float = 30.0,
        api_key: str | None = None,
        models: Sequence[str] = ("fake-model",),
        max_recorded: int = 1000,
        judge: JudgeScript | None = None,
        moderation: ModerationScript | None = None,
        output_modes: Sequence[str] = ("json_schema", "json_object"),
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        """Configure the server; it starts with `start()` or `with`.

        Args:
            reply: The reply script; by default the last user message is echoed.
            latency_ms: Added before every response, like a model's thinking time.
            faults: Fault kind → probability per request, drawn from a `seed`ed RNG.
            fault: Decides a fault per request; consulted before `faults`.
            seed: Seed of the fault RNG, so a run with rate faults can be repeated exactly.
            retry_after_s: The `Retry-After` of injected 429s, in (possibly fractional) seconds;
                None sends none.
            hang_s: How long a `timeout` fault stalls before it answers after all.
            api_key: When set, requests must carry it (`Authorization: Bearer`, `x-api-key` or
                Azure's `api-key`) or get a 401.
            models: The model ids `GET /v1/models` lists.
            max_recorded: How many request bodies `requests` keeps (the most recent).
            judge: Scripted judge mode: requests from assay's judge client are answered with
                an instance of the reply schema they send, holding these values (a mapping of
                top-level fields, or a function of the body and the schema); other requests
                still go to `reply`.
            moderation: Scores each `POST /v1/moderations` input by category; without it
                the endpoint answers 404.
            output_modes: The `response_format` types the server accepts; a request with
                another gets HTTP 400, as servers without structured output answer.
            host: Interface to bind; only loopback is sensible for a fake.
            port: Port to bind; 0 picks a free one.
        """
        for kind, rate in (faults or {}).items():
            _check_kind(kind)
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"fault rate for {kind!r} must be between 0 and 1, got {rate}")
        if sum((faults or {}).values()) > 1.0:
            raise ValueError("fault rates add up to more than 1")
        self._reply = reply
        self._judge = judge
        self._moderation = moderation
        self._output_modes = frozenset(output_modes)
        self.latency_ms = latency_ms
        self._faults = dict(faults or {})
        self._fault = fault
        self._rng = random.Random(seed)  # noqa: S311 — picks faults, not secrets
        self.retry_after_s = retry_after_s
        self.hang_s = hang_s
        self._api_key = api_key
        self._models = list(models)
        self._host = host
        self._port = port
        self._bound_port: int | None = None
        self._lock = threading.Lock()
        self._total = 0
        self._fault_counts: Counter[str] = Counter()
        self._requests: deque[dict[str, JSON]] = deque(maxlen=max_recorded)
        self._seen: deque[SeenRequest] = deque(maxlen=max_recorded)
        self._ids = itertools.count(1)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing: asyncio.Event | None = None
        self._startup_error: BaseException | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The server root, e.g. `http://127.0.0.1:PORT` (the Anthropic SDK's `base_url`); it stays
        known after `stop()`."""
        if self._bound_port is None:
            raise RuntimeError("the server has not started; use `with FakeOpenAIServer() as s:`")
        return f"http://{self._host}:{self._bound_port}"

    @property
    def base_url(self) -> str:
        """The OpenAI SDK's `base_url`: `http://127.0.0.1:PORT/v1`."""
        return f"{self.url}/v1"

    def start(self) -> Self:
        """Start serving in a background thread; returns once the port is bound."""
        if self._thread is not None:
            raise RuntimeError("the server is already running")
        ready = threading.Event()
        thread = threading.Thread(
            target=self._serve, args=(ready,), name="assay-fake-openai-server", daemon=True
        )
        thread.start()
        ready.wait()
        if self._startup_error is not None:
            thread.join()
            raise self._startup_error
        self._thread = thread
        return self

    def stop(self) -> None:
        """Stop serving: stalled `timeout` replies are cut off, then the thread ends."""
        thread, loop = self._thread, self._loop
        if thread is None or loop is None:
            return
        loop.call_soon_threadsafe(self._begin_shutdown)
        thread.join()
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def _serve(self, ready: threading.Event) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            try:
                runner = loop.run_until_complete(self._start_site())
            except BaseException as exc:  # reported to the thread that called start()
                self._startup_error = exc
                return
            finally:
                ready.set()
            loop.run_forever()
            loop.run_until_complete(runner.cleanup())
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()

    async def _start_site(self) -> web.AppRunner:
        self._closing = asyncio.Event()
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat_completions)
        app.router.add_post("/chat/completions", self._chat_completions)  # a base URL without path
        app.router.add_post("/v1/messages", self._messages)
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_get("/v1/models", self._list_models)
        app.router.add_post("/{prefix:.*}/chat/completions", self._chat_completions)
        app.router.add_post("/{prefix:.*}/embeddings", self._embeddings)
        app.router.add_post("/{prefix:.*}/moderations", self._moderations)
        app.router.add_post(
            "/{prefix:.*}/publishers/anthropic/models/{model:[^/:]+}:rawPredict", self._raw_predict
        )
        # Handlers still running at shutdown are cancelled after this long.
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
        await runner.setup()
        site = web.TCPSite(runner, self._host, self._port)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._bound_port = int(runner.addresses[0][1])
        return runner

    def _begin_shutdown(self) -> None:
        assert self._closing is not None and self._loop is not None
        self._closing.set()
        self._loop.stop()

    # -- counters -------------------------------------------------------------------------------

    @property
    def request_count(self) -> int:
        """Requests received on the model endpoints, faulted or not."""
        with self._lock:
            return self._total

    @property
    def fault_counts(self) -> dict[str, int]:
        """How many requests got each fault kind."""
        with self._lock:
            return dict(self._fault_counts)

    @property
    def requests(self) -> list[dict[str, JSON]]:
        """The most recent request bodies (up to `max_recorded`), oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def seen(self) -> list[SeenRequest]:
        """Method, path, query and headers of the most recent model requests, oldest first."""
        with self._lock:
            return list(self._seen)

    def reset_counters(self) -> None:
        """Forget every counted and recorded request."""
        with self._lock:
            self._total = 0
            self._fault_counts.clear()
            self._requests.clear()
            self._seen.clear()

    # -- handlers -------------------------------------------------------------------------------

    async def _list_models(self, request: web.Request) -> web.Response:
        del request
        data = [
            {"id": m, "object": "model", "created": 0, "owned_by": "assay"} for m in self._models
        ]
        return web.json_response({"object": "list", "data": data})

    async def _chat_completions(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(request, anthropic=False)

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(request, anthropic=True)

    async def _raw_predict(self, request: web.Request) -> web.StreamResponse:
        """Claude on Vertex AI: a Messages body with `anthropic_version` and without `model`,
        which the path names instead."""
        return await self._handle(request, anthropic=True, model=request.match_info["model"])

    async def _embeddings(self, request: web.Request) -> web.StreamResponse:
        """Deterministic vectors (a hashed bag of words), one per input, in the API's shape."""
        self._record(request)
        if self._api_key is not None and not _authorised(request, self._api_key):
            return _error(401, "invalid API key", anthropic=False)
        try:
            body = json.loads(await request.read())
        except ValueError:
            return _error(400, "the request body is not valid JSON", anthropic=False)
        inputs = body.get("input") if isinstance(body, dict) else None
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not all(isinstance(i, str) for i in inputs):
            return _error(400, "`input` must be a string or a list of strings", anthropic=False)
        if not isinstance(body.get("model"), str):
            return _error(400, "`model` is required", anthropic=False)
        fault = self._choose_fault(body)
        if self.latency_ms:
            await asyncio.sleep(self.latency_ms / 1000)
        if fault is not None:
            faulty = await self._fault_response(fault, request, anthropic=False)
            if faulty is not None:
                return faulty
        tokens = sum(len(text.split()) for text in inputs)
        data = [
            {"object": "embedding", "index": i, "embedding": fake_embedding(text)}
            for i, text in enumerate(inputs)
        ]
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return web.json_response(
            {"object": "list", "data": data, "model": body["model"], "usage": usage}
        )

    async def _moderations(self, request: web.Request) -> web.StreamResponse:
        """The OpenAI moderation reply for one input, scored by the `moderation` script."""
        self._record(request)
        if self._moderation is None:
            return _error(404, "this server has no moderation endpoint", anthropic=False)
        try:
            body = json.loads(await request.read())
        except ValueError:
            return _error(400, "the request body is not valid JSON", anthropic=False)
        given = body.get("input") if isinstance(body, dict) else None
        if not isinstance(given, str):
            return _error(400, "`input` must be a string", anthropic=False)
        fault = self._choose_fault(body)
        if fault is not None:
            faulty = await self._fault_response(fault, request, anthropic=False)
            if faulty is not None:
                return faulty
        scores = {name: float(score) for name, score in self._moderation(given).items()}
        categories = {name: score >= 0.5 for name, score in scores.items()}
        result = {
            "flagged": any(categories.values()),
            "categories": categories,
            "category_scores": scores,
        }
        model = body.get("model") or "omni-moderation-latest"
        return web.json_response({"id": f"modr-{next(self._ids)}", "model": model,
                                  "results": [result]})  # fmt: skip

    def _record(self, request: web.Request) -> None:
        seen = SeenRequest(
            request.method,
            request.path,
            dict(request.query),
            {name.lower(): value for name, value in request.headers.items()},
        )
        with self._lock:
            self._seen.append(seen)

    async def _handle(
        self, request: web.Request, *, anthropic: bool, model: str | None = None
    ) -> web.StreamResponse:
        self._record(request)
        if self._api_key is not None and not _authorised(request, self._api_key):
            return _error(401, "invalid API key", anthropic=anthropic)
        try:
            body = json.loads(await request.read())
        except ValueError:
            return _error(400, "the request body is not valid JSON", anthropic=anthropic)
        if model is not None:  # Vertex's rawPredict: the model is in the path, not the body
            if not isinstance(body, dict) or "model" in body or "anthropic_version" not in body:
                message = "rawPredict takes `anthropic_version` and no `model` in the body"
                return _error(400, message, anthropic=anthropic)
            body = {**body, "model": model}
        problem = _validate(body, anthropic=anthropic)
        if problem is not None:
            return _error(400, problem, anthropic=anthropic)
        try:
            fault = self._choose_fault(body)
        except Exception as exc:
            message = f"fault script failed: {type(exc).__name__}: {exc}"
            return _error(500, message, anthropic=anthropic)
        unsupported = self._unsupported_output(body)  # counted: a real server got the request
        if unsupported is not None:
            return _error(400, unsupported, anthropic=anthropic)
        if self.latency_ms:
            await asyncio.sleep(self.latency_ms / 1000)
        if fault is not None:
            faulty = await self._fault_response(fault, request, anthropic=anthropic)
            if faulty is not None:
                return faulty
        try:
            reply = _parse_reply(self._script(body, anthropic=anthropic))
        except Exception as exc:
            message = f"reply script failed: {type(exc).__name__}: {exc}"
            return _error(500, message, anthropic=anthropic)
        number = next(self._ids)
        if anthropic:
            return web.json_response(_anthropic_message(body, reply, number))
        return web.json_response(_chat_completion(body, reply, number))

    async def _fault_response(
        self, fault: str, request: web.Request, *, anthropic: bool
    ) -> web.StreamResponse | None:
        """What an injected fault answers; None when a stalled `timeout` ends in a reply."""
        if fault == "drop":
            return _drop(request)
        if fault == "timeout":
            return _drop(request) if await self._hang() else None
        if fault == "malformed":
            return web.Response(text=_MALFORMED_BODY, content_type="application/json")
        headers = None
        if fault == "429" and self.retry_after_s is not None:
            headers = {"Retry-After": f"{self.retry_after_s:g}"}
        message = f"injected fault: HTTP {fault}"
        return _error(int(fault), message, anthropic=anthropic, headers=headers)

    def _choose_fault(self, body: dict[str, JSON]) -> str | None:
        """The fault for this request (script first, then the rates), counted and recorded."""
        fault = self._fault(body) if self._fault is not None else None
        if fault is None and self._faults:
            draw = self._rng.random()
            for kind, rate in self._faults.items():
                if draw < rate:
                    fault = kind
                    break
                draw -= rate
        if fault is not None:
            _check_kind(fault)
        with self._lock:
            self._total += 1
            self._requests.append(body)
            if fault is not None:
                self._fault_counts[fault] += 1
        return fault

    async def _hang(self) -> bool:
        """Stall like an overloaded model; True when the server is shutting down meanwhile."""
        assert self._closing is not None
        try:
            await asyncio.wait_for(self._closing.wait(), self.hang_s)
        except TimeoutError:
            return False
        return True

    def _unsupported_output(self, body: dict[str, JSON]) -> str | None:
        response_format = body.get("response_format")
        kind = response_format.get("type") if isinstance(response_format, dict) else None
        if kind is None or kind == "text" or kind in self._output_modes:
            return None
        return f"response_format type '{kind}' is not supported by this server"

    def _script(self, body: dict[str, JSON], *, anthropic: bool = False) -> Reply:
        if self._judge is not None and is_judge_request(body):
            reply = judge_reply(body, self._judge, anthropic=anthropic)
            return reply if isinstance(reply, str | dict) else str(reply)
        if self._reply is None:
            return last_user_text(body)
        if isinstance(self._reply, Mapping):
            text = last_user_text(body)
            return self._reply.get(text, text)
        return self._reply(body)


# -- protocol shapes ------------------------------------------------------------------------------


def _validate(body: JSON, *, anthropic: bool) -> str | None:
    if not isinstance(body, dict):
        return "the request body must be a JSON object"
    if not isinstance(body.get("model"), str):
        return "model: a string is required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: a non-empty list is required"
    if not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages):
        return "messages: every message must be an object with a role"
    if anthropic and not isinstance(body.get("max_tokens"), int):
        return "max_tokens: an integer is required"
    return None


def _parse_reply(reply: Reply) -> _Reply:
    if isinstance(reply, str):
        return _Reply(reply, [], None, None)
    unknown = set(reply) - _REPLY_KEYS
    if unknown:
        raise ValueError(f"unknown reply keys {sorted(unknown)}; use {sorted(_REPLY_KEYS)}")
    calls = [(str(c["name"]), c.get("arguments", {})) for c in reply.get("tool_calls") or []]
    usage = reply.get("usage")
    counted = (int(usage["prompt_tokens"]), int(usage["completion_tokens"])) if usage else None
    return _Reply(reply.get("content"), calls, counted, reply.get("finish_reason"))


def _usage(body: dict[str, JSON], reply: _Reply) -> tuple[int, int]:
    """Whitespace-separated words stand in for tokens: deterministic and easy to assert."""
    if reply.usage is not None:
        return reply.usage
    prompt = [_text(body.get("system"))]
    for message in _messages(body):
        prompt.append(_text(message.get("content")))
        prompt.extend(_text(b.get("content")) for b in _tool_result_blocks(message))
    completion = [reply.content or ""] + [_arguments_text(args) for _, args in reply.tool_calls]
    return sum(len(t.split()) for t in prompt), sum(len(t.split()) for t in completion)


def _chat_completion(body: dict[str, JSON], reply: _Reply, number: int) -> dict[str, JSON]:
    message: dict[str, JSON] = {"role": "assistant", "content": reply.content, "refusal": None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{number}_{index}",
                "type": "function",
                "function": {"name": name, "arguments": _arguments_text(args)},
            }
            for index, (name, args) in enumerate(reply.tool_calls)
        ]
    prompt_tokens, completion_tokens = _usage(body, reply)
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body["model"],
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": reply.finish_reason
                or ("tool_calls" if reply.tool_calls else "stop"),
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _anthropic_message(body: dict[str, JSON], reply: _Reply, number: int) -> dict[str, JSON]:
    content: list[JSON] = []
    if reply.content:
        content.append({"type": "text", "text": reply.content})
    for index, (name, args) in enumerate(reply.tool_calls):
        arguments = json.loads(args) if isinstance(args, str) else args
        content.append(
            {"type": "tool_use", "id": f"toolu_{number}_{index}", "name": name, "input": arguments}
        )
    input_tokens, output_tokens = _usage(body, reply)
    return {
        "id": f"msg_{number}",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": content,
        "stop_reason": reply.finish_reason or ("tool_use" if reply.tool_calls else "end_turn"),
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def _error(
    status: int, message: str, *, anthropic: bool, headers: dict[str, str] | None = None
) -> web.Response:
    if anthropic:
        kind = _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
        body: dict[str, JSON] = {"type": "error", "error": {"type": kind, "message": message}}
    else:
        kind = "rate_limit_error" if status == 429 else "server_error"
        if status < 500 and status != 429:
            kind = "invalid_request_error"
        body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return web.json_response(body, status=status, headers=headers)


def _drop(request: web.Request) -> web.Response:
    """Close the connection without a response, as a crashing proxy would."""
    transport = request.transport
    if transport is not None:
        transport.abort()
    # aiohttp writes nothing to an aborted transport; the return value only satisfies the router.
    return web.Response(status=500)


def _authorised(request: web.Request, key: str) -> bool:
    """The key as OpenAI (`Authorization: Bearer`), Anthropic (`x-api-key`) or Azure (`api-key`)
    clients send it."""
    headers = request.headers
    return headers.get("Authorization") == f"Bearer {key}" or key in (
        headers.get("x-api-key"),
        headers.get("api-key"),
    )


def _check_kind(kind: str) -> None:
    if kind in _SPECIAL_FAULTS or (kind.isdigit() and 400 <= int(kind) <= 599):
        return
    raise ValueError(
        f"unknown fault kind {kind!r}; use an HTTP status 400–599 (e.g. '429', '500') "
        f"or one of {', '.join(_SPECIAL_FAULTS)}"
    )


def _messages(body: Mapping[str, JSON]) -> list[dict[str, JSON]]:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return []
    return [m for m in messages if isinstance(m, dict)]


def _text(content: JSON) -> str:
    """Text of a message content: a string, or the text parts/blocks of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def _tool_result_blocks(message: Mapping[str, JSON]) -> list[dict[str, JSON]]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def _arguments_text(args: JSON) -> str:
    return args if isinstance(args, str) else json.dumps(args)


# -- command line ---------------------------------------------------------------------------------


def _fault_rate(text: str) -> tuple[str, float]:
    kind, sep, rate = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected KIND=RATE (e.g. 429=0.05), got {text!r}")
    try:
        _check_kind(kind)
        return kind, float(rate)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _judge_script(text: str) -> dict[str, JSON]:
    try:
        script = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--judge takes a JSON object: {exc}") from None
    if not isinstance(script, dict):
        raise argparse.ArgumentTypeError(f"--judge takes a JSON object, not {text!r}")
    return script


def main(argv: Sequence[str] | None = None) -> None:
    """Serve until SIGINT or SIGTERM; print the base URL on stdout once listening."""
    parser = argparse.ArgumentParser(
        prog="python -m assay.testing.openai_server",
        description="A local fake of the OpenAI Chat Completions API (echoes the last message).",
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind")
    parser.add_argument("--port", type=int, default=0, help="port to bind (0: pick a free one)")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="delay of every reply")
    parser.add_argument(
        "--fault",
        type=_fault_rate,
        action="append",
        default=[],
        metavar="KIND=RATE",
        help="inject a fault kind (429, 500, timeout, malformed, drop…) at a rate; repeatable",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the fault RNG")
    parser.add_argument("--retry-after-s", type=float, default=0.05, help="Retry-After of 429s")
    parser.add_argument("--hang-s", type=float, default=30.0, help="stall of a timeout fault")
    parser.add_argument(
        "--judge",
        type=_judge_script,
        metavar="JSON",
        help="scripted judge mode: answer assay's judge requests with these reply fields, e.g. "
        "'{\"score\": 0.9}' (fields left out get type defaults)",
    )
    args = parser.parse_args(argv)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    try:
        server = FakeOpenAIServer(
            latency_ms=args.latency_ms,
            faults=dict(args.fault),
            seed=args.seed,
            retry_after_s=args.retry_after_s,
            hang_s=args.hang_s,
            host=args.host,
            port=args.port,
            judge=args.judge,
        ).start()
    except (OSError, ValueError) as exc:
        parser.exit(2, f"error: {exc}\n")
    try:
        print(server.base_url, flush=True)
        stop.wait()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
