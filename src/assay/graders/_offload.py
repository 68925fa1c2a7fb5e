"""Running a grader's CPU-bound measurement off the event loop when it is long enough to matter.

The event loop also times target calls: while a grader computes on it, every other case's
reply waits to be noticed, and its latency grows. A worker thread still shares the GIL, but
the interpreter hands the GIL back every switch interval (5 ms), so the loop keeps running.
A thread costs ~0.1 ms per call, so short texts, graded in well under that interval, stay on
the loop: `make bench` grades 100,000 short outputs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

__all__ = ["OFF_LOOP_CHARS", "off_the_loop"]

T = TypeVar("T")

OFF_LOOP_CHARS = 4_000
"""Texts at least this long are measured in a worker thread. The tone heuristics cost about
1.5 ms per 1,000 characters here (71 ms for 47,000), so from this length on a measurement
holds the loop longer than a GIL switch interval; shorter ones finish within it."""


async def off_the_loop(measure: Callable[[str], T], text: str) -> T:
    """`measure(text)`, in a worker thread when `text` is long (`OFF_LOOP_CHARS`)."""
    if len(text) < OFF_LOOP_CHARS:
        return measure(text)
    return await asyncio.to_thread(measure, text)
