"""The judges of one run: one client per distinct judge, sharing the cache and the limit."""

from __future__ import annotations

from assay._concurrency import AdaptiveLimiter
from assay.cache import ResponseCache
from assay.judge._client import JudgeClient
from assay.judge._provider_calls import ProviderCalls
from assay.judge._spec import JudgeSpec, merge_judges
from assay.providers import ProviderConfig, RetryPolicy

__all__ = ["JudgePool", "NoJudgeError"]


class NoJudgeError(LookupError):
    """No judge model is configured at any level."""


class JudgePool:
    """Resolves each grader's judge (SPEC §5 order) and hands out one client per judge.

    Args:
        base: The project's and the suite's `judge:` merged (the lower levels).
        forced: The environment's and the command line's settings (the upper levels): they
            win over a grader's own `judge:`.
        cache: The run's response cache, or None.
        concurrency: How many judge calls run at once, across every judge of the run.
        retry: The run's retry policy, the one its target uses (a judge's own `max_retries`
            overrides only the number of retries).
    """

    def __init__(
        self,
        base: JudgeSpec | None = None,
        forced: JudgeSpec | None = None,
        *,
        cache: ResponseCache | None = None,
        concurrency: int = 8,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.base = base
        self.forced = forced
        self.cache = cache
        self.limiter = AdaptiveLimiter(concurrency)
        self.retry = retry
        self._clients: dict[str, JudgeClient] = {}
        self._calls: dict[ProviderConfig, ProviderCalls] = {}
        self._default: JudgeClient | None = None
        """The client of graders without judge settings of their own (most of them), kept
        so a judge call does not merge and serialise the settings again."""

    def resolve(self, own: JudgeSpec | None = None) -> JudgeSpec | None:
        """The judge a grader with `own` settings uses; None when no model is set anywhere."""
        spec = merge_judges(self.base, own, self.forced)
        return spec if spec is not None and spec.model else None

    def client(self, own: JudgeSpec | None = None) -> JudgeClient:
        """The client of the judge a grader with `own` settings uses.

        Raises:
            NoJudgeError: No level sets a judge model.
        """
        if own is None and self._default is not None:
            return self._default
        spec = self.resolve(own)
        if spec is None:
            raise NoJudgeError(
                "no judge is configured: set `judge: {model: ...}` in the suite or assay.yaml, "
                "pass --judge-model, or export ASSAY_JUDGE_MODEL"
            )
        identity = spec.model_dump_json(exclude_unset=True)
        client = self._clients.get(identity)
        if client is None:
            client = JudgeClient(spec, cache=self.cache, limiter=self.limiter, retry=self.retry)
            self._clients[identity] = client
        if own is None:
            self._default = client
        return client

    def simulator(self, spec: JudgeSpec) -> JudgeClient:
        """The client of the model playing the user of `simulate:` tests (SPEC §2.1): `spec`
        as resolved by the plan (the forced judge settings do not apply to it); it shares the
        cache and the judge concurrency limit."""
        identity = "simulator:" + spec.model_dump_json(exclude_unset=True)
        client = self._clients.get(identity)
        if client is None:
            client = JudgeClient(
                spec, cache=self.cache, limiter=self.limiter, retry=self.retry, purpose="simulator"
            )
            self._clients[identity] = client
        return client

    def provider_calls(self, config: ProviderConfig) -> ProviderCalls:
        """The embeddings and moderation calls of one provider endpoint (`semantic-similarity`,
        `moderation`), sharing the run's cache, retry policy and judge concurrency limit."""
        calls = self._calls.get(config)
        if calls is None:
            calls = ProviderCalls(
                config, cache=self.cache, limiter=self.limiter, retry=self.retry or RetryPolicy()
            )
            self._calls[config] = calls
        return calls

    async def close(self) -> None:
        """Close every client's connections."""
        clients, self._clients, self._default = list(self._clients.values()), {}, None
        for client in clients:
            await client.close()
        calls, self._calls = list(self._calls.values()), {}
        for call in calls:
            await call.close()
