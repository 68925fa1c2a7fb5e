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
