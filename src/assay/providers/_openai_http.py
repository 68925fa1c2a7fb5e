"""Every OpenAI-compatible endpoint (OpenAI, Azure, OpenRouter, Groq, vLLM, Ollama, ...) spoken
directly over aiohttp.

The Chat Completions and embeddings protocol is public and small: a JSON body POSTed with a
bearer key (Azure: an `api-key` header, a deployment path and an `api-version` query), a JSON
reply, an HTTP status on failure. The `openai` SDK on its aiohttp transport spent ~650 µs of CPU
per request building request and response models around that (SPEC §9); one shared
`aiohttp.ClientSession` per provider spends what a bare client does. Failures map onto the
`ProviderError` tree with the SDK's kinds and messages, so stored errors read as before.
"""

from __future__ import annotations

import contextlib
import json
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from assay._version import __version__
from assay.errors import UsageError
from assay.providers._base import Embeddings, Provider, ProviderConfig
from assay.providers._errors import (
    MalformedReplyError,
    ProviderError,
    ProviderStatusError,
    RateLimitError,
)
from assay.providers._json_reply import json_reply
from assay.providers._sdk_errors import connection_error, retry_after_s, timeout_error
from assay.providers._wire_openai import read_usage
from assay.results import JSON

if TYPE_CHECKING:
    import aiohttp

__all__ = ["DEFAULT_TIMEOUT_S", "OpenAICompatibleProvider", "status_kind"]

