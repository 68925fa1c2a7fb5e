"""The judge client: one way every judged grader asks a model for a structured verdict.

A call goes: cache lookup → request (structured output, falling back to JSON mode and then
to JSON read out of text when the server rejects a mode) → validation against the reply
model → up to two re-asks that quote the validation error → cache write. Transient HTTP
failures (429, 5xx, timeouts, dropped connections) are retried with the run's one
`RetryPolicy` under the run's judge concurrency limit. Requests go through `assay.providers`
(any provider a target may use, `fake` included). Whatever cannot be turned into a valid reply
raises `JudgeError`, which the grader reports as an `error` — never as a score.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from assay._concurrency import AdaptiveLimiter
from assay.cache import ResponseCache, cache_key
from assay.errors import GraderError, UsageError
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
from assay.providers import (
    ModelTurn,
    Pricing,
    Provider,
    ProviderConfig,
    ProviderError,
    ProviderStatusError,
    Purpose,
    RetryPolicy,
    anthropic_wire,
    complete_with_retries,
    open_provider,
    openai_wire,
    preset_named,
)
from assay.results import JSON, TokenUsage, add_usage

__all__ = ["INVALID_REPLY_RETRIES", "JudgeClient", "JudgeError", "Judgement"]

M = TypeVar("M", bound=BaseModel)

INVALID_REPLY_RETRIES = 2
"""Re-asks after a reply that does not validate (SPEC §5: max 2), then the grader errors."""

DEFAULT_MAX_TOKENS = 1024
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MAX_RETRIES = 3
_MODES = ("json_schema", "json_object", "text")
_TOOL_NAME = "submit_judgement"


SIMULATOR_TEMPERATURE = 0.7
"""A simulator's sampling temperature unless its settings give one: repeats of a simulated
conversation should differ, as different users would."""


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
        purpose: Purpose = "judge",
    ) -> None:
        if not spec.model:
            raise ValueError("a judge client needs a model")
        self.spec = spec
        self.purpose: Purpose = purpose
        """`simulator` when this client plays the user of `simulate:` tests (SPEC §2.1)."""
        self.model: str = spec.model
        self._cache = cache
        self._limiter = limiter or AdaptiveLimiter(8)
        self._rng = rng or random.Random()  # noqa: S311 — backoff jitter, not secrets
        policy = retry or RetryPolicy(max_retries=DEFAULT_MAX_RETRIES)
        if spec.max_retries is not None:
            policy = dataclasses.replace(policy, max_retries=spec.max_retries)
        self._retry = policy
        """Backoff and the `Retry-After` cap: the run's policy, the targets' (SPEC §5)."""
        configured = spec.structured_output or "auto"
        self._auto = configured == "auto"
        self._mode: str = "json_schema" if self._auto else configured
        preset = preset_named(spec.resolved_provider)
        self._wire: Literal["openai", "anthropic"] = (
            "anthropic" if preset.wire == "anthropic" else "openai"
        )
        self._fake = preset.wire == "fake"
        self._provider: Provider | None = None
        self.requests = 0
        """HTTP requests sent so far (retries and re-asks included)."""

    @property
    def provider(self) -> str:
        """The provider preset (`openai`, `anthropic`, `groq`, `fake`, ...)."""
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
        metadata: Mapping[str, JSON] | None = None,
        system: str = SYSTEM_RULES,
        history: Sequence[Mapping[str, str]] = (),
        seed: int | None = None,
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
            metadata: The test's `metadata`, where the `fake` provider reads `fake_judge`
                (`fake_user_turns` for a simulator).
            system: The system message's template (`{nonce}` and `{schema}` filled in).
            history: Messages after `prompt.user` (a simulator's conversation so far, each
                agent reply in a nonce-delimited block); part of the cache key.
            seed: Sent as the request's `seed` on the OpenAI wire (a simulator's repeats
                each get their own conversation); `repeat_index` already keys the cache.

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
        messages: list[dict[str, JSON]] = [
            {"role": "system", "content": system.format(nonce=prompt.nonce, schema=shown)},
            {"role": "user", "content": prompt.user},
            *({"role": m["role"], "content": m["content"]} for m in history),
        ]
        key = self._key(
            messages, prompt, contract.schema, repeat_index, rejudge_round, metadata=metadata
        )
        if key is not None and self._cache is not None:
            cached = self._cache.get(key)
            hit = self._from_cache(cached, contract, prompt)
            if hit is not None:
                return hit
        usage: TokenUsage | None = None
        problem = ""
        for _ in range(1 + INVALID_REPLY_RETRIES):
            reply = await self._request(messages, contract, prompt, metadata, seed)
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
            f"{self.purpose} {self.model}: no valid reply after "
            f"{1 + INVALID_REPLY_RETRIES} attempts; last problem: {problem}",
            model=self.model,
            prompt=prompt.label,
            token_usage=usage,
            cost_usd=self._cost(usage),
        )

    async def chat(
        self, question: str, system: str | None = None, *, label: str = "proxy"
    ) -> tuple[str, TokenUsage | None, float | None]:
        """A plain-text reply to one question (no reply schema, no cache): what a code
        grader's own prompts get through its judge proxy (AgentV's target proxy).

        Returns the reply's text, its token usage and its cost.

        Raises:
            JudgeError: The request failed after its retries, or the model refused.
        """
        prompt = RenderedPrompt(template=label, version="-", user=question, nonce="")
        body: dict[str, JSON] = {
            "model": self.model,
            "max_tokens": self.spec.max_tokens or DEFAULT_MAX_TOKENS,
            "temperature": self._temperature(),
        }
        user: dict[str, JSON] = {"role": "user", "content": question}
        if self._wire == "anthropic":
            body["messages"] = [user]
            if system:
                body["system"] = system
        else:
            system_message: list[JSON] = [{"role": "system", "content": system}] if system else []
            body["messages"] = [*system_message, user]
        body.update(self.spec.extra_body or {})
        reply = await self._post(body, "text", prompt, None)
        return reply.text, reply.usage, self._cost(reply.usage)

    async def close(self) -> None:
        """Close the provider and its connections."""
        provider, self._provider = self._provider, None
        if provider is not None:
            await provider.close()

    # -- cache ------------------------------------------------------------------------------

    def _key(
        self,
        messages: list[dict[str, JSON]],
        prompt: RenderedPrompt,
        schema: dict[str, JSON],
        repeat_index: int,
        rejudge_round: int,
        *,
        metadata: Mapping[str, JSON] | None,
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
        if self._fake:  # the script is the fake judge (or the fake user)
            script = "fake_user_turns" if self.purpose == "simulator" else "fake_judge"
            identity[script] = (metadata or {}).get(script)
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
        self,
        messages: list[dict[str, JSON]],
        contract: _Contract[Any],
        prompt: RenderedPrompt,
        metadata: Mapping[str, JSON] | None,
        seed: int | None = None,
    ) -> _Reply:
        """One reply, stepping down structured-output modes the server rejects."""
        while True:
            mode = self._mode
            try:
                body = self._body(messages, contract, mode)
                if seed is not None and self._wire == "openai":
                    body.setdefault("seed", seed)
                return await self._post(body, mode, prompt, metadata)
            except _Rejected as exc:
                following = _MODES.index(mode) + 1
                if self._wire == "anthropic" and mode == "json_schema":
                    following += 1  # Anthropic has no JSON mode
                if not self._auto or following >= len(_MODES):
                    raise JudgeError(
                        f"{self.purpose} {self.model}: {exc}", model=self.model, prompt=prompt.label
                    ) from None
                self._mode = _MODES[following]

    async def _post(
        self,
        body: dict[str, JSON],
        mode: str,
        prompt: RenderedPrompt,
        metadata: Mapping[str, JSON] | None,
    ) -> _Reply:
        provider = self._open(prompt)
        try:
            raw, sent = await complete_with_retries(
                provider,
                body,
                policy=self._retry,
                rng=self._rng,
                limiter=self._limiter,
                metadata=metadata,
            )
        except ProviderError as exc:
            self.requests += exc.attempts
            rejected = isinstance(exc, ProviderStatusError) and exc.rejected_request
            if rejected and mode != "text":
                raise _Rejected(f"the server rejected {mode} output: {exc.message}") from None
            tries = f" (after {exc.attempts} attempts)" if exc.attempts > 1 else ""
            raise JudgeError(
                f"{self.purpose} {self.model}: {exc.message}{tries}",
                model=self.model,
                prompt=prompt.label,
            ) from None
        self.requests += sent
        return self._read(raw, mode, prompt)

    def _config(self) -> ProviderConfig:
        spec = self.spec
        return ProviderConfig(
            provider=spec.resolved_provider,
            base_url=spec.base_url,
            api_key_env=spec.resolved_api_key_env,
            timeout_s=spec.timeout_s or DEFAULT_TIMEOUT_S,
            api_version=spec.api_version,
            deployment=spec.deployment or self.model,
            region=spec.region,
            who=f"{self.purpose} {self.model}",
            # A judge at its own endpoint (Ollama, vLLM, a proxy) usually needs no key; one
            # that does answers 401, and that message names the variable.
            key_optional=bool(spec.base_url),
            purpose=self.purpose,
        )

    def _open(self, prompt: RenderedPrompt) -> Provider:
        """The provider, opened on first use inside the running event loop."""
        if self._provider is None:
            try:
                self._provider = open_provider(self._config(), self._wire)
            except UsageError as exc:
                raise JudgeError(str(exc), model=self.model, prompt=prompt.label) from None
        return self._provider

    def _base_url(self) -> str:
        if self._fake:
            return "fake://scripted"
        try:
            return self._config().endpoint()
        except UsageError as exc:
            raise JudgeError(str(exc), model=self.model) from None

    def _temperature(self) -> float:
        temperature = self.spec.temperature
        if temperature is None:  # a judge is deterministic; a simulated user varies
            return SIMULATOR_TEMPERATURE if self.purpose == "simulator" else 0.0
        return float(temperature)

    # -- wire formats -----------------------------------------------------------------------

    def _body(
        self, messages: list[dict[str, JSON]], contract: _Contract[Any], mode: str
    ) -> dict[str, JSON]:
        spec = self.spec
        max_tokens = spec.max_tokens or DEFAULT_MAX_TOKENS
        if self._wire == "anthropic":
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

    def _read(self, raw: dict[str, JSON], mode: str, prompt: RenderedPrompt) -> _Reply:
        try:
            turn: ModelTurn = (
                anthropic_wire.read_turn(raw)
                if self._wire == "anthropic"
                else openai_wire.read_turn(raw)
            )
        except ProviderError as exc:
            raise JudgeError(
                f"{self.purpose} {self.model}: {exc.message}", model=self.model, prompt=prompt.label
            ) from None
        if self._wire == "anthropic" and mode == "json_schema" and turn.calls:
            return _Reply(json.dumps(turn.calls[0].args), turn.usage)
        if not turn.text and turn.refusal:
            raise JudgeError(
                f"{self.purpose} {self.model} refused: {turn.refusal[:200]}",
                model=self.model,
                prompt=prompt.label,
            )
        return _Reply(turn.text or "", turn.usage)

    def _cost(self, usage: TokenUsage | None) -> float | None:
        spec = self.spec
        return Pricing(spec.cost_per_1k_input, spec.cost_per_1k_output).cost(usage)
