"""The judge client: one way every judged grader asks a model for a structured verdict.

A call goes: cache lookup → request (structured output, falling back to JSON mode and then
to JSON read out of text when the server rejects a mode) → validation against the reply
model → up to two re-asks that quote the validation error → cache write. Transient HTTP
failures (429, 5xx, timeouts, dropped connections) are retried with backoff under the run's
judge concurrency limit. Whatever cannot be turned into a valid reply raises `JudgeError`,
which the grader reports as an `error` — never as a score.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from assay._concurrency import AdaptiveLimiter
from assay._retry import RetryPolicy
from assay._sdk_errors import connection_problem, retry_after_s, server_message, timed_out
from assay.cache import ResponseCache, cache_key
from assay.errors import GraderError
from assay.judge._hardening import NONCE_PLACEHOLDER, SYSTEM_RULES
from assay.judge._schema import (
    extract_json,
    reply_schema,
    reply_schema_text,
    schema_problems,
    strict_schema,
)
from assay.judge._spec import JudgeSpec
from assay.judge._templates import RenderedPrompt
from assay.results import JSON, TokenUsage, add_usage

__all__ = ["INVALID_REPLY_RETRIES", "JudgeClient", "JudgeError", "Judgement"]

M = TypeVar("M", bound=BaseModel)

INVALID_REPLY_RETRIES = 2
"""Re-asks after a reply that does not validate (SPEC §5: max 2), then the grader errors."""

DEFAULT_MAX_TOKENS = 1024
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MAX_RETRIES = 3
_NO_KEY = "assay-no-api-key"
_MODES = ("json_schema", "json_object", "text")
_TOOL_NAME = "submit_judgement"


class JudgeError(GraderError):
    """The judge could not give a usable verdict; carries what the attempt cost."""

    def __init__(
        self,
        message: str,
        *,
        model: str,
        prompt: str | None = None,
        token_usage: TokenUsage | None = None,
        cost_usd: float | None = None,
    ) -> None:
        super().__init__(message)
        self.model = model
        self.prompt = prompt
        self.token_usage = token_usage
        self.cost_usd = cost_usd


@dataclass(frozen=True)
class Judgement(Generic[M]):
    """A validated judge reply and what it cost."""

    answer: M
    model: str
    prompt: str
    """The template as `name@version`."""
    token_usage: TokenUsage | None
    cost_usd: float | None
    cached: bool = False


@dataclass(frozen=True)
class _Contract(Generic[M]):
    """What one call must get back: the reply model, the schema shown and sent, and the checks
    a parsed reply passes."""

    answer: type[M]
    schema: dict[str, JSON]
    """Shown to the judge, sent to Anthropic as the tool's input schema, part of the cache key."""
    strict: dict[str, JSON]
    """Sent as OpenAI's strict `response_format` schema."""
    pinned: bool
    """A per-call schema: replies are checked against it too (for servers without strict mode)."""
    check: Callable[[M], str | None] | None

    def validate(self, text: str) -> tuple[M | None, JSON, str]:
        """The reply as `answer` and as parsed JSON, or None and why not."""
        try:
            data = extract_json(text)
        except ValueError as exc:
            return None, None, str(exc)
        problem = schema_problems(data, self.schema) if self.pinned else None
        if problem:
            return None, data, problem
        try:
            value = self.answer.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}"
                for e in exc.errors()[:5]
            )
            return None, data, f"it does not match the schema ({problems})"
        problem = self.check(value) if self.check is not None else None
        return (None, data, problem) if problem else (value, data, "")


class _Rejected(Exception):
    """The server refused a structured-output mode (HTTP 400/422): try the next one."""


@dataclass
class _Reply:
    text: str
    usage: TokenUsage | None


