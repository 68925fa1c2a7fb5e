"""`assay run` switches the garbage collector off while it imports, then freezes what they made."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from assay.cli._main import main


def test_the_collector_is_on_again_after_the_run_commands_imports(tmp_path: Path) -> None:
    gc.unfreeze()
    try:
        with pytest.raises(SystemExit) as ended:
            main(["run", str(tmp_path / "missing.eval.yaml")])
        assert ended.value.code == 2
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0  # the imports' objects are out of the collector's reach
    finally:
        gc.unfreeze()
