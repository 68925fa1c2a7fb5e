"""The `http` target: send each case to any JSON HTTP API and pick the reply with JSONPath.

For systems that are neither an OpenAI-compatible endpoint nor importable Python: an agent
behind a web service, a gateway, a serverless function. The request body is a JSON template
rendered with Jinja2's sandbox, and the reply's text, tool calls and token usage are selected
with RFC 9535 JSONPath expressions that are checked when the suite loads.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Self

from pydantic import Field, PrivateAttr, field_validator, model_validator

from assay._strict_model import StrictModel
from assay.errors import TargetError
from assay.results import JSON, TargetOutput
from assay.targets._base import Target, TargetRequest
from assay.targets._output import parse_target_output, with_duration

if TYPE_CHECKING:
    import aiohttp
    from jinja2 import Template
    from jinja2.environment import TemplateExpression
    from jinja2.sandbox import SandboxedEnvironment
    from jsonpath_rfc9535 import JSONPathQuery

__all__ = ["HttpTarget", "TokenUsagePaths"]

# A string that is one `{{ expression }}` and nothing else keeps the expression's JSON type.
_WHOLE_EXPRESSION = re.compile(r"\{\{-?(?P<expr>(?:(?!\{\{|\}\}).)*?)-?\}\}", re.DOTALL)
_SNIPPET_CHARS = 300
_SHOWN_KEYS = 20
_HTTP_ERROR = 400
_RETRYABLE_STATUSES = frozenset({408})


class TokenUsagePaths(StrictModel):
    """Where the token counts are in the response, e.g. `$.usage.prompt_tokens`."""

    input: str | None = None
    """JSONPath of the input (prompt) token count."""
    output: str | None = None
    """JSONPath of the output (completion) token count."""

    @field_validator("input", "output")
    @classmethod
    def _check_path(cls, value: str | None) -> str | None:
        return None if value is None else _checked_path(value)

    @model_validator(mode="after")
    def _check_any(self) -> Self:
        if self.input is None and self.output is None:
            raise ValueError("give the JSONPath of `input` and/or `output` tokens")
        return self


class _Client:
    """The target's HTTP session. It is run state, not configuration, so any two compare equal
    and a target's equality does not depend on whether `setup` has run."""

    def __init__(self) -> None:
        self.session: aiohttp.ClientSession | None = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Client)

    def __hash__(self) -> int:
        return hash(_Client)


@dataclass(frozen=True)
class _Reply:
    status: int
    reason: str
    retry_after: str | None
    body: bytes


