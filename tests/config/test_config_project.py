"""The project config (`assay.yaml`): discovery, paths, and its verdict knobs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.config import load_project, project_store
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


def test_the_runs_commands_read_the_same_store_without_loading_the_project(
    tmp_path: Path,
) -> None:
    # A target the full loader would reject does not stop `assay runs` from finding the store.
    write(tmp_path / "assay.yaml", "store: runs/assay.db\ntargets: {bad: {type: nope}}\n")
    (tmp_path / "sub").mkdir()
    os.chdir(tmp_path / "sub")
    assert project_store() == str(tmp_path / "runs" / "assay.db")
    write(tmp_path / "assay.yaml", "store: postgresql+psycopg://u@h/d\n")
    assert project_store() == "postgresql+psycopg://u@h/d"
    write(tmp_path / "assay.yaml", "store: [a]\n")
    with pytest.raises(ConfigError, match=r"assay\.yaml:1 store: must be a string"):
        project_store()
