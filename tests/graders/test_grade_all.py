"""grade_all: results in grader order; graders that await I/O overlap, the others run in turn."""

from __future__ import annotations

import asyncio
from typing import Literal

from assay.graders import Composite, Contains, Grader, GradingContext, Measurement, grade_all

EVENTS: list[str] = []


class _Slow(Grader):
    """Waits on 'I/O' and logs when it starts and ends."""

    type: Literal["slow"] = "slow"
    label: str = ""
    io: bool = True

    @property
    def awaits_io(self) -> bool:
        return self.io

    async def measure(self, ctx: GradingContext) -> Measurement:
        EVENTS.append(f"start {self.label}")
        await asyncio.sleep(0.01)
        EVENTS.append(f"end {self.label}")
        return Measurement(score=0.5, hits=[self.label])


def _run(graders: list[Grader]) -> list[str]:
    EVENTS.clear()
    ctx = GradingContext(case_id="c", output="refund", threshold=0.8)
    results = asyncio.run(grade_all(graders, ctx))
    return [r.hits[0] if r.type == "slow" else r.name for r in results]


def test_io_graders_overlap_and_results_keep_grader_order() -> None:
    graders: list[Grader] = [
        _Slow(label="a"),
        Contains(type="contains", value="refund"),
        _Slow(label="b"),
    ]
    assert _run(graders) == ["a", "contains", "b"]
    assert EVENTS == ["start a", "start b", "end a", "end b"]


def test_cpu_graders_run_one_after_another() -> None:
    graders: list[Grader] = [_Slow(label="a", io=False), _Slow(label="b", io=False)]
    assert _run(graders) == ["a", "b"]
    assert EVENTS == ["start a", "end a", "start b", "end b"]


def test_a_single_io_grader_runs_in_turn() -> None:
    graders: list[Grader] = [_Slow(label="a", io=False), _Slow(label="b")]
    assert _run(graders) == ["a", "b"]
    assert EVENTS == ["start a", "end a", "start b", "end b"]


def test_a_composite_awaits_io_when_a_member_does() -> None:
    plain = Contains(type="contains", value="x")
    assert not Composite.model_construct(type="composite", assertions=[plain]).awaits_io
    mixed = Composite.model_construct(type="composite", assertions=[plain, _Slow(label="a")])
    assert mixed.awaits_io