class HttpTarget(Target):
    """Sends the case as JSON to `url` and reads the reply's text from the JSON response.

    String values of `body` (and `url`) are Jinja2 templates with `prompt`, `input`,
    `messages`, `case_id`, `metadata` and `repeat_index`; a string that is exactly one
    `{{ expression }}`, such as `"{{ messages }}"`, is replaced by the value itself, so lists
    and numbers pass through with their JSON type.
    """

    type: Literal["http"]
    """Target type discriminator."""
    url: str
    """The endpoint, `http://` or `https://`; may use the template variables."""
    method: Literal["POST", "PUT", "GET"] = "POST"
    """HTTP method. A GET sends no body."""
    body: JSON = None
    """The JSON body template. Without it, POST and PUT send the case mapping (`id`, `input`,
    `messages`, `metadata`, `repeat_index`) that python and command targets receive."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra request headers, e.g. `Authorization: "Bearer ${API_TOKEN}"`."""
    output_path: str = "$.output"
    """JSONPath (RFC 9535) of the reply text. A non-string value is used as compact JSON;
    several matches are joined."""
    tool_calls_path: str | None = None
    """JSONPath of the tool calls: a list, or one node per call. Each is `{tool, args, output,
    duration_ms}`, OpenAI's `{id, function: {name, arguments}}` or `{name, input | arguments}`.
    Matching nothing means no tool was called."""
    context_path: str | None = None
    """JSONPath of the passages the service retrieved (its runtime `context`): a list, or one
    node per passage; each a string or `{id, text, score}`. Matching nothing means none."""
    token_usage_path: TokenUsagePaths | None = None
    """JSONPaths of the token counts: `{input: "$.usage.prompt_tokens", output: ...}`."""
    timeout_s: Annotated[float, Field(gt=0)] = 120.0
    """Give up on a request after this many seconds (a retryable error)."""

    _client: _Client = PrivateAttr(default_factory=_Client)

    @field_validator("method", mode="before")
    @classmethod
    def _upper_method(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"'{value}' is not an http:// or https:// URL")
        _check_templates(value, "url")
        return value

    @field_validator("body")
    @classmethod
    def _check_body(cls, value: JSON) -> JSON:
        _check_templates(value, "body")
        return value

    @field_validator("output_path", "tool_calls_path", "context_path")
    @classmethod
    def _check_path(cls, value: str | None) -> str | None:
        return None if value is None else _checked_path(value)

    @model_validator(mode="after")
    def _check_get_has_no_body(self) -> Self:
        if self.method == "GET" and self.body is not None:
            raise ValueError("a GET request sends no body; use POST or PUT, or template the url")
        return self

    def describe(self) -> str:
        """The method and URL template, e.g. `http POST https://agent.example/run`."""
        return f"http {self.method} {self.url}"

    async def setup(self, base_dir: Path) -> None:
        """Open the HTTP session that every case of the run shares (connection reuse)."""
        del base_dir
        if self._client.session is None or self._client.session.closed:
            self._client.session = self._new_session()

    async def teardown(self) -> None:
        """Close the session opened by `setup`."""
        session, self._client.session = self._client.session, None
        if session is not None:
            await session.close()

    def cache_key(self, request: TargetRequest) -> dict[str, JSON] | None:
        """The rendered request: provider `http`, url, method and body (headers hold secrets).

        None when a template fails to render, so that `call` reports the error for the case.
        """
        try:
            return {
                "provider": "http",
                "url": self._render_url(request),
                "method": self.method,
                "body": self._render_body(request),
            }
        except TargetError:
            return None

    async def call(self, request: TargetRequest) -> TargetOutput:
        """Send the case and parse the JSON response.

        Raises:
            TargetError: The body could not be rendered, the request failed (429, 5xx, 408,
                timeouts and connection errors are retryable; other statuses are not), the
                response is not JSON, or a path selects nothing or a value of the wrong type.
        """
        url = self._render_url(request)
        body = self._render_body(request)
        started = time.perf_counter()
        session = self.run_state("_client", _Client).session
        if session is not None and not session.closed:
            reply = await self._send(session, url, body)
        else:
            # Called without `setup` (direct library use): a session for this call only.
            async with self._new_session() as temporary:
                reply = await self._send(temporary, url, body)
        elapsed_ms = (time.perf_counter() - started) * 1000
        where = f"{self.method} {url}"
        _raise_for_status(reply, where)
        try:
            data: JSON = json.loads(reply.body)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise TargetError(
                f"the response of {where} is not JSON ({exc}): {_snippet(reply.body)}",
                kind="HTTPResponseError",
            ) from None
        return with_duration(self._parse(data, where), elapsed_ms)

    def _new_session(self) -> aiohttp.ClientSession:
        import aiohttp

        return aiohttp.ClientSession(
            headers=self.headers, timeout=aiohttp.ClientTimeout(total=self.timeout_s)
        )

    async def _send(self, session: aiohttp.ClientSession, url: str, body: JSON) -> _Reply:
        import aiohttp

        where = f"{self.method} {url}"
        options: dict[str, JSON] = {} if self.method == "GET" else {"json": body}
        try:
            async with session.request(self.method, url, **options) as response:
                return _Reply(
                    status=response.status,
                    reason=response.reason or "",
                    retry_after=response.headers.get("Retry-After"),
                    body=await response.read(),
                )
        except TimeoutError:
            raise TargetError(
                f"{where} timed out after {self.timeout_s:g}s", kind="TimeoutError", retryable=True
            ) from None
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
            raise TargetError(
                f"{where} failed: {exc or type(exc).__name__}",
                kind="ConnectionError",
                retryable=True,
            ) from None
        except aiohttp.ClientError as exc:
            raise TargetError(f"{where} failed: {exc}", kind=type(exc).__name__) from None

    def _render_url(self, request: TargetRequest) -> str:
        return str(_render(self.url, _context(request), "url"))

    def _render_body(self, request: TargetRequest) -> JSON:
        if self.method == "GET":
            return None
        if self.body is None:
            return request.as_mapping()
        return _render(self.body, _context(request), "body")

    def _parse(self, data: JSON, where: str) -> TargetOutput:
        texts = [_as_text(value) for value in _select(data, self.output_path, "output_path", where)]
        reply: dict[str, JSON] = {"output": "".join(texts)}
        if self.tool_calls_path is not None:
            found = _query(self.tool_calls_path).find(data).values()
            reply["tool_calls"] = [_tool_call(node) for node in _flatten(found)]
        if self.context_path is not None:
            reply["context"] = _flatten(_query(self.context_path).find(data).values())
        if self.token_usage_path is not None:
            usage: dict[str, JSON] = {}
            for name in ("input", "output"):
                path = getattr(self.token_usage_path, name)
                if path is not None:
                    label = f"token_usage_path.{name}"
                    usage[name] = _token_count(_select(data, path, label, where)[0], label, path)
            reply["token_usage"] = usage
        return parse_target_output(reply, source=f"http target ({where})")


