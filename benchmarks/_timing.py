"""Timing one whole `assay run` process: wall seconds and peak RSS, shared by the benchmarks."""

from __future__ import annotations

import os
import subprocess
import sys
import time
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
