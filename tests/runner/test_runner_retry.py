"""Retries and the adaptive target limit: RetryPolicy, AdaptiveLimiter, and both in a real run."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import random
import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

from assay import _concurrency
from assay._concurrency import AdaptiveLimiter, LimiterStats
from assay.config import load_project, parse_suite
from assay.results import JSON, ErrorInfo, RunResult, SchedulingStats
from assay.runner import DEFAULT_MAX_RETRIES, RetryPolicy, RunOptions, execute, plan_run
from assay.runner import _execute as execute_module
from assay.store import MemorySink

# -- RetryPolicy.delay -------------------------------------------------------------------------


def test_the_defaults_match_the_documented_policy() -> None:
    policy = RetryPolicy()
    assert (policy.max_retries, policy.base_delay_s, policy.max_delay_s) == (3, 0.5, 30.0)
    assert DEFAULT_MAX_RETRIES == 3


@pytest.mark.parametrize(
    ("attempt", "retry_after_s", "expected"),
    [
        pytest.param(0, 2.5, 2.5, id="honoured"),
        pytest.param(5, 0.0, 0.0, id="zero-even-late"),
        pytest.param(0, 30.0, 30.0, id="at-the-cap"),
        pytest.param(2, 90.0, 30.0, id="capped"),
        pytest.param(0, -3.0, 0.0, id="negative-is-zero"),
    ],
)
def test_retry_after_is_honoured_and_capped(
    attempt: int, retry_after_s: float, expected: float
) -> None:
    rng = random.Random(1)
    assert RetryPolicy().delay(attempt, retry_after_s, rng) == expected
    # Retry-After is the server's word: no jitter is drawn.
    assert rng.random() == random.Random(1).random()


def test_full_jitter_draws_uniformly_below_the_attempt_ceiling() -> None:
    policy = RetryPolicy()
    rng = random.Random(20261122)
    twin = random.Random(20261122)
    for attempt in range(8):
        ceiling = min(30.0, 0.5 * 2**attempt)
        draws = [policy.delay(attempt, None, rng) for _ in range(300)]
        assert draws == [twin.uniform(0.0, ceiling) for _ in range(300)]
        assert all(0.0 <= d <= ceiling for d in draws)
        # Full jitter spans the whole range, not just its top.
        assert min(draws) < 0.05 * ceiling
        assert max(draws) > 0.95 * ceiling


def test_the_jitter_ceiling_doubles_per_attempt_up_to_the_cap() -> None:
    policy = RetryPolicy(base_delay_s=0.25, max_delay_s=3.0)
    highest = [max(policy.delay(a, None, random.Random(s)) for s in range(200)) for a in range(6)]
    ceilings = [0.25, 0.5, 1.0, 2.0, 3.0, 3.0]
    for top, ceiling in zip(highest, ceilings, strict=True):
        assert 0.95 * ceiling < top <= ceiling
    assert highest[:4] == sorted(highest[:4])


def test_the_same_seed_gives_the_same_waits() -> None:
    policy = RetryPolicy()
    first = [policy.delay(a, None, random.Random(7)) for a in range(4)]
    again = [policy.delay(a, None, random.Random(7)) for a in range(4)]
    assert first == again
    assert len(set(first)) == 4


# -- AdaptiveLimiter ---------------------------------------------------------------------------


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="limit must be at least 1"):
        AdaptiveLimiter(0)


@pytest.mark.parametrize("limit", [1, 3])
def test_never_more_than_limit_holders(limit: int) -> None:
    limiter = AdaptiveLimiter(limit)
    peak = 0

    async def hold(i: int) -> int:
        nonlocal peak
        async with limiter:
            peak = max(peak, limiter.in_flight)
            await asyncio.sleep(0.001 * (i % 3))
            return i

    async def main() -> list[int]:
        return list(await asyncio.gather(*(hold(i) for i in range(20))))

    assert asyncio.run(main()) == list(range(20))
    assert peak == limit
    assert limiter.in_flight == 0


def test_a_lowered_limit_holds_back_new_holders_until_enough_have_left() -> None:
    async def main() -> list[tuple[str, int]]:
        limiter = AdaptiveLimiter(4, cooldown_s=0.0)
        for _ in range(4):
            await limiter.acquire()
        limiter.on_rate_limited()
        assert limiter.limit == 2
        events: list[tuple[str, int]] = []

        async def newcomer() -> None:
            await limiter.acquire()
            events.append(("acquired", limiter.in_flight))

        waiting = asyncio.create_task(newcomer())
        for _ in range(3):
            await asyncio.sleep(0.005)
            events.append(("in flight", limiter.in_flight))
            limiter.release()
        await asyncio.wait_for(waiting, 1.0)
        return events

    # 4 → 3 → 2 holders: still at or above the new limit; at 1 the newcomer gets in.
    assert asyncio.run(main()) == [
        ("in flight", 4),
        ("in flight", 3),
        ("in flight", 2),
        ("acquired", 2),
    ]


def test_a_cancelled_waiter_frees_its_turn_for_the_next() -> None:
    async def main() -> list[str]:
        limiter = AdaptiveLimiter(1)
        await limiter.acquire()
        events: list[str] = []

        async def wait(name: str) -> None:
            await limiter.acquire()
            events.append(name)

        first = asyncio.create_task(wait("first"))
        second = asyncio.create_task(wait("second"))
        await asyncio.sleep(0)
        limiter.release()  # wakes `first` ...
        first.cancel()  # ... which is cancelled before it runs: `second` must get the slot
        await asyncio.wait_for(second, 1.0)
        with contextlib.suppress(asyncio.CancelledError):
            await first
        return [*events, f"in flight {limiter.in_flight}"]

    assert asyncio.run(main()) == ["second", "in flight 1"]


def test_a_cancelled_waiter_leaves_the_queue() -> None:
    async def main() -> int:
        limiter = AdaptiveLimiter(1)
        await limiter.acquire()
        waiting = asyncio.create_task(limiter.acquire())
        await asyncio.sleep(0)
        waiting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await waiting
        limiter.release()
        await asyncio.wait_for(limiter.acquire(), 1.0)
        return limiter.in_flight

    assert asyncio.run(main()) == 1


def test_a_freed_slot_goes_to_the_oldest_waiter_not_to_whoever_asks_next() -> None:
    # With more cases in progress than slots, a task that releases and asks again at once
    # (a worker starting its next case) must queue behind those already waiting.
    async def main() -> list[str]:
        limiter = AdaptiveLimiter(1)
        await limiter.acquire()
        order: list[str] = []

        async def waiter() -> None:
            await limiter.acquire()
            order.append("waiting one")
            limiter.release()

        waiting = asyncio.create_task(waiter())
        await asyncio.sleep(0)
        limiter.release()
        await limiter.acquire()
        order.append("the one that released")
        limiter.release()
        await asyncio.wait_for(waiting, 1.0)
        return order

    assert asyncio.run(main()) == ["waiting one", "the one that released"]


def test_a_grown_limit_lets_a_waiter_in() -> None:
    async def main() -> int:
        limiter = AdaptiveLimiter(2, cooldown_s=0.0)
        await limiter.acquire()
        limiter.on_rate_limited()  # limit 1, one holder
        waiting = asyncio.create_task(limiter.acquire())
        await asyncio.sleep(0)
        limiter.on_success()  # a full window at limit 1: grows back to 2
        await asyncio.wait_for(waiting, 1.0)
        return limiter.in_flight

    assert asyncio.run(main()) == 2


def test_each_rate_limit_halves_the_limit_down_to_one() -> None:
    limiter = AdaptiveLimiter(8, cooldown_s=0.0)
    seen = []
    for _ in range(5):
        limiter.on_rate_limited()
        seen.append(limiter.limit)
    assert seen == [4, 2, 1, 1, 1]
    assert limiter.stats() == LimiterStats(configured=8, final=1, lowest=1, rate_limited=5)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """A hand-driven `time.monotonic` for the limiter module only."""
    now = SimpleNamespace(t=1000.0)
    monkeypatch.setattr(_concurrency, "time", SimpleNamespace(monotonic=lambda: now.t))
    return now


def test_a_burst_of_rate_limits_within_the_cooldown_counts_once(clock: SimpleNamespace) -> None:
    limiter = AdaptiveLimiter(16, cooldown_s=1.0)
    limits = []
    for t in (1000.0, 1000.0, 1000.2, 1000.999, 1001.0, 1001.5, 1002.25):
        clock.t = t
        limiter.on_rate_limited()
        limits.append(limiter.limit)
    assert limits == [8, 8, 8, 8, 4, 4, 2]
    assert limiter.stats() == LimiterStats(configured=16, final=2, lowest=2, rate_limited=7)


def test_the_default_cooldown_is_one_second(clock: SimpleNamespace) -> None:
    limiter = AdaptiveLimiter(8)
    limiter.on_rate_limited()
    clock.t += 0.99
    limiter.on_rate_limited()
    assert limiter.limit == 4
    clock.t += 0.01
    limiter.on_rate_limited()
    assert limiter.limit == 2


def test_a_full_window_of_successes_grows_the_limit_by_one_up_to_the_maximum() -> None:
    limiter = AdaptiveLimiter(4, cooldown_s=0.0)
    limiter.on_rate_limited()
    limiter.on_rate_limited()
    assert limiter.limit == 1
    limits = []
    for _ in range(12):
        limiter.on_success()
        limits.append(limiter.limit)
    # One success at limit 1, two at 2, three at 3; then it stays at the configured 4.
    assert limits == [2, 2, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4]
    assert limiter.stats() == LimiterStats(configured=4, final=4, lowest=1, rate_limited=2)


def test_a_rate_limit_restarts_the_success_window() -> None:
    limiter = AdaptiveLimiter(8, cooldown_s=0.0)
    limiter.on_rate_limited()  # 4
    for _ in range(3):
        limiter.on_success()
    assert limiter.limit == 4
    limiter.on_rate_limited()  # 2, and the three successes no longer count
    limiter.on_success()
    assert limiter.limit == 2
    limiter.on_success()
    assert limiter.limit == 3


def test_successes_at_the_maximum_never_raise_it() -> None:
    limiter = AdaptiveLimiter(2)
    for _ in range(50):
        limiter.on_success()
    assert limiter.stats() == LimiterStats(configured=2, final=2, lowest=2, rate_limited=0)


# -- retries in a real run ---------------------------------------------------------------------

AGENT_SOURCE = """
import asyncio