class JudgeClient:
    """Asks one judge model (one resolved `JudgeSpec`) for structured verdicts.

    Made by `JudgePool`, which shares the cache and the judge concurrency limit among the
    clients of a run. The SDK client is created on first use, inside the running event loop.
    """

    def __init__(
        self,
        spec: JudgeSpec,
        *,
        cache: ResponseCache | None = None,
        limiter: AdaptiveLimiter | None = None,
        rng: random.Random | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        if not spec.model:
            raise ValueError("a judge client needs a model")
        self.spec = spec
        self.model: str = spec.model
        self._cache = cache
        self._limiter = limiter or AdaptiveLimiter(8)
        self._rng = rng or random.Random()  # noqa: S311 — backoff jitter, not secrets
        retries = spec.max_retries if spec.max_retries is not None else DEFAULT_MAX_RETRIES
        self._retry = retry or RetryPolicy(max_retries=retries)
        """Backoff and the `Retry-After` cap: the targets' policy (SPEC §5)."""
        configured = spec.structured_output or "auto"
        self._auto = configured == "auto"
        self._mode: str = "json_schema" if self._auto else configured
        self._sdk_client: Any = None
        self.requests = 0
        """HTTP requests sent so far (retries and re-asks included)."""

    @property
    def provider(self) -> str:
        """`openai` or `anthropic`."""
        return self.spec.resolved_provider

    @property
    def mode(self) -> str:
        """The structured-output mode the next request uses."""
        return self._mode

    async def ask(
        self,
        prompt: RenderedPrompt,
        answer: type[M],
        *,
        schema: dict[str, JSON] | None = None,
        check: Callable[[M], str | None] | None = None,
        repeat_index: int = 0,
        rejudge_round: int = 0,
    ) -> Judgement[M]:
        """Ask the judge; return its reply validated as `answer`.

        Args:
            prompt: The rendered user message (its data blocks carry `prompt.nonce`).
            answer: The reply model; its JSON Schema constrains the reply unless `schema`
                is given.
            schema: This call's reply schema, closed and strict-mode compatible (see
                `keyed_schema`), pinning what the judge must return. A reply is checked
                against it as well as parsed as `answer`, whatever the structured-output mode.
            check: Further validation of a parsed reply (e.g. one verdict per rubric item):
                a problem description, or None. A problem counts like a schema error.
            repeat_index: The sample of a repeated case (SPEC §5: part of the cache key).
            rejudge_round: 1..k for the re-asks of borderline re-judging, so each is a fresh
                judgement rather than the cached first one.

        Raises:
            JudgeError: The request failed after its retries, or no reply validated.
            assay.cache.CacheMiss: Replay mode and the judgement is not cached.
        """
        if schema is None:
            contract = _Contract(answer, reply_schema(answer), strict_schema(answer), False, check)
            shown = reply_schema_text(answer)
        else:
            contract = _Contract(answer, schema, schema, True, check)
            shown = json.dumps(schema, ensure_ascii=False)
        system = SYSTEM_RULES.format(nonce=prompt.nonce, schema=shown)
        messages: list[dict[str, JSON]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": prompt.user},
        ]
        key = self._key(messages, prompt, contract.schema, repeat_index, rejudge_round)
        if key is not None and self._cache is not None:
            cached = self._cache.get(key)
            hit = self._from_cache(cached, contract, prompt)
            if hit is not None:
                return hit
        usage: TokenUsage | None = None
        problem = ""
        for _ in range(1 + INVALID_REPLY_RETRIES):
            reply = await self._request(messages, contract, prompt)
            usage = add_usage(usage, reply.usage)
            value, data, problem = contract.validate(reply.text)
            if value is not None:
                cost = self._cost(usage)
                if key is not None and self._cache is not None:
                    stored = {
                        "answer": data,  # as replied: what the schema was checked on
                        "token_usage": usage.model_dump() if usage else None,
                    }
                    self._cache.put(key, stored, kind="judge")
                return Judgement(value, self.model, prompt.label, usage, cost)
            messages = [
                *messages,
                {"role": "assistant", "content": reply.text},
                {
                    "role": "user",
                    "content": f"That reply is not valid: {problem}. Reply again with only the "
                    "JSON object, matching the schema.",
                },
            ]
        raise JudgeError(
            f"judge {self.model}: no valid reply after {1 + INVALID_REPLY_RETRIES} attempts; "
            f"last problem: {problem}",
            model=self.model,
            prompt=prompt.label,
            token_usage=usage,
            cost_usd=self._cost(usage),
        )

    async def close(self) -> None:
        """Close the SDK client and its connections."""
        client, self._sdk_client = self._sdk_client, None
        if client is not None:
            await client.close()

    # -- cache ------------------------------------------------------------------------------

    def _key(
        self,
        messages: list[dict[str, JSON]],
        prompt: RenderedPrompt,
        schema: dict[str, JSON],
        repeat_index: int,
        rejudge_round: int,
    ) -> str | None:
        if self._cache is None:
            return None
        spec = self.spec
        steady = [
            {**m, "content": str(m["content"]).replace(prompt.nonce, NONCE_PLACEHOLDER)}
            for m in messages
        ]
        identity: dict[str, JSON] = {
            "provider": self.provider,
            "model": self.model,
            "base_url": self._base_url(),
            "temperature": self._temperature(),
            "max_tokens": spec.max_tokens or DEFAULT_MAX_TOKENS,
            "extra_body": spec.extra_body or {},
            "messages": steady,
            "schema": schema,
        }
        if rejudge_round:
            identity["rejudge_round"] = rejudge_round
        return cache_key(
            "judge", identity, repeat_index=repeat_index, template_version=prompt.label
        )

    def _from_cache(
        self,
        cached: JSON,
        contract: _Contract[M],
        prompt: RenderedPrompt,
    ) -> Judgement[M] | None:
        if not isinstance(cached, dict):
            return None
        value, _, _ = contract.validate(json.dumps(cached.get("answer")))
        if value is None:  # written by an older reply model: ask again
            return None
        raw_usage = cached.get("token_usage")
        usage = TokenUsage.model_validate(raw_usage) if raw_usage else None
        return Judgement(value, self.model, prompt.label, usage, self._cost(usage), cached=True)

    # -- requests ---------------------------------------------------------------------------

    async def _request(
        self, messages: list[dict[str, JSON]], contract: _Contract[Any], prompt: RenderedPrompt
    ) -> _Reply:
        """One reply, stepping down structured-output modes the server rejects."""
        while True:
            mode = self._mode
            try:
                return await self._post(self._body(messages, contract, mode), mode, prompt)
            except _Rejected as exc:
                following = _MODES.index(mode) + 1
                if self.provider == "anthropic" and mode == "json_schema":
                    following += 1  # Anthropic has no JSON mode
                if not self._auto or following >= len(_MODES):
                    raise JudgeError(
                        f"judge {self.model}: {exc}", model=self.model, prompt=prompt.label
                    ) from None
                self._mode = _MODES[following]

    async def _post(self, body: dict[str, JSON], mode: str, prompt: RenderedPrompt) -> _Reply:
        client = self._client(prompt)
        path = "/v1/messages" if self.provider == "anthropic" else "/chat/completions"
        attempts = 1 + self._retry.max_retries
        for attempt in range(attempts):
            try:
                async with self._limiter:
                    self.requests += 1
                    raw = await client.post(path, body=body, cast_to=object)
            except Exception as exc:
                failure = self._classify(exc)
                if failure is None:
                    raise
                message, retryable, rejected, wait = failure
                if rejected and mode != "text":
                    raise _Rejected(f"the server rejected {mode} output: {message}") from None
                if not retryable or attempt + 1 >= attempts:
                    tries = f" (after {attempt + 1} attempts)" if attempt else ""
                    raise JudgeError(
                        f"judge {self.model}: {message}{tries}",
                        model=self.model,
                        prompt=prompt.label,
                    ) from None
                await asyncio.sleep(self._retry.delay(attempt, wait, self._rng))
                continue
            self._limiter.on_success()
            return self._read(raw, mode, prompt)
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    def _classify(self, exc: Exception) -> tuple[str, bool, bool, float | None] | None:
        """(message, retryable, rejected-by-the-server, wait) for an SDK failure; None if the
        exception is not one (a bug, to propagate)."""
        sdk = importlib.import_module(self.provider)
        if isinstance(exc, json.JSONDecodeError | sdk.APIResponseValidationError):
            return "the reply is not valid JSON for the API", True, False, None
        if isinstance(exc, sdk.RateLimitError):
            self._limiter.on_rate_limited()
            wait = retry_after_s(exc.response.headers)
            return f"rate limited (HTTP 429): {server_message(exc)}", True, False, wait
        if isinstance(exc, sdk.APIStatusError):
            status: int = exc.status_code
            message = f"HTTP {status}: {server_message(exc)}"
            if status in (401, 403) and self.spec.resolved_api_key_env:
                message += f" (the API key is read from ${self.spec.resolved_api_key_env})"
            return message, status == 408 or status >= 500, status in (400, 422), None
        if isinstance(exc, sdk.APIConnectionError):
            if timed_out(exc, sdk.APITimeoutError):
                after = self.spec.timeout_s or DEFAULT_TIMEOUT_S
                return f"the request timed out after {after:g}s", True, False, None
            where = self._base_url()
            return f"the connection to {where} {connection_problem(exc)}", True, False, None
        return None

    def _client(self, prompt: RenderedPrompt) -> Any:
        if self._sdk_client is not None:
            return self._sdk_client
        variable = self.spec.resolved_api_key_env
        key = os.environ.get(variable) if variable else _NO_KEY
        if not key and self.spec.base_url:
            # A judge at its own endpoint (Ollama, vLLM, a proxy) usually needs no key; one
            # that does answers 401, and that message names the variable.
            key = _NO_KEY
        if not key:
            raise JudgeError(
                f"judge {self.model}: environment variable {variable} is not set; export the "
                "API key, or name another variable in the judge's `api_key_env`",
                model=self.model,
                prompt=prompt.label,
            )
        timeout = self.spec.timeout_s or DEFAULT_TIMEOUT_S
        if self.provider == "anthropic":
            try:
                import anthropic
            except ImportError:
                raise JudgeError(
                    "the anthropic judge needs its SDK: pip install 'assay[anthropic]'",
                    model=self.model,
                    prompt=prompt.label,
                ) from None
            self._sdk_client = anthropic.AsyncAnthropic(
                api_key=key,
                base_url=self.spec.base_url,
                max_retries=0,
                timeout=timeout,
                http_client=anthropic.DefaultAioHttpClient(),
            )
        else:
            import openai

            self._sdk_client = openai.AsyncOpenAI(
                api_key=key,
                base_url=self._base_url(),
                max_retries=0,
                timeout=timeout,
                http_client=openai.DefaultAioHttpClient(),
            )
        return self._sdk_client

    def _base_url(self) -> str | None:
        if self.spec.base_url:
            return self.spec.base_url
        if self.provider == "openai":
            return os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        return os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"

    def _temperature(self) -> float:
        temperature = self.spec.temperature
        return float(temperature) if temperature is not None else 0.0

    # -- wire formats -----------------------------------------------------------------------

    def _body(
        self, messages: list[dict[str, JSON]], contract: _Contract[Any], mode: str
    ) -> dict[str, JSON]:
        spec = self.spec
        max_tokens = spec.max_tokens or DEFAULT_MAX_TOKENS
        if self.provider == "anthropic":
            body: dict[str, JSON] = {
                "model": self.model,
                "max_tokens": max_tokens,
                "temperature": self._temperature(),
                "system": messages[0]["content"],
                "messages": messages[1:],
            }
            if mode == "json_schema":
                body["tools"] = [
                    {
                        "name": _TOOL_NAME,
                        "description": "Submit the judgement.",
                        "input_schema": contract.schema,
                    }
                ]
                body["tool_choice"] = {"type": "tool", "name": _TOOL_NAME}
        else:
            body = {
                "model": self.model,
                "messages": messages,
                "temperature": self._temperature(),
                "max_tokens": max_tokens,
            }
            if mode == "json_schema":
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {
                        "name": contract.answer.__name__,
                        "schema": contract.strict,
                        "strict": True,
                    },
                }
            elif mode == "json_object":
                body["response_format"] = {"type": "json_object"}
        body.update(spec.extra_body or {})
        return body

    def _read(self, raw: object, mode: str, prompt: RenderedPrompt) -> _Reply:
        reply = raw if isinstance(raw, dict) else {}
        if self.provider == "anthropic":
            blocks = reply.get("content")
            parts: list[str] = []
            for content in blocks if isinstance(blocks, list) else []:
                if not isinstance(content, dict):
                    continue
                if content.get("type") == "tool_use" and mode == "json_schema":
                    parts = [json.dumps(content.get("input"))]
                    break
                if content.get("type") == "text":
                    parts.append(str(content.get("text", "")))
            text = "".join(parts)
            usage = _usage(reply.get("usage"), "input_tokens", "output_tokens")
        else:
            choices = reply.get("choices")
            first = choices[0] if isinstance(choices, list) and choices else {}
            message = first.get("message") if isinstance(first, dict) else None
            if not isinstance(message, dict):
                raise JudgeError(
                    f"judge {self.model}: the reply has no choices[0].message: {str(raw)[:200]}",
                    model=self.model,
                    prompt=prompt.label,
                )
            content = message.get("content")
            refusal = message.get("refusal")
            if not content and isinstance(refusal, str) and refusal:
                raise JudgeError(
                    f"judge {self.model} refused: {refusal[:200]}",
                    model=self.model,
                    prompt=prompt.label,
                )
            text = content if isinstance(content, str) else ""
            usage = _usage(reply.get("usage"), "prompt_tokens", "completion_tokens")
        return _Reply(text, usage)

    def _cost(self, usage: TokenUsage | None) -> float | None:
        spec = self.spec
        return usage.price(spec.cost_per_1k_input, spec.cost_per_1k_output) if usage else None


def _usage(raw: object, input_key: str, output_key: str) -> TokenUsage | None:
    if not isinstance(raw, dict):
        return None
    given, produced = raw.get(input_key), raw.get(output_key)
    return TokenUsage(
        input=given if isinstance(given, int) else 0,
        output=produced if isinstance(produced, int) else 0,
    )
