"""The SPEC §8 contract the result models keep whoever builds them: an `error` case has no
score, and a case's `hits`/`misses` gather its graders' in grader order; the typed fields
the graders and the runner build results from are the models'."""

from __future__ import annotations

import typing

import pytest
from pydantic import BaseModel

import assay.results
from assay.results import (
    CaseResult,
    CaseResultFields,
    GraderResult,
    GraderResultFields,
    TargetOutput,
    TargetOutputFields,
    TurnResult,
)


def grader(name: str, hits: list[str], misses: list[str]) -> GraderResult:
    return GraderResult(name=name, type="fake", score=0.5, verdict="fail", hits=hits, misses=misses)


def test_i21_12_a_case_gathers_every_graders_hits_and_misses_in_grader_order() -> None:
    case = CaseResult(
        case_id="a",
        score=0.5,
        verdict="fail",
        threshold=0.8,
        grader_results=[
            grader("first", ["h1", "h2"], ["m1"]),
            grader("second", [], ["m2", "m3"]),
            grader("third", ["h3"], []),
        ],
    )
    assert (case.hits, case.misses) == (["h1", "h2", "h3"], ["m1", "m2", "m3"])
    # Stored and read back, the lists are kept as written, not gathered twice.
    again = CaseResult.model_validate_json(case.model_dump_json())
    assert (again.hits, again.misses) == (case.hits, case.misses)


def test_i21_12_a_conversation_gathers_every_turn_with_its_index() -> None:
    turns = [
        TurnResult(
            index=0,
            input="hi",
            score=1.0,
            verdict="pass",
            grader_results=[
                grader("greets", ["said hello"], []),
            ],
        ),
        TurnResult(
            index=1,
            input="bye",
            score=0.0,
            verdict="fail",
            grader_results=[
                grader("greets", [], ["no goodbye"]),
            ],
        ),
    ]
    case = CaseResult(
        case_id="talk",
        score=0.5,
        verdict="fail",
        threshold=0.8,
        grader_results=turns[-1].grader_results,
        turns=turns,
    )
    assert (case.hits, case.misses) == (["turn 0: said hello"], ["turn 1: no goodbye"])


def test_i21_12_given_hits_and_misses_are_kept() -> None:
    case = CaseResult(
        case_id="a",
        score=1.0,
        verdict="pass",
        threshold=0.8,
        grader_results=[grader("g", ["from grader"], [])],
        hits=["given"],
    )
    assert (case.hits, case.misses) == (["given"], [])


def test_i21_3_an_error_case_read_from_an_older_store_loses_its_score() -> None:
    stored = '{"case_id": "r", "score": 1.0, "verdict": "error", "threshold": 0.8}'
    assert CaseResult.model_validate_json(stored).score is None


@pytest.mark.parametrize(
    ("model", "fields"),
    [
        (GraderResult, GraderResultFields),
        (CaseResult, CaseResultFields),
        (TargetOutput, TargetOutputFields),
    ],
)
def test_the_typed_constructor_fields_match_their_result_model(
    model: type[BaseModel], fields: type
) -> None:
    """The graders and the runner build results from these dicts: mypy checks them where they
    are filled, and this keeps their keys, types and required keys the model's."""
    hints = typing.get_type_hints(fields, vars(assay.results))
    assert hints == {name: f.annotation for name, f in model.model_fields.items()}
    required = {name for name, f in model.model_fields.items() if f.is_required()}
    marked = typing.get_type_hints(fields, vars(assay.results), include_extras=True)
    assert {
        name for name, hint in marked.items() if typing.get_origin(hint) is typing.Required
    } == (required)


def test_i23_3_a_usage_tally_sums_as_add_usage_does_without_a_model_per_addition() -> None:
    from assay.results import TokenUsage, UsageTally, add_usage

    for usages in ([], [None, None], [TokenUsage(input=3, output=1), None, TokenUsage(input=2)]):
        tally = UsageTally()
        folded: TokenUsage | None = None
        for usage in usages:
            tally.add(usage)
            folded = add_usage(folded, usage)
        assert tally.total == folded
