"""Mean latencies in comparisons keep the digits that tell fast runs apart."""

from __future__ import annotations

from assay.comparison import compare
from assay.report._numbers import latency as ms
from assay.report.comparison_markdown import comparison_markdown
from tests.comparison._runs import run, same


def test_i21_1_sub_10_ms_latencies_are_not_rounded_to_0_ms() -> None:
    # The terminal and the Markdown comparison both show latencies through this function.
    assert [ms(0.352), ms(0.2215), ms(4.26), ms(12.4), ms(1234.5), ms(None)] == [
        "0.352 ms",
        "0.222 ms",
        "4.3 ms",
        "12 ms",
        "1,234 ms",
        "—",
    ]


def test_i21_1_the_markdown_comparison_lists_the_latency_note() -> None:
    base, head = (
        run("b", *same(4, "pass", 0.9, ms=0.025)),
        run("h", *same(4, "pass", 0.9, ms=0.036)),
    )
    text = comparison_markdown(compare(base, head), base, head)
    assert "**✅ No regression**" in text
    assert (
        "- note: mean case latency rose 44.0% (allowed 20.0%), not flagged: by 0.011 ms, "
        "under 1 ms\n" in text
    )
