"""RunProgress: plain periodic lines off a terminal, a transient live bar on one."""

from __future__ import annotations

import io
import re
from types import SimpleNamespace

import pytest
from rich.console import Console

from assay.cli import _progress
from assay.cli._progress import PLAIN_EVERY_S, RunProgress
from assay.results import CaseResult, Verdict

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def result(verdict: Verdict) -> CaseResult:
    return CaseResult(case_id=f"case-{verdict}", score=None, verdict=verdict, threshold=0.8)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """A hand-driven `time.monotonic` for the progress module only."""
    now = SimpleNamespace(t=100.0)
    monkeypatch.setattr(_progress, "time", SimpleNamespace(monotonic=lambda: now.t))
    return now


def plain_console() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=False, width=200), buffer


def test_a_plain_line_is_printed_every_interval_with_counts_rate_and_eta(
    clock: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_progress, "PLAIN_EVERY_S", 0)
    console, buffer = plain_console()
    with RunProgress(console, "support", 4) as progress:
        steps: list[tuple[float, Verdict]] = [(101.0, "pass"), (102.0, "fail"), (104.0, "error")]
        for at, verdict in steps:
            clock.t = at
            progress.advance(result(verdict))
        clock.t = 104.0
        progress.advance(result("borderline"))
    assert buffer.getvalue().splitlines() == [
        "support: 1/4 done (1 pass 0 borderline 0 fail 0 error), 1.0 cases/s, ETA 3s",
        "support: 2/4 done (1 pass 0 borderline 1 fail 0 error), 1.0 cases/s, ETA 2s",
        "support: 3/4 done (1 pass 0 borderline 1 fail 1 error), 0.8 cases/s, ETA 1s",
        "support: 4/4 done (1 pass 1 borderline 1 fail 1 error), 1.0 cases/s",
    ]
    assert (progress.done, progress.counts) == (
        4,
        {"pass": 1, "borderline": 1, "fail": 1, "error": 1},
    )


def test_by_default_a_plain_line_every_ten_seconds_and_one_at_the_end(
    clock: SimpleNamespace,
) -> None:
    assert PLAIN_EVERY_S == 10.0
    console, buffer = plain_console()
    with RunProgress(console, "support", 5) as progress:
        for at in (101.0, 105.0, 109.9, 110.0, 112.0):
            clock.t = at
            progress.advance(result("pass"))
    assert buffer.getvalue().splitlines() == [
        "support: 4/5 done (4 pass 0 borderline 0 fail 0 error), 0.4 cases/s, ETA 2s",
        "support: 5/5 done (5 pass 0 borderline 0 fail 0 error), 0.4 cases/s",
    ]


def test_a_resumed_run_counts_from_what_was_done(
    clock: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_progress, "PLAIN_EVERY_S", 0)
    console, buffer = plain_console()
    with RunProgress(console, "support", 10, done=8) as progress:
        clock.t = 102.0
        progress.advance(result("pass"))
        progress.advance(result("fail"))
    # The rate counts only the cases run now, not those finished before the resume.
    assert buffer.getvalue().splitlines() == [
        "support: 9/10 done (1 pass 0 borderline 0 fail 0 error), 0.5 cases/s, ETA 2s",
        "support: 10/10 done (1 pass 0 borderline 1 fail 0 error), 1.0 cases/s",
    ]


def test_no_rate_and_no_eta_before_time_has_passed(
    clock: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_progress, "PLAIN_EVERY_S", 0)
    console, buffer = plain_console()
    with RunProgress(console, "support", 2) as progress:
        assert progress.rate() == 0.0
        progress.advance(result("pass"))
    assert buffer.getvalue() == (
        "support: 1/2 done (1 pass 0 borderline 0 fail 0 error), 0.0 cases/s\n"
    )


def test_on_a_terminal_a_live_bar_is_drawn_and_cleared_at_exit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_progress, "PLAIN_EVERY_S", 0)
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=160)
    with RunProgress(console, "support", 3) as progress:
        for verdict in ("pass", "fail", "error"):
            progress.advance(result(verdict))
        drawn = buffer.getvalue()
    after = buffer.getvalue()
    assert ANSI.sub("", drawn).startswith("\rsupport ")
    assert after.startswith(drawn)
    # The last frame shows the counts and the rate...
    frames = ANSI.sub("", after).split("\r")
    last = next(f for f in reversed(frames) if f.strip())
    assert re.fullmatch(
        r"support ━+ 3/3 1 pass 0 borderline 1 fail 1 error \d+\.\d/s \S+ ETA \S+\n", last
    )
    # ... then the transient bar erases itself (cursor up, clear line) and nothing else follows.
    assert after.endswith("\x1b[1A\x1b[2K")
    assert "done (" not in after  # no plain lines on a terminal


def test_i21_4_a_resumed_run_counts_the_verdicts_it_stored_before(
    clock: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After `--resume`, the verdicts shown add up to the cases done (they counted only the
    cases run now: `10/10 done (1 pass 0 borderline 1 fail 0 error)`)."""
    monkeypatch.setattr(_progress, "PLAIN_EVERY_S", 0)
    console, buffer = plain_console()
    stored = {"pass": 6, "borderline": 1, "fail": 0, "error": 1}
    with RunProgress(console, "support", 10, done=8, counts=stored) as progress:
        clock.t = 102.0
        progress.advance(result("pass"))
        progress.advance(result("fail"))
    assert buffer.getvalue().splitlines()[-1] == (
        "support: 10/10 done (7 pass 1 borderline 1 fail 1 error), 1.0 cases/s"
    )
