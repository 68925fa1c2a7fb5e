"""The project config (`assay.yaml`): discovery, paths, and its verdict knobs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.config import load_project
from assay.errors import ConfigError
from tests.conftest import write


def test_project_store_path_is_relative_to_the_project_file(tmp_path: Path) -> None:
    write(tmp_path / "assay.yaml", "store: runs/assay.db\n")
    (tmp_path / "sub").mkdir()
    os.chdir(tmp_path / "sub")
    assert load_project().store == str(tmp_path / "runs" / "assay.db")


def test_project_threshold_and_verdicts_pass_must_agree(tmp_path: Path) -> None:
    write(tmp_path / "assay.yaml", "threshold: 0.8\nverdicts: {pass: 0.9}\n")
    with pytest.raises(ConfigError) as info:
        load_project()
    assert str(info.value) == (
        "assay.yaml:1: threshold (0.8) and verdicts.pass (0.9) disagree; they are the same "
        "setting, keep one"
    )
