"""The Ray executor (`assay run --executor ray`): cases run on a Ray cluster's workers.

The driver (this process) plans the run, owns the store, the summary and resume, exactly as
with the local executor; only where cases run differs. Each worker actor plans the run from
its snapshot (`_ray_worker.py`), takes a share of the run's target and judge limits (the
shares sum to the configured limits, so they hold cluster-wide) and runs small batches of
case ids; results come back as JSON text as each batch finishes and go to the store at once.

A worker process that dies loses only its batches in flight: they are queued again for the
surviving (or restarted) workers, and a case id is written once however often it ran. When
no worker is left the run fails with every finished result kept, and `--resume` completes it.
Decisions and their reasons: docs/ray.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import sys
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any

from assay.cache import ResponseCache
from assay.errors import UsageError
from assay.results import JSON, CaseResult, SchedulingStats
from assay.runner._dispatch import RayOptions, WriteResult
from assay.runner._plan import CasePlan, RunPlan
from assay.runner._ray_worker import Batch, CaseWorker, WorkerSettings, WorkerStats
from assay.store import RawJSON

if TYPE_CHECKING:
    from types import ModuleType

__all__ = ["FORWARDED_ENV_PREFIXES", "RayDispatch", "shares", "start_ray_dispatch"]

FORWARDED_ENV_PREFIXES = ("ASSAY_", "OPENAI_", "ANTHROPIC_")
"""Driver environment variables every worker gets (endpoints, keys, judge settings)."""
BATCH_S = 0.5
"""How long a batch should take: batches grow for fast cases (a round trip per few cases
would cost more than the cases) and stay at the worker's share for slow ones, so results of
slow cases still stream and a lost or interrupted batch holds little work."""
MAX_BATCH = 256
BATCHES_PER_WORKER = 2
"""Batches sent to a worker at once: one running while the next waits, so it never idles."""
MAX_RESTARTS = 3
"""How often Ray restarts a worker actor whose process died, before it is given up."""
READY_TIMEOUT_S = 120.0
"""How long workers may take to start (and a restarted one to come back)."""
CONNECT_TIMEOUT_S = 5.0
"""How long the cluster's head may take to accept a connection."""


def shares(total: int, parts: int) -> list[int]:
    """`total` split into `parts` near-equal positive shares that sum to `total`."""
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def _import_ray() -> ModuleType:
    try:
        import ray
    except ImportError as exc:
        raise UsageError(
            f"--executor ray needs Ray, which is not installed ({exc}); "
            "install it with: pip install 'assay[ray]'"
        ) from None
    return ray