@lru_cache(maxsize=1)
def _environment() -> SandboxedEnvironment:
    """The sandbox: suite files are shared, so templates must not reach Python internals."""
    from jinja2 import StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    environment = SandboxedEnvironment(
        undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True
    )
    # JSON bodies, not HTML: the built-in `tojson` would escape `<`, `>` and `&`.
    environment.filters["tojson"] = lambda value: json.dumps(value, ensure_ascii=False)
    return environment


@lru_cache(maxsize=512)
def _template(source: str) -> Template:
    return _environment().from_string(source)


@lru_cache(maxsize=512)
def _expression(source: str) -> TemplateExpression:
    return _environment().compile_expression(source, undefined_to_none=False)


@lru_cache(maxsize=256)
def _query(path: str) -> JSONPathQuery:
    import jsonpath_rfc9535

    return jsonpath_rfc9535.compile(path)


def _checked_path(path: str) -> str:
    from jsonpath_rfc9535 import JSONPathError

    try:
        _query(path)
    except JSONPathError as exc:
        raise ValueError(f"invalid JSONPath '{path}': {exc}") from None
    return path


def _check_templates(value: JSON, where: str) -> None:
    """Compile every template in a body so a syntax error is reported when the suite loads."""
    from jinja2 import TemplateSyntaxError

    for path, text in _strings(value, where):
        whole = _WHOLE_EXPRESSION.fullmatch(text)
        try:
            if whole:
                _expression(whole["expr"])
            else:
                _template(text)
        except TemplateSyntaxError as exc:
            raise ValueError(f"{path}: template syntax error: {exc.message}") from None