from assay.errors import TargetError

calls = {}
burst = set()


def _count(case):
    calls[case["id"]] = calls.get(case["id"], 0) + 1
    return calls[case["id"]]


async def flaky(case):
    meta = case["metadata"]
    n = _count(case)
    if n > meta.get("fails", 2):
        return "ok"
    raise TargetError(
        f"{case['id']} attempt {n} failed",
        kind="HTTPStatusError",
        retryable=meta.get("retryable", True),
        retry_after_s=meta.get("retry_after_s", 0.0),
    )


async def crash(case):
    _count(case)
    raise RuntimeError("not transient")


async def limited(case):
    # Every case is rate limited on its first call, all in one burst (as a provider would).
    if _count(case) > 1:
        return "ok"
    burst.add(case["id"])
    for _ in range(2000):
        if len(burst) >= case["metadata"]["burst"]:
            break
        await asyncio.sleep(0.001)
    raise TargetError(
        "HTTP 429 Too Many Requests", kind="HTTPStatusError", rate_limited=True, retry_after_s=0.01
    )


async def slow(case):
    _count(case)
    await asyncio.sleep(5)
    return "ok"
"""


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """A uniquely named agent module in tmp_path (fresh globals); sys.path/modules restored."""
    name = f"assay_retry_agent_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(AGENT_SOURCE), encoding="utf-8")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    importlib.invalidate_caches()
    yield importlib.import_module(name)
    sys.modules.pop(name, None)


@dataclass(frozen=True)
class RecordingPolicy(RetryPolicy):
    """The real policy, recording each wait the runner asks for (and never waiting)."""

    asked: list[tuple[int, float | None]] = field(default_factory=list, compare=False)

    def delay(self, attempt: int, retry_after_s: float | None, rng: random.Random) -> float:
        wait = super().delay(attempt, retry_after_s, rng)
        assert 0.0 <= wait <= self.max_delay_s
        self.asked.append((attempt, retry_after_s))
        return 0.0


@pytest.fixture
def policies(monkeypatch: pytest.MonkeyPatch) -> list[RecordingPolicy]:
    """Every retry policy the runner builds, recording the waits it computes."""
    made: list[RecordingPolicy] = []

    def make(*, max_retries: int) -> RecordingPolicy:
        made.append(RecordingPolicy(max_retries=max_retries))
        return made[-1]

    factory: Callable[..., RetryPolicy] = make
    monkeypatch.setattr(execute_module, "RetryPolicy", factory)
    return made


def run(
    agent: ModuleType,
    function: str,
    cases: list[JSON],
    execution: dict[str, JSON] | None = None,
    concurrency: int | None = None,
) -> RunResult:
    loaded = parse_suite(
        {
            "name": "retries",
            "target": {"type": "python", "function": f"{agent.__name__}:{function}"},
            "execution": execution or {},
            "tests": cases,
        }
    )
    sink = MemorySink()
    asyncio.run(
        execute(plan_run(loaded, load_project(), RunOptions(concurrency=concurrency)), sink)
    )
    return sink.run


def case(case_id: str, **metadata: JSON) -> JSON:
    return {
        "id": case_id,
        "input": "q",
        "metadata": metadata,
        "assertions": [{"type": "equals", "value": "ok"}],
    }


def test_transient_failures_are_retried_until_the_case_passes(agent: ModuleType) -> None:
    result = run(agent, "flaky", [case("a"), case("b"), case("c")], concurrency=2)
    assert sorted((r.case_id, r.verdict, r.error) for r in result.results) == [
        ("a", "pass", None),
        ("b", "pass", None),
        ("c", "pass", None),
    ]
    assert agent.calls == {"a": 3, "b": 3, "c": 3}
    assert result.scheduling == SchedulingStats(
        target_concurrency=2,
        target_concurrency_final=2,
        target_concurrency_lowest=2,
        rate_limited=0,
        retries=6,
        cached_cases=0,
    )


def test_the_runner_asks_the_policy_per_attempt_with_the_servers_retry_after(
    agent: ModuleType, policies: list[RecordingPolicy]
) -> None:
    result = run(
        agent,
        "flaky",
        [case("told", retry_after_s=0.0), case("untold", retry_after_s=None, fails=3)],
        concurrency=1,
    )
    assert {r.verdict for r in result.results} == {"pass"}
    [policy] = policies
    assert policy.max_retries == DEFAULT_MAX_RETRIES
    # While one case waits to retry, the other may call (the wait holds no target slot), so
    # the two cases' questions interleave; each case's own come in attempt order.
    told = [asked for asked in policy.asked if asked[1] == 0.0]
    untold = [asked for asked in policy.asked if asked[1] is None]
    assert (told, untold) == ([(0, 0.0), (1, 0.0)], [(0, None), (1, None), (2, None)])
    assert result.scheduling is not None and result.scheduling.retries == 5


def test_a_failure_that_is_not_transient_is_not_retried(agent: ModuleType) -> None:
    result = run(agent, "flaky", [case("hard", retryable=False)])
    [hard] = result.results
    assert (hard.verdict, hard.score, hard.error) == (
        "error",
        None,
        ErrorInfo(type="HTTPStatusError", message="hard attempt 1 failed"),
    )
    assert agent.calls == {"hard": 1}
    assert result.scheduling is not None and result.scheduling.retries == 0


def test_a_python_exception_is_not_retried(agent: ModuleType) -> None:
    result = run(agent, "crash", [case("boom")])
    [boom] = result.results
    assert boom.verdict == "error"
    assert boom.error == ErrorInfo(
        type="RuntimeError",
        message=f"function '{agent.__name__}:crash' raised RuntimeError: not transient",
    )
    assert agent.calls == {"boom": 1}
    assert result.scheduling is not None and result.scheduling.retries == 0


def test_a_timeout_is_not_retried(agent: ModuleType) -> None:
    result = run(agent, "slow", [case("late")], execution={"timeout_s": 0.05})
    [late] = result.results
    assert late.error == ErrorInfo(type="TimeoutError", message="target took longer than 0.05s")
    assert agent.calls == {"late": 1}
    assert result.scheduling is not None and result.scheduling.retries == 0


@pytest.mark.parametrize(
    ("max_retries", "suffix"),
    [
        pytest.param(1, " (after 1 retry)", id="one"),
        pytest.param(2, " (after 2 retries)", id="two"),
        pytest.param(0, "", id="none"),
    ],
)
def test_when_retries_run_out_the_error_says_how_many_were_made(
    agent: ModuleType, max_retries: int, suffix: str
) -> None:
    result = run(
        agent,
        "flaky",
        [case("down", fails=99), case("up", fails=0)],
        execution={"max_retries": max_retries},
    )
    by_id = {r.case_id: r for r in result.results}  # stored in completion order
    down, up = by_id["down"], by_id["up"]
    attempts = max_retries + 1
    assert (down.verdict, down.error) == (
        "error",
        ErrorInfo(type="HTTPStatusError", message=f"down attempt {attempts} failed{suffix}"),
    )
    assert (up.verdict, up.error) == ("pass", None)
    assert agent.calls == {"down": attempts, "up": 1}
    assert result.scheduling is not None and result.scheduling.retries == max_retries


def test_the_default_is_three_retries(agent: ModuleType) -> None:
    [down] = run(agent, "flaky", [case("down", fails=99)]).results
    assert down.error == ErrorInfo(
        type="HTTPStatusError", message="down attempt 4 failed (after 3 retries)"
    )
    assert agent.calls == {"down": 4}


def test_rate_limits_are_counted_lower_the_limit_once_per_burst_and_are_retried(
    agent: ModuleType,
) -> None:
    cases = [case(f"c{i}", burst=4) for i in range(4)]
    result = run(agent, "limited", cases, concurrency=4)
    assert sorted((r.case_id, r.verdict) for r in result.results) == [
        (f"c{i}", "pass") for i in range(4)
    ]
    assert agent.calls == {f"c{i}": 2 for i in range(4)}
    # Four 429s in one burst halve the limit once (4 → 2); the four successful retries then
    # fill one window of 2 and grow it back by one.
    assert result.scheduling == SchedulingStats(
        target_concurrency=4,
        target_concurrency_final=3,
        target_concurrency_lowest=2,
        rate_limited=4,
        retries=4,
        cached_cases=0,
    )
