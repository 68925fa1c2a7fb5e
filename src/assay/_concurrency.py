"""An adaptive concurrency limit: halves on rate limiting, grows back on success (AIMD).

A leaf module: the runner bounds target calls with one, and the judge client bounds judge
calls with another, so the two limits are separate (SPEC §9).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from dataclasses import dataclass
from types import TracebackType

__all__ = ["AdaptiveLimiter", "LimiterStats"]


@dataclass(frozen=True)
class LimiterStats:
    """What a limiter did during a run, for the run result."""

    configured: int
    final: int
    lowest: int
    rate_limited: int
    """How many calls reported rate limiting (HTTP 429)."""


class AdaptiveLimiter:
    """At most `limit` holders at once; the limit adapts to the server's rate limiting.

    On a rate-limited call the limit is halved, at most once per `cooldown_s` so a burst of
    429s from calls already in flight counts as one signal. After `limit` consecutive successful
    calls it grows by one, never above the configured maximum.
    """

    def __init__(self, limit: int, *, cooldown_s: float = 1.0) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self.maximum = limit
        self.limit = limit
        self.lowest = limit
        self.rate_limited = 0
        self._cooldown_s = cooldown_s
        self._last_decrease = -math.inf
        self._successes = 0
        self._in_flight = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def in_flight(self) -> int:
        """Holders right now."""
        return self._in_flight

    async def acquire(self) -> None:
        """Wait for a free slot; slots go to waiters in the order they came (FIFO).

        While a slot is free and nobody waits, this takes it without a lock or a suspension
        (one event loop: no other task runs between the check and the increment); a run makes
        one call per case, so this path is hot. A freed slot is handed to the oldest waiter
        directly, so a task that arrives just then cannot take it first: with more cases in
        progress than slots, cases still reach the target in suite order.
        """
        if self._in_flight < self.limit and not self._waiters:
            self._in_flight += 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter  # `_wake` counted this task in before waking it
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed a slot, then cancelled: pass it on
            elif waiter in self._waiters:
                self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        """Free a slot and hand it to the oldest waiter, if any."""
        self._in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self._in_flight < self.limit:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self._in_flight += 1
                waiter.set_result(None)

    async def __aenter__(self) -> AdaptiveLimiter:
        await self.acquire()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    def on_success(self) -> None:
        """Count a successful call; grow the limit after a full window of them."""
        self._successes += 1
        if self._successes >= self.limit and self.limit < self.maximum:
            self.limit += 1
            self._successes = 0
            self._wake()

    def on_rate_limited(self) -> None:
        """Count a rate-limited call; halve the limit unless it was just lowered."""
        self.rate_limited += 1
        self._successes = 0
        now = time.monotonic()
        if now - self._last_decrease >= self._cooldown_s:
            self.limit = max(1, self.limit // 2)
            self.lowest = min(self.lowest, self.limit)
            self._last_decrease = now

    def stats(self) -> LimiterStats:
        """The limiter's record so far."""
        return LimiterStats(self.maximum, self.limit, self.lowest, self.rate_limited)
