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
        """Wait for a free slot.

        While a slot is free this takes it without a lock or a suspension (one event loop: no
        other task runs between the check and the increment); a run makes one call per case,
        so this path is hot.
        """
        while self._in_flight >= self.limit:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                else:  # woken, then cancelled: pass the wake-up on
                    self._wake()
                raise
        self._in_flight += 1

    def release(self) -> None:
        """Free a slot and wake a waiter for it."""
        self._in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        free = self.limit - self._in_flight
        while free > 0 and self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                free -= 1

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
