"""Run the installed `assay` console script in a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ASSAY = str(Path(sys.executable).with_name("assay"))


def assay_env(**extra: str) -> dict[str, str]:
    """The environment of a CLI run: no inherited store URL or terminal width, plus `extra`."""
    # GITHUB_STEP_SUMMARY too: under GitHub Actions every run would append to the job summary.
    dropped = ("ASSAY_DATABASE_URL", "COLUMNS", "GITHUB_STEP_SUMMARY")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    return {**env, **extra}


def assay(
    *args: str, cwd: Path, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `assay ARGS` in `cwd` with a clean store environment (or `env`)."""
    env = env if env is not None else assay_env()
    return subprocess.run(
        [ASSAY, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def interrupt_once_stored(
    args: list[str], *, cwd: Path, db: Path, stored: int, env: dict[str, str]
) -> tuple[str, int, str]:
    """Start `assay ARGS`, send SIGINT once `stored` cases of its run are in `db` (and the next
    case is under way), and wait for it to end: (run id, exit code, stderr)."""
    import signal
    import time

    from assay.store import SQLiteStore

    proc = subprocess.Popen(
        [ASSAY, *args],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        deadline = time.monotonic() + 60
        run_id = None
        while run_id is None and time.monotonic() < deadline:
            if db.exists():
                with SQLiteStore(db) as store:
                    runs = store.list_runs()
                    if runs and len(list(store.iter_case_results(runs[0].id))) == stored:
                        run_id = runs[0].id
            time.sleep(0.05)
        assert run_id is not None, f"{stored} cases were never stored in {db}"
        time.sleep(0.3)  # the next case is under way
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    return run_id, proc.returncode, stderr
