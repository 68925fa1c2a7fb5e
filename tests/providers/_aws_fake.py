"""A local fake of Bedrock Runtime (Converse) and SageMaker Runtime (InvokeEndpoint).

It runs an aiohttp server in a background thread, checks that every request carries a SigV4
`Authorization` header whose signature it recomputes with botocore from the bytes it received
(so a path re-encoded in transit, a changed body or the wrong service or region fails), records
what it saw, and answers from a script: one reply per request, the last one repeating. A reply
is a JSON body (status 200), raw bytes (an event stream, see `event_stream`), or
`(status, body, headers)` for an error.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import threading
from dataclasses import dataclass
from typing import Any

from aiohttp import web

ACCESS_KEY = "AKIDASSAYTEST"
SECRET_KEY = "assay-test-secret"

Reply = dict[str, Any] | list[Any] | bytes | tuple[int, dict[str, Any], dict[str, str]]


@dataclass
class Seen:
    """One request the fake received."""

    path: str
    headers: dict[str, str]
    body: Any
    scope: str
    """`<date>/<region>/<service>/aws4_request` of the Authorization header."""


class FakeAws:
    """`with FakeAws(replies) as aws:` serves on `aws.url` until the block ends."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)
        self.seen: list[Seen] = []
        self.problems: list[str] = []
        self.url = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> FakeAws:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._runner is not None
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        app = web.Application()
        app.router.add_post("/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app)
        loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        self._ready.set()
        loop.run_forever()
        loop.close()

    async def _handle(self, request: web.Request) -> web.Response:
        raw = await request.read()
        headers = dict(request.headers)
        scope = self._check_signature(request.method, request.raw_path, headers, raw)
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw.decode()
        self.seen.append(Seen(request.raw_path, headers, body, scope))
        reply = self.replies[min(len(self.seen) - 1, len(self.replies) - 1)]
        if isinstance(reply, tuple):
            status, payload, extra = reply
            return web.json_response(payload, status=status, headers=extra)
        if isinstance(reply, bytes):
            return web.Response(body=reply, content_type="application/vnd.amazon.eventstream")
        return web.json_response(reply)

    def _check_signature(
        self, method: str, raw_path: str, headers: dict[str, str], raw: bytes
    ) -> str:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        auth = headers.get("Authorization", "")
        if not auth.startswith("AWS4-HMAC-SHA256 Credential="):
            self.problems.append(f"no SigV4 Authorization header: {auth!r}")
            return ""
        fields = dict(
            part.strip().split("=", 1) for part in auth.removeprefix("AWS4-HMAC-SHA256 ").split(",")
        )
        key, _, scope = fields["Credential"].partition("/")
        _, region, service, _ = scope.split("/")
        signed = fields["SignedHeaders"].split(";")
        lower = {k.lower(): v for k, v in headers.items()}
        request = AWSRequest(
            method=method,
            url=f"http://{lower['host']}{raw_path}",
            data=raw,
            headers={name: lower[name] for name in signed if name != "host"},
        )
        request.context["timestamp"] = lower["x-amz-date"]
        signer = SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), service, region)
        expected = signer.signature(
            signer.string_to_sign(request, signer.canonical_request(request)), request
        )
        if key != ACCESS_KEY or fields["Signature"] != expected:
            self.problems.append(f"bad signature for {raw_path}: {auth}")
        return scope


def converse_reply(
    text: str | None = None, *, tool: tuple[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """A Converse reply with `text` and/or one tool use, and token usage."""
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"text": text})
    if tool is not None:
        content.append({"toolUse": {"toolUseId": "tooluse_1", "name": tool[0], "input": tool[1]}})
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": "tool_use" if tool else "end_turn",
        "usage": {"inputTokens": 11, "outputTokens": 7, "totalTokens": 18},
        "metrics": {"latencyMs": 5},
    }


def event_stream(*messages: tuple[dict[str, str], bytes]) -> bytes:
    """AWS event-stream bytes: each message its string headers and payload, with the prelude
    and message CRC32s the format requires."""
    out = b""
    for headers, payload in messages:
        encoded = b"".join(
            bytes([len(name)]) + name.encode() + b"\x07" + len(value).to_bytes(2, "big")
            + value.encode()
            for name, value in headers.items()
        )  # fmt: skip
        total = 12 + len(encoded) + len(payload) + 4
        prelude = total.to_bytes(4, "big") + len(encoded).to_bytes(4, "big")
        prelude += binascii.crc32(prelude).to_bytes(4, "big")
        body = prelude + encoded + payload
        out += body + binascii.crc32(body).to_bytes(4, "big")
    return out


def agent_chunk(text: str, *, cited: str | None = None) -> tuple[dict[str, str], bytes]:
    """One InvokeAgent `chunk` event (with a cited passage when given)."""
    chunk: dict[str, Any] = {"bytes": base64.b64encode(text.encode()).decode()}
    if cited is not None:
        chunk["attribution"] = {
            "citations": [{"retrievedReferences": [{"content": {"text": cited}}]}]
        }
    headers = {
        ":message-type": "event",
        ":event-type": "chunk",
        ":content-type": "application/json",
    }
    return headers, json.dumps(chunk).encode()
