"""Capped retries with exponential backoff and full jitter, honouring `Retry-After`.

One policy for every model call: the runner retries targets with it and the judge client
retries judge requests with it (a run hands the same `RetryPolicy` value to both), so a server's
`Retry-After: 3600` waits at most `MAX_RETRY_DELAY_S` for each.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["DEFAULT_MAX_RETRIES", "MAX_RETRY_DELAY_S", "RetryPolicy"]

DEFAULT_MAX_RETRIES = 3
MAX_RETRY_DELAY_S = 30.0
"""The longest wait before a retry, whatever a server's `Retry-After` asks for."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait before calling a failing target or judge again."""

    max_retries: int = DEFAULT_MAX_RETRIES
    base_delay_s: float = 0.5
    max_delay_s: float = MAX_RETRY_DELAY_S

    def delay(self, attempt: int, retry_after_s: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number `attempt` (0-based).

        A server's `Retry-After` is honoured (capped at `max_delay_s`); otherwise the wait is
        drawn uniformly from [0, base·2^attempt] ("full jitter"), so clients that failed
        together do not retry together.
        """
        if retry_after_s is not None:
            return min(max(retry_after_s, 0.0), self.max_delay_s)
        ceiling = min(self.max_delay_s, self.base_delay_s * (2**attempt))
        return rng.uniform(0.0, ceiling)
