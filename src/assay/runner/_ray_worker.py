"""The Ray worker: one actor per worker process, running batches of cases of one run.

This module imports no Ray: the driver wraps `CaseWorker` with `ray.remote`, and Ray imports
this module on the worker by name. Each actor plans the run once from the run's snapshot,
through `plan_from_snapshot` as `--resume` does, so it runs exactly the driver's plan.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from assay._concurrency import AdaptiveLimiter
from assay.cache import CacheMode, ResponseCache
from assay.errors import UsageError, UserError
from assay.judge import JudgePool
from assay.providers import RetryPolicy
from assay.results import JSON
from assay.runner._case import CaseRunner
from assay.runner._plan import RunPlan
from assay.runner._resume import plan_from_snapshot

__all__ = ["Batch", "CaseWorker", "WorkerSettings", "WorkerStats"]

Batch = list[tuple[int, str]]
"""Cases to run: (position in the plan's cases, case id) pairs."""


@dataclass(frozen=True)
class WorkerSettings:
    """What one worker needs besides the snapshot: its share of the run's limits and where
    the driver works (relative paths and the response cache resolve as on the driver)."""

    run_id: str
    target_share: int
    """Target calls (and cases) this worker runs at once; the shares sum to the run's limit."""
    judge_share: int
    """Judge calls this worker makes at once; the shares sum to the run's judge limit."""
    cwd: str
    cache_path: str | None = None
    cache_mode: str = CacheMode.OFF.value


@dataclass(frozen=True)
class WorkerStats:
    """One worker process's scheduling record so far (summed over workers by the driver)."""

    pid: int
    configured: int
    final: int
    lowest: int
    rate_limited: int
    retries: int
    cache_hits: int
    cache_misses: int


class CaseWorker:
    """Runs cases of one run; built once per worker process (and again if Ray restarts it).

    The constructor never raises: a failure to plan is kept and raised by `ready` and `run`,
    as a plain `UsageError` that crosses the process boundary intact, instead of killing the
    actor (which the driver would take for a dead process and retry elsewhere).
    """

    def __init__(self, snapshot: str, settings: WorkerSettings) -> None:
        self._settings = settings
        self._error: Exception | None = None
        self._started = False
        self._lock: asyncio.Lock | None = None
        self._cache: ResponseCache | None = None
        try:
            if os.path.isdir(settings.cwd):  # one machine or a shared filesystem
                os.chdir(settings.cwd)
            data: dict[str, JSON] = json.loads(snapshot)
            self._plan: RunPlan = plan_from_snapshot(settings.run_id, data)
            if settings.cache_path is not None:
                self._cache = ResponseCache(
                    Path(settings.cache_path), CacheMode(settings.cache_mode)
                )
            retry = RetryPolicy(max_retries=self._plan.max_retries)
            self._runner = CaseRunner(
                target=self._plan.target,
                base_dir=self._plan.target_base_dir,
                suite_dir=self._plan.loaded.base_dir,
                limiter=AdaptiveLimiter(settings.target_share),
                retry=retry,
                cache=self._cache,
                judges=JudgePool(
                    self._plan.judge_base,
                    self._plan.judge_forced,
                    cache=self._cache,
                    concurrency=settings.judge_share,
                    retry=retry,
                ),
                simulator=self._plan.simulator,
            )
        except Exception as exc:
            self._error = exc

    async def _start(self) -> None:
        """Raise the constructor's error, or set the target up once."""
        if self._error is not None:
            raise _portable(self._error, os.uname().nodename)
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if not self._started:
                try:
                    await self._plan.target.setup(self._plan.target_base_dir)
                except Exception as exc:
                    raise _portable(exc, os.uname().nodename) from None
                self._slots = asyncio.Semaphore(self._settings.target_share)
                self._started = True

    async def ready(self) -> int:
        """Plan and set up (once); the worker's process id, for the driver's record."""
        await self._start()
        return os.getpid()

    async def run(self, batch: Batch) -> tuple[list[str], WorkerStats, float]:
        """Run a batch of cases, at most `target_share` at once; their results as JSON text
        (cheap to ship, parsed once by the driver), this worker's record so far and the
        seconds the batch took (the driver sizes the next batches by it).

        Raises:
            UsageError: this worker cannot plan the run or set its target up.
            RuntimeError: a position does not hold the expected case (the plans differ).
        """
        await self._start()
        started = time.perf_counter()
        plan = self._plan
        results: list[str] = [""] * len(batch)

        async def one(slot: int, position: int, case_id: str) -> None:
            case = plan.cases[position]
            if case.test.id != case_id:
                raise RuntimeError(
                    f"worker plan differs from the driver's: case {position} is "
                    f"'{case.test.id}', expected '{case_id}'"
                )
            async with self._slots:
                results[slot] = (await self._runner.run(case)).model_dump_json()

        async with asyncio.TaskGroup() as group:
            for slot, (position, case_id) in enumerate(batch):
                group.create_task(one(slot, position, case_id))
        return results, self.stats(), time.perf_counter() - started

    def stats(self) -> WorkerStats:
        """Limits, retries and cache use of this worker process so far."""
        limits = self._runner.limiter.stats()
        cache = self._cache.stats if self._cache is not None else None
        return WorkerStats(
            pid=os.getpid(),
            configured=limits.configured,
            final=limits.final,
            lowest=limits.lowest,
            rate_limited=limits.rate_limited,
            retries=self._runner.retries,
            cache_hits=cache.hits if cache else 0,
            cache_misses=cache.misses if cache else 0,
        )

    async def close(self) -> None:
        """Tear the target down and close the judge clients and the cache."""
        if self._error is not None:
            return
        if self._started:
            await self._plan.target.teardown()
        if self._runner.judges is not None:
            await self._runner.judges.close()
        if self._cache is not None:
            self._cache.close()


def _portable(exc: Exception, node: str) -> Exception:
    """A user error as a plain `UsageError` (some carry fields that do not survive pickling),
    saying which node it happened on; anything else as it is."""
    if isinstance(exc, UserError):
        return UsageError(f"Ray worker on {node}: {exc}")
    return exc
