"""The pairwise section of `assay compare`'s terminal and Markdown reports."""

from __future__ import annotations

from assay.comparison import PairwiseCase, summarise_pairwise
from assay.report._pairwise import pairwise_lines, pairwise_markdown


def _loss(case_id: str) -> PairwiseCase:
    return PairwiseCase(case_id, "loss", True, "A", "B", ["", ""])


def test_i28_3_the_cases_the_head_lost_are_named_up_to_20() -> None:
    cases = [_loss(f"l{i}") for i in range(22)]
    cases.append(PairwiseCase("w", "win", True, "B", "A", ["", ""]))
    result = summarise_pairwise(
        cases, judge="openai j", prompt="p", judge_calls=46, cached_calls=4, judge_cost_usd=0.0123
    )
    named = ", ".join(f"l{i}" for i in range(20))
    assert pairwise_lines(result) == [
        "head win rate 4.3%, 95% CI [0.8, 21.0]% over 23 judged cases (1 won, 22 lost, 0 tied; "
        "a tie counts half)",
        "position-inconsistent answers: 0 of 23 (0.0%)",
        "judge openai j: 46 calls (4 cached, $0.0123)",
        f"head lost: {named} (+ 2 more)",
    ]
    markdown = "".join(pairwise_markdown(result))
    assert markdown.endswith(
        "| 4.3% | [0.8, 21.0]% | 1 | 22 | 0 | 0 of 23 (0.0%) | 23 of 23 |\n\n"
        "A tie (the two answers disagree, or both say tie) counts as half a win.\n\n"
        f"Head lost: {', '.join(f'`l{i}`' for i in range(20))} (+ 2 more).\n\n"
    )


def test_i28_3_nothing_judged_says_so() -> None:
    result = summarise_pairwise(
        [PairwiseCase("e", None, None, None, None, [], "boom")], judge="openai j", prompt="p"
    )
    assert pairwise_lines(result) == [
        "no case judged: the judge failed on every paired case (1)",
        "judge openai j: 0 calls (0 cached)",
    ]
    assert "| — | — | 0 | 0 | 0 | — | 0 of 1 |" in "".join(pairwise_markdown(result))
    empty = summarise_pairwise([], judge="openai j", prompt="p")
    assert pairwise_lines(empty)[0] == "no case judged: no case has an output in both runs"
