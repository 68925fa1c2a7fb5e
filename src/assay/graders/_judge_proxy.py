"""A code grader's LLM proxy: a loopback HTTP server, for one grader run, that forwards
the grader's prompts to the run's judge (AgentV's code-grader `target` proxy).

A grading program that needs a model (contextual precision, a custom judge) asks the proxy
instead of holding API keys: the program gets the proxy's URL and a one-run bearer token in
its environment (`ASSAY_JUDGE_PROXY_URL` / `_TOKEN`, AgentV v4's `AGENTV_TARGET_PROXY_URL` /
`_TOKEN` and v5's `AGENTV_PROVIDER_PROXY_URL` / `_TOKEN`), and the proxy refuses calls past
`max_calls`. The protocol is AgentV's (v4 and v5 names both):

- `GET /info` → `{targetName, providerLabel, maxCalls, callCount, availableTargets,
  availableProviderLabels}`
- `POST /invoke` `{question, systemPrompt?, target? | provider?}` →
  `{output, rawText, tokenUsage}`
- `POST /invokeBatch` `{requests: [...]}` → `{responses: [...]}` (a failed item's `rawText`
  says `Error: ...`, as in AgentV)

Errors are JSON `{error}` with 401 (bad token), 400 (no question, unknown target), 429 (over
the cap) or 500 (the judge call failed).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from assay._strict_model import StrictModel

__all__ = ["DEFAULT_MAX_CALLS", "JudgeProxy"]

DEFAULT_MAX_CALLS = 50
"""AgentV's default call cap of a code grader's target proxy."""


class JudgeProxy(StrictModel):
    """`judge_proxy:` of a code-grader: give its program the run's judge over local HTTP."""

    max_calls: Annotated[int, Field(ge=0)] = DEFAULT_MAX_CALLS
    """Model calls the program may make per grading; more are refused with HTTP 429."""
