"""How the cases of a run reach a `CaseRunner`: here, a pool of asyncio workers in this process.

`execute` keeps the run's bookkeeping (store, summary, resume) and hands the cases to a
dispatcher; the Ray executor (`_ray.py`) implements the same protocol on a cluster, so the
two differ only in where cases run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from assay._concurrency import AdaptiveLimiter
from assay.cache import ResponseCache
from assay.judge import JudgePool
from assay.providers import RetryPolicy
from assay.results import CaseResult, SchedulingStats
from assay.runner._case import CaseRunner
from assay.runner._plan import CasePlan, RunPlan

__all__ = ["Dispatcher", "LocalDispatch", "RayOptions", "WriteResult"]

WriteResult = Callable[[CaseResult], Awaitable[None]]
"""Hands one graded result to the run's writer (waits while the writer is full)."""


@dataclass(frozen=True)
class RayOptions:
    """Run the cases on a Ray cluster (`--executor ray`) instead of in this process."""

    address: str | None = None
    """The cluster (`host:port` of its head, `auto`, or `ray://…`); None: `RAY_ADDRESS`, or
    a local Ray started for this run."""
    workers: int | None = None
    """Worker actors; None: one per CPU of the cluster."""


class Dispatcher(Protocol):
    """Runs cases somewhere and hands each result to `write` as it finishes."""

    async def run(
        self, cases: Iterator[tuple[int, CasePlan]], remaining: int, write: WriteResult
    ) -> None:
        """Run every case of `cases` (`remaining` of them, each with its position in the
        plan's cases) and write each result once."""

    def scheduling(self) -> SchedulingStats:
        """How the cases were scheduled, for the run result."""

    async def close(self) -> None:
        """Release what `run` used (clients, workers); safe after a failed `run`."""


class LocalDispatch:
    """asyncio workers pulling from one case iterator, in this process.

    Workers pull instead of one task per case, so memory stays flat in the number of cases.
    There are `concurrency + judge_concurrency` of them: the target's limiter bounds target
    calls and the judge pool bounds judge calls, so a case waiting for its judge (or being
    graded) does not leave a target slot idle, as it did with one worker per target slot.
    Without judges the extra workers wait at the target's limiter, each holding one case.
    """

    def __init__(
        self, plan: RunPlan, cache: ResponseCache | None, retry: RetryPolicy, run_id: str = ""
    ) -> None:
        self._workers = plan.concurrency + plan.judge_concurrency
        self._cache = cache
        self.judges = JudgePool(
            plan.judge_base,
            plan.judge_forced,
            cache=cache,
            concurrency=plan.judge_concurrency,
            retry=retry,
        )
        self.runner = CaseRunner(
            target=plan.target,
            base_dir=plan.target_base_dir,
            suite_dir=plan.loaded.base_dir,
            limiter=AdaptiveLimiter(plan.concurrency),
            retry=retry,
            cache=cache,
            judges=self.judges,
            simulator=plan.simulator,
            run_id=run_id,
        )
        self._hits = cache.stats.hits if cache else 0
        self._misses = cache.stats.misses if cache else 0

    async def run(
        self, cases: Iterator[tuple[int, CasePlan]], remaining: int, write: WriteResult
    ) -> None:
        """Run the cases on the workers (fewer when fewer cases remain)."""
        runner = self.runner

        async def worker() -> None:
            for _, case in cases:
                await write(await runner.run(case))

        async with asyncio.TaskGroup() as group:
            for _ in range(min(self._workers, max(1, remaining))):
                group.create_task(worker())

    def scheduling(self) -> SchedulingStats:
        """The target limit's record, retries and this run's cache use."""
        limits = self.runner.limiter.stats()
        cache = self._cache
        return SchedulingStats(
            target_concurrency=limits.configured,
            target_concurrency_final=limits.final,
            target_concurrency_lowest=limits.lowest,
            rate_limited=limits.rate_limited,
            retries=self.runner.retries,
            cache_hits=(cache.stats.hits - self._hits) if cache else 0,
            cache_misses=(cache.stats.misses - self._misses) if cache else 0,
        )

    async def close(self) -> None:
        """Close the judge clients."""
        await self.judges.close()
