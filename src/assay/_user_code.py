"""Calling the user's Python functions so that no call can hold a run or the process.

A sync function runs on a daemon thread of a small pool, an async one on assay's user-code event
loop (one per process, on a daemon thread of its own). The caller only awaits a future on its
own loop, so a timeout or a cancellation ends the wait at once whatever the function does: one
that sleeps, deadlocks, blocks its event loop with `time.sleep` or ignores cancellation is
abandoned and runs on, unobserved, while the run goes on. An abandoned coroutine is cancelled on
its loop. Daemon threads are not waited for when the process ends, so an abandoned call never
holds the exit either (`concurrent.futures` threads, those of `asyncio.to_thread`, are joined).

Every async function shares the one user-code loop, so a client the user's module creates once
(an `AsyncOpenAI()`) serves every call and every run of the process; a coroutine that blocks
that loop delays the other async calls until it returns (their timeouts still fire).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import inspect
import os
import queue
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import TypeVar

__all__ = ["call_user_function", "timed_user_call"]

_A = TypeVar("_A")
_R = TypeVar("_R")
_IDLE_THREAD_S = 60.0
"""An idle pool thread ends after this long without work."""

_Outcome = tuple[bool, object]
"""(raised, value): what a call returned, or the exception it raised."""


def _settle(future: asyncio.Future[object], outcome: _Outcome) -> None:
    """Resolve the caller's future, unless the caller stopped waiting (timeout, cancel)."""
    if future.done():
        return
    raised, value = outcome
    if raised:
        assert isinstance(value, BaseException)
        future.set_exception(value)
    else:
        future.set_result(value)


def _deliver(
    caller: asyncio.AbstractEventLoop, future: asyncio.Future[object], outcome: _Outcome
) -> None:
    """Hand an outcome to the caller's loop from another thread; a closed loop (the run
    ended while the call was abandoned) drops it."""
    with contextlib.suppress(RuntimeError):
        caller.call_soon_threadsafe(_settle, future, outcome)


class _DaemonPool:
    """Daemon worker threads for sync calls; grows when every thread is busy (an abandoned
    call keeps its thread), and an idle thread ends after `_IDLE_THREAD_S`."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0

    def submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            if self._idle:
                self._idle -= 1
            else:
                threading.Thread(target=self._work, name="assay-user-call", daemon=True).start()
        self._jobs.put(job)

    def _work(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=_IDLE_THREAD_S)
            except queue.Empty:
                with self._lock:
                    if self._idle:  # no job is on its way to this thread: end it
                        self._idle -= 1
                        return
                continue
            job()
            with self._lock:
                self._idle += 1


class _DaemonExecutor(concurrent.futures.ThreadPoolExecutor):
    """The user-code loop's default executor: what async user code hands to a thread
    (`asyncio.to_thread`) runs on the daemon pool too, so an abandoned call's thread never
    holds the end of the process (`ThreadPoolExecutor` joins its threads at exit)."""

    def submit(
        self, fn: Callable[..., _R], /, *args: object, **kwargs: object
    ) -> concurrent.futures.Future[_R]:
        future: concurrent.futures.Future[_R] = concurrent.futures.Future()

        def job() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as exc:
                future.set_exception(exc)

        _Workers.pool.submit(job)
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Nothing to stop: the pool's threads end when idle."""


class _UserLoop:
    """The event loop async user functions run on, on a daemon thread of its own."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.loop.set_default_executor(_DaemonExecutor(max_workers=1))
        thread = threading.Thread(target=self._serve, name="assay-user-loop", daemon=True)
        thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def start(
        self,
        coroutine: Coroutine[object, object, object],
        context: contextvars.Context,
        caller: asyncio.AbstractEventLoop,
        future: asyncio.Future[object],
        spent: list[float],
    ) -> Callable[[], None]:
        """Run `coroutine` on this loop, its outcome going to `future` and the seconds it took
        on this loop to `spent`; returns the canceller."""
        tasks: list[asyncio.Task[object]] = []
        started: list[float] = []

        def finished(task: asyncio.Task[object]) -> None:
            spent.append(time.perf_counter() - started[0])
            if task.cancelled():
                return  # only an abandoned call is cancelled: nobody waits for it
            error = task.exception()
            _deliver(caller, future, (True, error) if error else (False, task.result()))

        def begin() -> None:
            started.append(time.perf_counter())
            task = self.loop.create_task(coroutine, context=context)
            task.add_done_callback(finished)
            tasks.append(task)

        def cancel() -> None:
            for task in tasks:
                task.cancel()

        def abandon() -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed with its process
                self.loop.call_soon_threadsafe(cancel)

        self.loop.call_soon_threadsafe(begin)
        return abandon


class _Workers:
    """This process's pool and user-code loop (made when first needed)."""

    pool = _DaemonPool()
    loop: _UserLoop | None = None
    lock = threading.Lock()

    @classmethod
    def user_loop(cls) -> _UserLoop:
        with cls.lock:
            if cls.loop is None:
                cls.loop = _UserLoop()
            return cls.loop

    @classmethod
    def forget(cls) -> None:
        """In a forked child: the parent's threads do not exist there."""
        cls.pool = _DaemonPool()
        cls.loop = None
        cls.lock = threading.Lock()


if hasattr(os, "register_at_fork"):  # not on Windows
    os.register_at_fork(after_in_child=_Workers.forget)


async def _awaited(awaitable: Awaitable[object]) -> object:
    return await awaitable


async def call_user_function(function: Callable[[_A], object], argument: _A) -> object:
    """Call `function(argument)` off the caller's loop and return what it returned (an
    awaitable it returns is awaited on the user-code loop). Cancelling the caller (a timeout)
    abandons the call at once; the function's own exception propagates as is."""
    result, _ = await timed_user_call(function, argument)
    return result


async def timed_user_call(function: Callable[[_A], object], argument: _A) -> tuple[object, float]:
    """`call_user_function`, and the milliseconds the call took where it ran (its worker
    thread, then the user-code loop): the function's own time, not the time the caller's loop
    took to notice the result while it was busy with other cases."""
    caller = asyncio.get_running_loop()
    context = contextvars.copy_context()
    spent: list[float] = []
    if inspect.iscoroutinefunction(function):
        awaitable: object = context.run(function, argument)
    else:
        future: asyncio.Future[object] = caller.create_future()

        def job() -> None:
            started = time.perf_counter()
            try:
                outcome: _Outcome = (False, context.run(function, argument))
            except BaseException as exc:
                outcome = (True, exc)
            spent.append(time.perf_counter() - started)
            _deliver(caller, future, outcome)

        _Workers.pool.submit(job)
        awaitable = await future
        if not inspect.isawaitable(awaitable):
            return awaitable, sum(spent) * 1000
    if inspect.iscoroutine(awaitable):
        coroutine: Coroutine[object, object, object] = awaitable
    else:
        assert inspect.isawaitable(awaitable)
        coroutine = _awaited(awaitable)
    waited: asyncio.Future[object] = caller.create_future()
    cancel = _Workers.user_loop().start(coroutine, context, caller, waited, spent)
    try:
        result = await waited
    except asyncio.CancelledError:
        cancel()
        raise
    return result, sum(spent) * 1000
