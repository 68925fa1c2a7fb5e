"""User Python functions run off the caller's loop: results, errors, context, and abandonment."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
import time

import pytest

from assay._user_code import call_user_function

REQUEST = contextvars.ContextVar("REQUEST", default="none")


def _call(function: object, argument: object, timeout: float | None = None) -> object:
    async def main() -> object:
        REQUEST.set("r-1")
        return await asyncio.wait_for(call_user_function(function, argument), timeout)  # type: ignore[arg-type]

    return asyncio.run(main())


def test_a_sync_function_runs_on_a_daemon_thread_with_the_callers_context() -> None:
    def where(argument: int) -> tuple[int, bool, str]:
        return argument + 1, threading.current_thread().daemon, REQUEST.get()

    assert _call(where, 1) == (2, True, "r-1")


def test_an_async_function_runs_on_the_user_code_loop_with_the_callers_context() -> None:
    async def where(argument: int) -> tuple[int, str, str]:
        await asyncio.sleep(0)
        return argument + 1, threading.current_thread().name, REQUEST.get()

    assert _call(where, 1) == (2, "assay-user-loop", "r-1")


def test_an_awaitable_a_sync_function_returns_is_awaited() -> None:
    async def later(argument: int) -> int:
        return argument * 2

    def starts(argument: int) -> object:  # sync, but hands back a coroutine
        return later(argument)

    assert _call(starts, 4) == 8


@pytest.mark.parametrize("is_async", [False, True])
def test_the_functions_exception_propagates_as_is(is_async: bool) -> None:
    def broken(argument: str) -> None:
        raise ValueError(argument)

    async def broken_async(argument: str) -> None:
        raise ValueError(argument)

    with pytest.raises(ValueError, match="no rubric"):
        _call(broken_async if is_async else broken, "no rubric")


def _sleeps(argument: float) -> None:
    time.sleep(argument)


def _deadlocks(argument: float) -> None:
    lock = threading.Lock()
    lock.acquire()
    lock.acquire(timeout=argument)


async def _blocks_its_loop(argument: float) -> None:
    time.sleep(argument)


async def _ignores_cancellation(argument: float) -> None:
    end = time.monotonic() + argument
    while time.monotonic() < end:
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(0.05)


@pytest.mark.parametrize("hung", [_sleeps, _deadlocks, _blocks_its_loop, _ignores_cancellation])
def test_a_timeout_abandons_the_call_at_once_whatever_it_does(hung: object) -> None:
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        _call(hung, 1.5, timeout=0.2)
    # asyncio.run's own teardown included: nothing waits for the abandoned call.
    assert time.monotonic() - started < 1.0
    _call(_returns, 0)  # the user-code loop is free again before the next test


async def _returns(argument: int) -> int:
    return argument


def test_the_user_code_loop_outlives_a_run_so_a_client_made_once_serves_every_call() -> None:
    made: list[asyncio.Queue[int]] = []

    async def answer(argument: int) -> int:
        if not made:
            made.append(asyncio.Queue())  # bound to the loop of its first use
        await made[0].put(argument)
        return made[0].qsize()

    # Two runs, each with its own event loop, as two `assay.evaluate` calls have.
    assert (_call(answer, 1), _call(answer, 2)) == (1, 2)


def test_a_coroutine_that_ignores_cancellation_leaves_the_loop_to_others() -> None:
    with pytest.raises(TimeoutError):
        _call(_ignores_cancellation, 2.0, timeout=0.1)

    started = time.monotonic()
    assert _call(_returns, 7, timeout=1.0) == 7
    assert time.monotonic() - started < 0.5
