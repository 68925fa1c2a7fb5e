"""The judge proxy's server (see assay.graders._judge_proxy for the protocol), apart from its
option model so that loading a suite does not import aiohttp's server."""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Self

from aiohttp import web

from assay.judge import JudgeClient, JudgeError
from assay.results import JSON, TokenUsage, add_usage

__all__ = ["JudgeProxyServer"]


@dataclass
class _Spend:
    calls: int = 0
    usage: TokenUsage | None = None
    cost_usd: float | None = None
    errors: list[str] = field(default_factory=list)


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class JudgeProxyServer:
    """The proxy of one grader run: `async with JudgeProxyServer(client, 10) as proxy:` then
    `proxy.env` for the program's environment; `proxy.spend` afterwards."""

    def __init__(self, client: JudgeClient, max_calls: int) -> None:
        self.client = client
        self.max_calls = max_calls
        self.token = secrets.token_hex(32)
        self.spend = _Spend()
        self._runner: web.AppRunner | None = None
        self.url = ""

    @property
    def env(self) -> dict[str, str]:
        """The variables that point the grading program at this proxy."""
        return {
            "ASSAY_JUDGE_PROXY_URL": self.url,
            "ASSAY_JUDGE_PROXY_TOKEN": self.token,
            "AGENTV_TARGET_PROXY_URL": self.url,
            "AGENTV_TARGET_PROXY_TOKEN": self.token,
            "AGENTV_PROVIDER_PROXY_URL": self.url,
            "AGENTV_PROVIDER_PROXY_TOKEN": self.token,
        }

    async def __aenter__(self) -> Self:
        app = web.Application(middlewares=[self._auth])
        app.router.add_get("/info", self._info)
        app.router.add_post("/invoke", self._invoke)
        app.router.add_post("/invokeBatch", self._invoke_batch)
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)  # loopback only: the token is the lock
        await site.start()
        server = site._server  # aiohttp exposes the bound port only here
        assert server is not None
        port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{port}"
        self._runner = runner
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    @web.middleware
    async def _auth(
        self,
        request: web.Request,
        handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
    ) -> web.StreamResponse:
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return web.json_response({"error": "Unauthorized"}, status=401)
        try:
            return await handler(request)
        except _Refused as exc:
            return web.json_response({"error": str(exc)}, status=exc.status)

    async def _info(self, request: web.Request) -> web.Response:
        del request
        return web.json_response(
            {
                "targetName": self.client.model,
                "providerLabel": self.client.model,
                "maxCalls": self.max_calls,
                "callCount": self.spend.calls,
                "availableTargets": [self.client.model],
                "availableProviderLabels": [self.client.model],
            }
        )

    async def _invoke(self, request: web.Request) -> web.Response:
        if self.spend.calls >= self.max_calls:
            raise _Refused(429, f"Max calls exceeded (limit: {self.max_calls})")
        body = await _body(request)
        self._check(body)
        try:
            return web.json_response(await self._ask(body))
        except JudgeError as exc:
            raise _Refused(500, str(exc)) from None

    async def _invoke_batch(self, request: web.Request) -> web.Response:
        body = await _body(request)
        asked = body.get("requests")
        if not isinstance(asked, list):
            raise _Refused(400, "Missing required field: requests (array)")
        if self.spend.calls + len(asked) > self.max_calls:
            raise _Refused(
                429,
                f"Batch would exceed max calls (current: {self.spend.calls}, batch: "
                f"{len(asked)}, limit: {self.max_calls})",
            )
        responses: list[JSON] = []
        for item in asked:
            try:
                one = item if isinstance(item, dict) else {}
                self._check(one)
                responses.append(await self._ask(one))
            except (_Refused, JudgeError) as exc:
                responses.append({"output": [], "rawText": f"Error: {exc}"})
        return web.json_response({"responses": responses})

    def _check(self, body: dict[str, JSON]) -> None:
        question = body.get("question")
        if not isinstance(question, str) or not question:
            raise _Refused(400, "Missing required field: question")
        for key in ("target", "provider"):
            named = body.get(key)
            if named is not None and named != self.client.model:
                raise _Refused(
                    400,
                    f"Unknown {key} '{named}'. Available: {self.client.model} (assay's proxy "
                    "serves the run's judge only)",
                )

    async def _ask(self, body: dict[str, JSON]) -> dict[str, JSON]:
        question = str(body["question"])
        system = body.get("systemPrompt")
        self.spend.calls += 1
        try:
            text, usage, cost = await self.client.chat(
                question, system if isinstance(system, str) else None, label="judge-proxy"
            )
        except JudgeError as exc:
            self.spend.errors.append(str(exc))
            self._charge(exc.token_usage, exc.cost_usd)
            raise
        self._charge(usage, cost)
        reply: dict[str, JSON] = {
            "output": [{"role": "assistant", "content": text}],
            "rawText": text,
        }
        if usage is not None:
            reply["tokenUsage"] = {"input": usage.input, "output": usage.output}
        return reply

    def _charge(self, usage: TokenUsage | None, cost: float | None) -> None:
        self.spend.usage = add_usage(self.spend.usage, usage)
        if cost is not None:
            self.spend.cost_usd = (self.spend.cost_usd or 0.0) + cost


async def _body(request: web.Request) -> dict[str, JSON]:
    try:
        data = await request.json()
    except ValueError:
        raise _Refused(400, "the request body is not JSON") from None
    if not isinstance(data, dict):
        raise _Refused(400, "the request body must be a JSON object")
    return data
