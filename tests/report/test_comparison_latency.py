"""Mean latencies in comparisons keep the digits that tell fast runs apart."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize("module", ["comparison", "comparison_markdown"])
def test_i21_1_sub_10_ms_latencies_are_not_rounded_to_0_ms(module: str) -> None:
    ms = importlib.import_module(f"assay.report.{module}")._ms
    assert [ms(0.352), ms(0.2215), ms(4.26), ms(12.4), ms(1234.5), ms(None)] == [
        "0.352 ms",
        "0.222 ms",
        "4.3 ms",
        "12 ms",
        "1,234 ms",
        "—",
    ]
