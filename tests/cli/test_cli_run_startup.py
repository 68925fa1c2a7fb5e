"""The `assay` executable switches the collector off while `run` imports, then freezes what they
made; `main()` called inside somebody's process leaves the collector alone."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

from assay.cli._main import main

_EXECUTABLE = """
import atexit, gc, sys
from assay.cli import console
atexit.register(lambda: print(gc.isenabled(), gc.get_freeze_count() > 0))
sys.argv = ["assay", "run", {suite!r}]
console()
"""


def test_the_executable_freezes_what_the_run_commands_imports_made(tmp_path: Path) -> None:
    code = _EXECUTABLE.format(suite=str(tmp_path / "missing.eval.yaml"))
    ended = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert ended.returncode == 2, ended.stderr
    # The collector is on again, and the imports' objects are out of its reach.
    assert ended.stdout.split() == ["True", "True"]


def test_i21_7_main_in_a_host_process_leaves_its_collector_alone(tmp_path: Path) -> None:
    gc.unfreeze()
    with pytest.raises(SystemExit) as ended:
        main(["run", str(tmp_path / "missing.eval.yaml")])
    assert ended.value.code == 2
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
