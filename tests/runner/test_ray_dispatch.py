"""The Ray executor's pure parts, and Ray staying unloaded unless `--executor ray` asks."""

from __future__ import annotations

import subprocess
import sys

import pytest

from assay.runner._ray import shares


@pytest.mark.parametrize(
    ("total", "parts", "expected"),
    [(3, 2, [2, 1]), (8, 2, [4, 4]), (8, 3, [3, 3, 2]), (5, 5, [1, 1, 1, 1, 1]), (1, 1, [1])],
)
def test_limits_split_into_shares_that_sum_to_the_limit(
    total: int, parts: int, expected: list[int]
) -> None:
    assert shares(total, parts) == expected
    assert sum(expected) == total


def test_neither_import_assay_nor_the_cli_loads_ray() -> None:
    probe = (
        "import sys, assay, assay.runner, assay.api, assay.cli.run; "
        "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
