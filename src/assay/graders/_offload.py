"""Running a grader's CPU-bound measurement off the event loop when it is long enough to matter.

The event loop also times target calls: while a grader computes on it, every other case's
reply waits to be noticed, and its latency grows. A worker thread still shares the GIL, but
the interpreter hands the GIL back every switch interval (5 ms), so the loop keeps running.
A thread costs ~0.08 ms per call here, so short texts stay on the loop: `make bench` grades
100,000 short outputs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

__all__ = ["OFF_LOOP_CHARS", "off_the_loop"]

T = TypeVar("T")

OFF_LOOP_CHARS = 4_000
"""Texts at least this long are measured in a worker thread. The tone heuristics (every
dimension) took 0.7 ms for 1,000 characters, 2.6 ms for 4,000 and 64 ms for 47,000 here: from
this length on the thread costs a few percent of the measurement, and the loop would otherwise
be held for milliseconds, growing with the text."""


async def off_the_loop(measure: Callable[[str], T], text: str) -> T:
    """`measure(text)`, in a worker thread when `text` is long (`OFF_LOOP_CHARS`)."""
    if len(text) < OFF_LOOP_CHARS:
        return measure(text)
    return await asyncio.to_thread(measure, text)