def _check_reachable(address: str) -> None:
    """Fail fast on a head that does not answer: Ray itself retries for minutes."""
    if address == "auto" or "://" in address:
        return
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise UsageError(
            f"--ray-address {address!r}: give the head node as HOST:PORT (e.g. 127.0.0.1:6379)"
        )
    try:
        with socket.create_connection((host.strip("[]"), int(port)), CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        raise UsageError(
            f"--ray-address {address}: no Ray cluster answers there ({exc}); start one with "
            "`ray start --head`, or pass the address it printed"
        ) from None


def _connect(ray: Any, options: RayOptions, quiet: contextlib.ExitStack) -> bool:
    """Connect to (or start) the cluster; whether this call did, so it also disconnects.

    Ray's driver prints cluster notices ("a worker died …") to standard output from a thread
    of its own; until `quiet` closes they go to standard error, so `--json` stays clean.
    """
    if ray.is_initialized():  # the caller's own Ray driver program
        return False
    address = options.address or os.environ.get("RAY_ADDRESS")
    if address:
        _check_reachable(address)
    quiet.enter_context(contextlib.redirect_stdout(sys.stderr))
    try:
        ray.init(
            address=address,
            namespace="assay",
            logging_level=logging.ERROR,
            log_to_driver=False,
        )
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise UsageError(f"cannot connect to the Ray cluster at {address}: {exc}") from None
    return True


def _forwarded_env(plan: RunPlan) -> dict[str, str]:
    """The driver's variables the workers need: assay's and the providers', and the keys
    the plan's target and default judge name."""
    named = {getattr(plan.target, "api_key_env", None)}
    judge = plan.default_judge
    if judge is not None:
        named.add(judge.resolved_api_key_env)
    return {
        key: value
        for key, value in os.environ.items()
        if key.startswith(FORWARDED_ENV_PREFIXES) or key in named
    }


async def start_ray_dispatch(
    plan: RunPlan,
    cache: ResponseCache | None,
    options: RayOptions,
    snapshot: dict[str, JSON],
    run_id: str,
) -> RayDispatch:
    """Connect to the cluster and start the run's workers, each planned and ready.

    Raises:
        UsageError: Ray is not installed, the cluster cannot be reached or lacks the CPUs for
            `--ray-workers`, or a worker cannot plan the run (e.g. the suite is not there).
    """
    ray = _import_ray()
    quiet = contextlib.ExitStack()
    try:
        owned = _connect(ray, options, quiet)
    except BaseException:
        quiet.close()
        raise
    try:
        cpus = int(ray.cluster_resources().get("CPU", 0))
        wanted = options.workers or max(1, cpus)
        if wanted > cpus:
            raise UsageError(
                f"--ray-workers {wanted}: the Ray cluster has {cpus} CPU(s) and each worker "
                "takes one; lower --ray-workers or add nodes"
            )
        count = min(wanted, plan.concurrency, plan.judge_concurrency)
        settings = [
            WorkerSettings(
                run_id=run_id,
                target_share=target,
                judge_share=judge,
                cwd=os.getcwd(),
                cache_path=str(cache.path.resolve()) if cache is not None else None,
                cache_mode=cache.mode.value if cache is not None else "off",
            )
            for target, judge in zip(
                shares(plan.concurrency, count), shares(plan.judge_concurrency, count), strict=True
            )
        ]
        text = json.dumps(
            {k: json.loads(v) if isinstance(v, RawJSON) else v for k, v in snapshot.items()}
        )
        actor = ray.remote(CaseWorker).options(
            num_cpus=1,
            max_restarts=MAX_RESTARTS,
            max_task_retries=0,  # the driver re-queues lost batches itself, on any worker
            scheduling_strategy="SPREAD",
            runtime_env={"env_vars": _forwarded_env(plan)},
        )
        workers = [_Worker(actor.remote(text, s), s) for s in settings]
        dispatch = RayDispatch(ray, workers, owned, quiet)
    except BaseException:
        if owned:
            ray.shutdown()
        quiet.close()
        raise
    try:
        pids = await asyncio.wait_for(
            asyncio.gather(*(dispatch.call(w.handle.ready) for w in workers)), READY_TIMEOUT_S
        )
    except TimeoutError:
        await dispatch.close()
        raise UsageError(
            f"the Ray cluster did not start {count} worker(s) within {READY_TIMEOUT_S:.0f} s; "
            "check its free CPUs with `ray status`"
        ) from None
    except BaseException:
        await dispatch.close()
        raise
    for worker, pid in zip(workers, pids, strict=True):
        worker.pid = pid
    return dispatch


@dataclass(eq=False)
class _Worker:
    """The driver's view of one worker actor."""

    handle: Any
    settings: WorkerSettings
    pid: int = 0
    in_flight: int = 0
    alive: bool = True
    probing: bool = False
    stats: dict[int, WorkerStats] = field(default_factory=dict)
    """The latest record of each process this actor ran in (a restart starts a new one)."""
    latest: WorkerStats | None = None
    batch_size: int = 0
    """Cases in the next batch (0: the worker's target share), from its measured speed."""


class RayDispatch:
    """Sends batches of case ids to the workers and writes their results as they come."""

    def __init__(
        self, ray: Any, workers: list[_Worker], owned: bool, quiet: contextlib.ExitStack
    ) -> None:
        self._ray = ray
        self.errors: Any = ray.exceptions
        self.workers = workers
        self._owned = owned
        self._quiet = quiet
        self._closed = False

    async def call(self, method: Any, *args: object) -> Any:
        """Call an actor method and await its result; a task's own error as raised there."""
        ref = method.remote(*args)
        try:
            return await asyncio.wrap_future(ref.future())
        except self.errors.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            raise (cause if isinstance(cause, Exception) else exc) from None

    async def run(
        self, cases: Iterator[tuple[int, CasePlan]], remaining: int, write: WriteResult
    ) -> None:
        """Keep every worker busy with batches until every case is written once."""
        del remaining  # every worker starts anyway; the batches end when the cases do
        rounds = _Rounds(self, cases, write)
        try:
            await rounds.drive()
        finally:  # on Ctrl-C or a failure: nothing is left waiting on a worker
            for future in (*rounds.batches, *rounds.probes):
                future.cancel()

    def scheduling(self) -> SchedulingStats:
        """The workers' records summed: limits add up to the cluster-wide limit."""
        records = [s for w in self.workers for s in w.stats.values()]
        latest = [w.latest for w in self.workers if w.latest is not None]
        configured = sum(w.settings.target_share for w in self.workers)
        return SchedulingStats(
            target_concurrency=configured,
            target_concurrency_final=sum(s.final for s in latest) if latest else configured,
            target_concurrency_lowest=sum(s.lowest for s in latest) if latest else configured,
            rate_limited=sum(s.rate_limited for s in records),
            retries=sum(s.retries for s in records),
            cache_hits=sum(s.cache_hits for s in records),
            cache_misses=sum(s.cache_misses for s in records),
        )

    async def close(self) -> None:
        """Let the workers tear their targets down, stop them, and disconnect."""
        if self._closed:
            return
        self._closed = True
        try:
            live = [w for w in self.workers if w.alive]
            with contextlib.suppress(Exception):
                await asyncio.wait_for(
                    asyncio.gather(
                        *(self.call(w.handle.close) for w in live), return_exceptions=True
                    ),
                    10.0,
                )
            for worker in self.workers:
                with contextlib.suppress(Exception):
                    self._ray.kill(worker.handle, no_restart=True)
        finally:
            try:
                if self._owned:
                    self._ray.shutdown()
            finally:
                self._quiet.close()


class _Rounds:
    """The driver's loop over one run: batches out, results in, lost batches re-queued."""

    def __init__(
        self, dispatch: RayDispatch, cases: Iterator[tuple[int, CasePlan]], write: WriteResult
    ) -> None:
        self.dispatch = dispatch
        self.errors: Any = dispatch.errors
        self.cases = cases
        self.write = write
        self.lost: deque[Batch] = deque()
        """Batches whose worker died before answering, to run again first."""
        self.outstanding: set[str] = set()
        """Case ids sent and not yet written: bounded by what is in flight."""
        self.batches: dict[asyncio.Future[Any], tuple[_Worker, Batch]] = {}
        self.probes: dict[asyncio.Future[Any], _Worker] = {}

    def _next_batch(self, worker: _Worker) -> Batch:
        if self.lost:
            return self.lost.popleft()
        size = worker.batch_size or worker.settings.target_share
        return [(position, case.test.id) for position, case in islice(self.cases, size)]

    def _send(self) -> None:
        for worker in self.dispatch.workers:
            while worker.alive and not worker.probing and worker.in_flight < BATCHES_PER_WORKER:
                batch = self._next_batch(worker)
                if not batch:
                    return
                self.outstanding.update(case_id for _, case_id in batch)
                future = asyncio.ensure_future(self.dispatch.call(worker.handle.run, batch))
                self.batches[future] = (worker, batch)
                worker.in_flight += 1

    async def drive(self) -> None:
        """Until every case is written; raises when no worker is left to run the rest."""
        while True:
            self._send()
            if not self.batches and not self.probes:
                if self.lost:
                    run_id = self.dispatch.workers[0].settings.run_id
                    raise UsageError(
                        f"every Ray worker died; {len(self.outstanding)} case(s) did not run. "
                        "The finished results are stored: complete the run with "
                        f"`assay run --resume {run_id}` once the cluster is healthy"
                    )
                return
            done, _ = await asyncio.wait(
                [*self.batches, *self.probes], return_when=asyncio.FIRST_COMPLETED
            )
            for future in done:
                if future in self.probes:
                    self._probed(future)
                else:
                    await self._answered(future)

    def _probed(self, future: asyncio.Future[Any]) -> None:
        worker = self.probes.pop(future)
        worker.probing = False
        try:
            worker.pid = future.result()
        except (self.errors.RayActorError, TimeoutError):
            worker.alive = False

    async def _answered(self, future: asyncio.Future[Any]) -> None:
        worker, batch = self.batches.pop(future)
        worker.in_flight -= 1
        try:
            texts, stats, elapsed_s = future.result()
        except self.errors.RayActorError:
            # The process died or cannot be reached: its cases go to any worker, and this one
            # is asked whether Ray brought it back before it gets more.
            self.lost.append([item for item in batch if item[1] in self.outstanding])
            if worker.alive and not worker.probing:
                worker.probing = True
                probe = asyncio.ensure_future(
                    asyncio.wait_for(self.dispatch.call(worker.handle.ready), READY_TIMEOUT_S)
                )
                self.probes[probe] = worker
            return
        worker.stats[stats.pid] = worker.latest = stats
        speed = len(batch) / max(elapsed_s, 1e-6)
        share = worker.settings.target_share
        worker.batch_size = min(MAX_BATCH, max(share, round(speed * BATCH_S)))
        for text in texts:
            result = CaseResult.model_validate_json(text)
            if result.case_id in self.outstanding:  # written once, however often it ran
                self.outstanding.discard(result.case_id)
                await self.write(result)
