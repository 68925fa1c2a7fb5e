"""`assay run` switches the garbage collector off while it imports, and on again."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from assay.cli._main import main


def test_the_collector_is_on_again_after_the_run_commands_imports(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as ended:
        main(["run", str(tmp_path / "missing.eval.yaml")])
    assert ended.value.code == 2
    assert gc.isenabled()
