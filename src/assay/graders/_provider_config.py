"""Where a grader's own provider calls go (embeddings, moderation): the provider the grader
names, else the run's judge's, with its endpoint and key."""

from __future__ import annotations

from assay.errors import GraderError
from assay.graders._base import GradingContext
from assay.judge import JudgeSpec, ProviderCalls
from assay.providers import ProviderConfig, preset_named

__all__ = ["DEFAULT_TIMEOUT_S", "grader_provider", "required_provider"]

DEFAULT_TIMEOUT_S = 120.0


def grader_provider(
    ctx: GradingContext,
    *,
    own: JudgeSpec | None = None,
    provider: str | None,
    base_url: str | None,
    api_key_env: str | None,
    who: str,
) -> ProviderConfig | None:
    """The endpoint of `provider` (a preset name), else of the judge (`own` settings over the
    run's); None when neither is set. The judge's `base_url` and key variable apply when the
    provider is the judge's; the grader's own `base_url` / `api_key_env` ("" for none) win."""
    judge = ctx.judges.resolve(own) if ctx.judges is not None else None
    if provider is None and judge is None:
        return None
    name = provider or (judge.resolved_provider if judge is not None else "openai")
    same = judge if judge is not None and name == judge.resolved_provider else None
    url = base_url or (same.base_url if same is not None else None)
    if api_key_env is not None:
        key_env = api_key_env or None
    elif same is not None:
        key_env = same.resolved_api_key_env
    else:
        key_env = preset_named(name).api_key_env
    timeout = same.timeout_s if same is not None and same.timeout_s else DEFAULT_TIMEOUT_S
    return ProviderConfig(
        provider=name,
        base_url=url,
        api_key_env=key_env,
        timeout_s=timeout,
        who=who,
        key_optional=bool(url),
        purpose="judge",
    )


def required_provider(
    ctx: GradingContext, config: ProviderConfig | None, grader: str
) -> ProviderCalls:
    """The calls of `config` through the run's judge pool (its cache, retries and limit), or
    the error of a grader that has no provider to call.

    Raises:
        GraderError: Neither the grader nor the run names a provider.
    """
    if config is None or ctx.judges is None:
        raise GraderError(
            f"{grader} needs a provider: set `provider:` (and `base_url:` for a local server) "
            "on the grader, or configure a judge (`judge: {model: ...}`), whose provider it "
            "then uses"
        )
    return ctx.judges.provider_calls(config)
