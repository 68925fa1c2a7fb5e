"""Timing one whole `assay run` process: wall seconds and peak RSS, shared by the benchmarks."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ASSAY = str(Path(sys.executable).with_name("assay"))


def time_assay_run(suite: Path, directory: Path, ok: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """Run `assay run SUITE` in `directory` (storing there, no cache); (wall s, peak RSS MB).

    Raises:
        RuntimeError: the exit code is not in `ok`, with assay's stderr.
    """
    started = time.perf_counter()
    proc = subprocess.Popen(
        [ASSAY, "run", str(suite), "--no-cache", "--db", str(directory / "runs.db")],
        cwd=directory,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    assert proc.stderr is not None
    with proc.stderr:
        if code not in ok:
            raise RuntimeError(f"assay run failed ({code}): {proc.stderr.read().decode()}")
    return wall, usage.ru_maxrss / 1024.0


@dataclass(frozen=True)
class Timing:
    """One whole process: wall and CPU seconds (its children's included), its own peak RSS
    (`ru_maxrss`: the largest of the process and its children), and the peak of the summed RSS
    of the process tree (the assay process and its writer process together), sampled."""

    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    peak_tree_rss_mb: float


def _tree(pid: int) -> list[int]:
    """`pid` and its descendants, from /proc's `children` lists (Linux)."""
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                stack += [int(child) for child in task.read_text().split()]
    return found


def _tree_rss_mb(pid: int) -> float:
    total = 0
    for member in _tree(pid):
        with contextlib.suppress(OSError, ValueError, IndexError):
            total += int(Path(f"/proc/{member}/statm").read_text().split()[1])
    return total * _PAGE / 2**20


_PAGE = os.sysconf("SC_PAGE_SIZE")


def time_command(argv: list[str], cwd: Path, *, sample_s: float = 0.05) -> Timing:
    """Run `argv` in `cwd` (stdout discarded) and time it; its RSS tree is sampled every
    `sample_s`.

    Raises:
        RuntimeError: it exits non-zero (with its stderr).
    """
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = [0.0]
    finished = threading.Event()

    def sample() -> None:
        while not finished.wait(sample_s):
            peak[0] = max(peak[0], _tree_rss_mb(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    finished.set()
    sampler.join()
    code = os.waitstatus_to_exitcode(status)
    assert proc.stderr is not None
    with proc.stderr:
        if code != 0:
            raise RuntimeError(f"{argv[0]} failed ({code}): {proc.stderr.read().decode()}")
    cpu = usage.ru_utime + usage.ru_stime
    return Timing(wall, cpu, usage.ru_maxrss / 1024.0, peak[0])
