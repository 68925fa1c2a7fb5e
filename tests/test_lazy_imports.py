"""The read-only commands' imports stay light: `assay.config` and `assay.api` load on use."""

from __future__ import annotations

import subprocess
import sys

import pytest

import assay.api
import assay.config


@pytest.mark.parametrize(
    "statement",
    [
        "from assay.config import project_store",
        "from assay.api import compare_stored, read_export",
    ],
)
def test_reading_runs_does_not_import_graders_or_targets(statement: str) -> None:
    probe = f"import sys; {statement}; print(sorted(m for m in sys.modules if m in "
    probe += "('assay.graders', 'assay.targets', 'assay.runner')))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_every_exported_name_resolves_and_unknown_names_fail() -> None:
    for package in (assay.config, assay.api):
        for name in package.__all__:
            assert getattr(package, name) is not None
        with pytest.raises(AttributeError, match=r"has no attribute 'nope'"):
            _ = package.nope  # type: ignore[attr-defined]