_encode_body = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""A request body as compact JSON (one encoder: `json.dumps` with options builds one per
request)."""

DEFAULT_TIMEOUT_S = 600.0
"""A request's timeout when none is configured (the `openai` SDK's default: 10 minutes)."""
_CONNECT_TIMEOUT_S = 5.0
"""Connecting may take this long under the default timeout (the SDK's default too)."""
_MAX_CONNECTIONS = 1000
"""Open connections per provider (the SDK's limit); the callers' limiters bound them first."""

_STATUS_KINDS = {
    400: "BadRequestError",
    401: "AuthenticationError",
    403: "PermissionDeniedError",
    404: "NotFoundError",
    409: "ConflictError",
    422: "UnprocessableEntityError",
    429: "RateLimitError",
}


def status_kind(status: int) -> str:
    """The failure's kind for an HTTP error status: the `openai` SDK's exception class name,
    so a stored error type reads the same as before the SDK was bypassed."""
    if status >= 500:
        return "InternalServerError"
    return _STATUS_KINDS.get(status, "APIStatusError")


class OpenAICompatibleProvider(Provider):
    """Chat Completions and embeddings at one OpenAI-compatible endpoint, over one
    `aiohttp.ClientSession` shared by every concurrent call (opened on the first call, inside
    the running loop)."""

    def __init__(self, config: ProviderConfig, base_url: str) -> None:
        super().__init__(config, base_url)
        key = config.api_key()
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"assay/{__version__}",
        }
        query = ""
        if config.provider == "azure":
            if not config.api_version:
                raise UsageError(
                    f"{config.who}: the azure provider needs `api_version` (e.g. 2024-10-21)"
                )
            headers["api-key"] = key
            query = "?" + urllib.parse.urlencode({"api-version": config.api_version})
        else:
            headers["Authorization"] = f"Bearer {key}"
        self._headers = headers
        # Absolute URLs, joined as the SDK joined a path to its base URL (one trailing slash).
        root = base_url.rstrip("/")
        self._chat_url = f"{root}/chat/completions{query}"
        self._embeddings_url = f"{root}/embeddings{query}"
        self._moderations_url = f"{root}/moderations{query}"
        self._session: aiohttp.ClientSession | None = None
        self._proxy: str | None = None

    async def complete(
        self, body: dict[str, JSON], *, metadata: Mapping[str, JSON] | None = None
    ) -> dict[str, JSON]:
        """One Chat Completions request; the reply as parsed JSON."""
        del metadata
        return await self._post(self._chat_url, body)

    async def embed(self, model: str, inputs: Sequence[str]) -> Embeddings:
        """`POST /embeddings`; the vectors are put back in input order by their `index`."""
        reply = await self._post(self._embeddings_url, {"model": model, "input": list(inputs)})
        data = reply.get("data")
        vectors: list[tuple[int, list[float]]] = []
        for position, item in enumerate(data if isinstance(data, list) else []):
            vector = item.get("embedding") if isinstance(item, dict) else None
            if not isinstance(vector, list) or not all(isinstance(x, int | float) for x in vector):
                break
            index = item.get("index", position)
            vectors.append((index if isinstance(index, int) else position, vector))
        if len(vectors) != len(inputs):
            raise MalformedReplyError(
                f"the embeddings reply has {len(vectors)} vectors for {len(inputs)} inputs: "
                f"{str(reply)[:200]}",
                kind="MalformedResponse",
            )
        return Embeddings([v for _, v in sorted(vectors)], read_usage(reply))

    async def moderate(self, model: str, text: str) -> dict[str, JSON]:
        """`POST /moderations` with one input; the reply as parsed JSON."""
        return await self._post(self._moderations_url, {"model": model, "input": text})

    async def prepare(self) -> None:
        """Import aiohttp (~80 ms) and open the session now."""
        if self._session is None:
            self._open_session()

    async def close(self) -> None:
        """Close the session and its connections."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def _post(self, url: str, body: dict[str, JSON]) -> dict[str, JSON]:
        """POST `body` as JSON to `url`; the reply object, or the failure as a `ProviderError`."""
        import aiohttp

        session = self._session or self._open_session()
        data = _encode_body(body).encode()
        try:
            async with session.post(
                url, data=data, headers=self._headers, proxy=self._proxy
            ) as response:
                raw = await response.read()
                if not 200 <= response.status < 300:
                    raise self._status_error(response.status, raw, response.headers)
        except TimeoutError as exc:  # aiohttp's timeouts are TimeoutErrors too
            raise timeout_error(self.config.timeout_s) from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise connection_error(self.base_url, exc, name_root=True) from exc
        return json_reply(raw)

    def _open_session(self) -> aiohttp.ClientSession:
        """The shared session. The proxy (`HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY`, as the SDK
        honoured them) is looked up once here rather than on every request."""
        import aiohttp
        from aiohttp.helpers import get_env_proxy_for_url
        from yarl import URL

        timeout_s = self.config.timeout_s
        timeout = (
            aiohttp.ClientTimeout(total=DEFAULT_TIMEOUT_S, connect=_CONNECT_TIMEOUT_S)
            if timeout_s is None
            else aiohttp.ClientTimeout(total=timeout_s)
        )
        try:
            proxy, _ = get_env_proxy_for_url(URL(self._chat_url))
            self._proxy = str(proxy)
        except LookupError:
            self._proxy = None
        session = aiohttp.ClientSession(
            timeout=timeout,
            connector=aiohttp.TCPConnector(limit=_MAX_CONNECTIONS),
        )
        self._session = session
        return session

    def _status_error(self, status: int, raw: bytes, headers: Mapping[str, str]) -> ProviderError:
        """The error for an HTTP error status, with the server's own message."""
        text = f"HTTP {status}: {_server_message(status, raw)}"
        if status == 429:
            return RateLimitError(
                f"rate limited (HTTP 429): {_server_message(status, raw)}",
                status=429,
                kind="RateLimitError",
                retry_after_s=retry_after_s(headers),
            )
        api_key_env = self.config.api_key_env
        if status in (401, 403) and api_key_env is not None:
            text += f" (the API key is read from ${api_key_env})"
        return ProviderStatusError(text, status=status, kind=status_kind(status))


def _server_message(status: int, raw: bytes) -> str:
    """`error.message` of an error body; otherwise the body itself (its first 200 characters:
    an HTML error page from a proxy can be long), as the SDK quoted a JSON one."""
    text = raw.decode("utf-8", "replace").strip()
    body: object = text
    with contextlib.suppress(ValueError):
        body = json.loads(text)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        body = inner
    return f"Error code: {status} - {str(body)[:200]}"