def _strings(value: JSON, path: str) -> Iterable[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _strings(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{path}[{index}]")


def _context(request: TargetRequest) -> dict[str, JSON]:
    return {**request.as_mapping(), "case_id": request.case_id, "prompt": request.prompt}


def _render(value: JSON, context: dict[str, JSON], path: str) -> JSON:
    """Render the templates in a JSON value; raises TargetError naming the failing location."""
    from jinja2 import TemplateError, Undefined

    if isinstance(value, Mapping):
        return {key: _render(item, context, f"{path}.{key}") for key, item in value.items()}
    if isinstance(value, list):
        return [_render(item, context, f"{path}[{i}]") for i, item in enumerate(value)]
    if not isinstance(value, str):
        return value
    try:
        whole = _WHOLE_EXPRESSION.fullmatch(value)
        if whole is None:
            return _template(value).render(context)
        result = _expression(whole["expr"])(**context)
        if isinstance(result, Undefined):
            str(result)  # StrictUndefined raises UndefinedError naming what is missing
        return _jsonable(result)
    except TemplateError as exc:
        raise TargetError(
            f"http target: cannot render {path} {value!r}: {exc}", kind="TemplateError"
        ) from None


def _jsonable(value: object) -> JSON:
    """A template value as JSON: filters may return tuples, generators or markup strings."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Mapping):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, Iterable):
        return [_jsonable(item) for item in value]
    return str(value)


def _raise_for_status(reply: _Reply, where: str) -> None:
    status = reply.status
    if status < _HTTP_ERROR:
        return
    head = f"{where} returned HTTP {status}{f' {reply.reason}' if reply.reason else ''}"
    if status == 429:
        retry_after = _retry_after(reply.retry_after)
        hint = f"; retry after {retry_after:g}s" if retry_after is not None else ""
        raise TargetError(
            f"{head} (rate limited){hint}",
            kind="RateLimitError",
            rate_limited=True,
            retry_after_s=retry_after,
        )
    retryable = status >= 500 or status in _RETRYABLE_STATUSES
    raise TargetError(
        f"{head}: {_snippet(reply.body)}", kind="HTTPStatusError", retryable=retryable
    )


def _retry_after(value: str | None) -> float | None:
    """`Retry-After` in seconds: either delay-seconds or an HTTP-date (RFC 9110 §10.2.3)."""
    if not value or not value.strip():
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            moment = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        seconds = (moment - datetime.now(UTC)).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _snippet(body: bytes) -> str:
    text = " ".join(body.decode("utf-8", errors="replace").split())
    if not text:
        return "(empty body)"
    return text if len(text) <= _SNIPPET_CHARS else text[:_SNIPPET_CHARS] + "…"


def _select(data: JSON, path: str, label: str, where: str) -> list[JSON]:
    values = _query(path).find(data).values()
    if not values:
        raise TargetError(
            f"{label} '{path}' matched nothing in the response of {where}; {_shape(data)}",
            kind="HTTPResponseError",
        )
    return values


def _shape(data: JSON) -> str:
    """What the response holds, to help fix a path that matched nothing."""
    if isinstance(data, Mapping):
        if not data:
            return "the response is an empty object"
        keys = [str(key) for key in data]
        shown = ", ".join(keys[:_SHOWN_KEYS])
        more = f" and {len(keys) - _SHOWN_KEYS} more" if len(keys) > _SHOWN_KEYS else ""
        return f"its top-level keys are: {shown}{more}"
    if isinstance(data, list):
        return f"the response is an array of {len(data)} items"
    kind = "null" if data is None else type(data).__name__
    return f"the response is a JSON {kind}: {_snippet(json.dumps(data).encode())}"


def _as_text(value: JSON) -> str:
    if value is None:
        return ""  # e.g. OpenAI's `content: null` when the model only called tools
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _flatten(nodes: list[JSON]) -> list[JSON]:
    """One list of calls from a path selecting the list itself or one node per call."""
    calls: list[JSON] = []
    for node in nodes:
        if isinstance(node, list):
            calls.extend(node)
        elif node is not None:
            calls.append(node)
    return calls


def _tool_call(node: JSON) -> JSON:
    """Rename the `{name, input | arguments | args}` form (Anthropic `tool_use` blocks, Gemini
    `functionCall`) to assay's `{tool, args}`; other forms are validated as they are."""
    if not isinstance(node, Mapping) or "name" not in node or {"tool", "function"} & set(node):
        return node
    args = next((node[key] for key in ("input", "arguments", "args") if key in node), None)
    if isinstance(args, str):
        # An invalid string is left as it is, for validation to report.
        with contextlib.suppress(json.JSONDecodeError):
            args = json.loads(args) if args.strip() else None
    call: dict[str, JSON] = {"tool": node["name"], "args": args if args is not None else {}}
    for key in ("output", "duration_ms"):
        if key in node:
            call[key] = node[key]
    return call


def _token_count(value: JSON, label: str, path: str) -> int:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and math.isfinite(value) and value >= 0 and float(value).is_integer():
        return int(value)
    raise TargetError(
        f"{label} '{path}' selected {value!r}, not a token count", kind="HTTPResponseError"
    )
