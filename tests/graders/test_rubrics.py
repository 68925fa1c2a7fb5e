"""rubrics (SPEC §5.2) through the real SDK against the local server's scripted judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.graders._grading import error_of, load_errors
from tests.graders._judging import grade_judged

from assay.results import Detail
from assay.testing import FakeOpenAIServer


def item(id: str, outcome: str | None = None, **options: Any) -> dict[str, Any]:
    return {"id": id, "outcome": outcome or f"{id} holds", **options}


def rubric(*items: dict[str, Any], **options: Any) -> dict[str, Any]:
    return {"type": "rubrics", "rubrics": list(items), **options}


def verdict(id: str, score: int, **fields: Any) -> dict[str, Any]:
    return {
        "id": id,
        "score": score,
        "satisfied": score >= 7,
        "reasoning": f"{id} reasoning.",
        "evidence": f"{id} quote",
        **fields,
    }


def reply(*verdicts: dict[str, Any]) -> dict[str, Any]:
    """Judge values: each verdict under its item's id (the server fills in the pinned outcome
    from the request's schema)."""
    return {"items": {v["id"]: {k: x for k, x in v.items() if k != "id"} for v in verdicts}}


def raw(*verdicts: dict[str, Any]) -> str:
    """A reply's text exactly as given: repeated ids stay repeated, each verdict carries the
    outcome `<id> holds` unless it says otherwise."""
    entries = [
        f"{json.dumps(v['id'])}: "
        + json.dumps({"outcome": f"{v['id']} holds", **{k: x for k, x in v.items() if k != "id"}})
        for v in verdicts
    ]
    return '{"items": {' + ", ".join(entries) + "}}"


def band(lo: int, hi: int, outcome: str = "band") -> dict[str, Any]:
    return {"score_range": [lo, hi], "outcome": outcome}


THREE = rubric(
    item("accuracy", "Factually correct", weight=2),
    item("tone", "Polite"),
    item("brevity", "Under three sentences", weight=1),
)


def test_the_score_is_the_weighted_mean_of_item_scores_in_one_call() -> None:
    judged = reply(verdict("accuracy", 9), verdict("tone", 6), verdict("brevity", 3))
    with FakeOpenAIServer(judge=judged) as server:
        result = grade_judged(THREE, "The refund window is 30 days.", server, threshold=0.5)
        asked = server.request_count
    # (0.9·2 + 0.6·1 + 0.3·1) / 4
    assert result.score == pytest.approx(0.675, abs=1e-12)
    assert (result.verdict, result.error, asked) == ("pass", None, 1)
    assert result.hits == ["accuracy 9/10: Factually correct", "tone 6/10: Polite"]
    assert result.misses == ["brevity 3/10: Under three sentences"]
    assert result.reasoning == "2 of 3 rubric items passed"
    assert result.details[0] == Detail(
        check="rubric.accuracy",
        passed=True,
        expected="Factually correct",
        actual="9/10",
        message='accuracy reasoning. Evidence: "accuracy quote"',
    )
    assert [d.check for d in result.details] == ["rubric.accuracy", "rubric.tone", "rubric.brevity"]
    assert result.judge_model == "judge-model"
    assert result.judge_prompt is not None and result.judge_prompt.startswith("rubrics@")


def test_the_items_are_matched_by_id_whatever_order_the_judge_answers_in() -> None:
    judged = reply(verdict("brevity", 10), verdict("accuracy", 0), verdict("tone", 0))
    with FakeOpenAIServer(judge=judged) as server:
        result = grade_judged(THREE, "Hi", server)
    assert result.score == pytest.approx(0.25, abs=1e-12)
    assert [d.actual for d in result.details] == ["0/10", "0/10", "10/10"]


def test_a_weight_0_item_is_reported_but_not_scored() -> None:
    spec = rubric(item("a"), item("b", weight=0))
    with FakeOpenAIServer(judge=reply(verdict("a", 8), verdict("b", 0))) as server:
        result = grade_judged(spec, "Hi", server)
    assert result.score == pytest.approx(0.8, abs=1e-12)
    assert result.misses == ["b 0/10: b holds"]


@pytest.mark.parametrize(("score", "passed"), [(7, True), (6, False)])
def test_min_score_is_compared_on_the_judges_0_to_10_scale(score: int, passed: bool) -> None:
    spec = rubric(item("a", min_score=0.7))
    with FakeOpenAIServer(judge=reply(verdict("a", score))) as server:
        result = grade_judged(spec, "Hi", server)
    assert result.details[0].passed is passed
    assert (len(result.hits), len(result.misses)) == ((1, 0) if passed else (0, 1))


@pytest.mark.parametrize(("score", "passed"), [(8, True), (7, False)])
def test_without_min_score_an_item_passes_at_the_case_threshold(score: int, passed: bool) -> None:
    with FakeOpenAIServer(judge=reply(verdict("a", score))) as server:
        result = grade_judged(rubric(item("a")), "Hi", server, threshold=0.8)
    assert result.details[0].passed is passed


def test_a_failed_required_item_fails_the_grader_with_score_0() -> None:
    spec = rubric(item("accuracy", required=True, min_score=0.7), item("tone", weight=3))
    with FakeOpenAIServer(judge=reply(verdict("accuracy", 6), verdict("tone", 10))) as server:
        result = grade_judged(spec, "Hi", server, threshold=0.1)
    assert (result.score, result.verdict, result.error) == (0.0, "fail", None)
    assert result.reasoning == (
        "required item 'accuracy' (6/10, needs 7/10) failed; 1 of 2 rubric items passed"
    )
    assert [d.passed for d in result.details] == [False, True]


def test_a_passed_required_item_leaves_the_weighted_score() -> None:
    spec = rubric(item("accuracy", required=True, min_score=0.7), item("tone"))
    with FakeOpenAIServer(judge=reply(verdict("accuracy", 7), verdict("tone", 3))) as server:
        result = grade_judged(spec, "Hi", server, threshold=0.5)
    assert result.score == pytest.approx(0.5, abs=1e-12)
    assert result.verdict == "pass"


def test_the_judges_satisfied_flag_is_noted_when_it_disagrees_with_the_score() -> None:
    judged = reply(verdict("a", 5, satisfied=True, evidence=""))
    with FakeOpenAIServer(judge=judged) as server:
        result = grade_judged(rubric(item("a")), "Hi", server)
    assert result.details[0].message == (
        "a reasoning. (the judge called it satisfied, but the score is below the bar)"
    )


def test_the_prompt_shows_every_item_its_bands_and_the_output_as_data() -> None:
    spec = rubric(
        item("accuracy", "Factually correct", score_ranges=[band(0, 5, "Wrong"), band(6, 10)]),
        item("tone", "Polite and warm"),
    )
    with FakeOpenAIServer(judge=reply(verdict("accuracy", 8), verdict("tone", 8))) as server:
        grade_judged(spec, "Thirty days.", server, input="How long?")
        body = server.requests[-1]
    user = body["messages"][1]["content"]
    assert (
        "- id `accuracy`: Factually correct\n"
        "  Score bands for this item:\n"
        "  - 0–5: Wrong\n"
        "  - 6–10: band\n"
        "- id `tone`: Polite and warm\n"
    ) in user
    assert "<<<OUTPUT " in user and "Thirty days." in user and "How long?" in user
    assert body["response_format"]["type"] == "json_schema"


@pytest.mark.parametrize(
    ("judged", "problem"),
    [
        (raw(verdict("a", 8)), "$.items: 'b' is a required property"),
        (
            raw(verdict("a", 8), verdict("a", 9), verdict("b", 8)),
            "the reply gives the key 'a' more than once",
        ),
        (
            raw(verdict("a", 8), verdict("b", 8), verdict("c", 8)),
            "$.items: Additional properties are not allowed ('c' was unexpected)",
        ),
        (
            raw(verdict("a", 8), verdict("b", 8, outcome="b holds mostly")),
            "$.items.b.outcome: 'b holds mostly' is not one of ['b holds']",
        ),
    ],
)
def test_i21_9_a_reply_not_one_verdict_per_item_is_re_asked_then_errors(
    judged: str, problem: str
) -> None:
    with FakeOpenAIServer(reply=lambda body: judged) as server:
        result = grade_judged(rubric(item("a"), item("b")), "Hi", server)
        asked = server.request_count
        retry = server.requests[-1]["messages"][-1]["content"]
    assert result.score is None and result.verdict == "error"
    assert result.error is not None and result.error.type == "JudgeError"
    assert "no valid reply after 3 attempts" in result.error.message
    assert problem in result.error.message and problem in retry
    assert asked == 3


def test_a_reply_completed_on_the_re_ask_is_used() -> None:
    answers = iter([raw(verdict("a", 9)), raw(verdict("a", 9), verdict("b", 5))])
    with FakeOpenAIServer(reply=lambda body: next(answers)) as server:
        result = grade_judged(rubric(item("a"), item("b")), "Hi", server)
        asked = server.request_count
    assert result.score == pytest.approx(0.7, abs=1e-12)
    assert asked == 2


def test_a_score_outside_0_to_10_is_a_schema_error() -> None:
    with FakeOpenAIServer(judge=reply(verdict("a", 11))) as server:
        result = grade_judged(rubric(item("a")), "Hi", server)
    assert result.error is not None and "less than or equal to 10" in result.error.message


def test_http_failures_become_an_error_never_a_score() -> None:
    with FakeOpenAIServer(judge=reply(verdict("a", 10)), faults={"500": 1.0}) as server:
        result = grade_judged(rubric(item("a")), "Hi", server)
        asked = server.request_count
    assert result.score is None and result.verdict == "error"
    assert result.error is not None and "HTTP 500" in result.error.message
    assert asked == 4


def test_without_a_judge_the_grader_errors_with_how_to_configure_one() -> None:
    result = grade_judged(rubric(item("a")), "Hi", None)
    assert result.error is not None and "--judge-model" in result.error.message


@pytest.mark.parametrize(
    ("bands", "message"),
    [
        ([band(1, 5), band(6, 10)], "score_ranges[0] [1, 5] must start at 0"),
        ([band(0, 5), band(6, 9)], "score_ranges[1] [6, 9] must end at 10"),
        (
            [band(0, 5), band(4, 10)],
            "score_ranges[1] [4, 10] overlaps score_ranges[0] [0, 5]: 4–5 is in both",
        ),
        (
            [band(0, 4), band(6, 10)],
            "score_ranges[1] [6, 10] leaves a gap after score_ranges[0] [0, 4]: 5 is in no band",
        ),
        (
            [band(0, 5), band(6, 10), band(0, 0)],
            "score_ranges[2] [0, 0] is out of order: list the bands from 0 up to 10",
        ),
        ([band(0, 10), band(8, 3)], "score_ranges[1] [8, 3] is reversed; write it low to high"),
    ],
)
def test_score_ranges_must_tile_0_to_10_in_order(bands: list[Any], message: str) -> None:
    assert message in error_of(rubric(item("a", score_ranges=bands)))


def test_score_range_ends_are_integers_0_to_10() -> None:
    assert "less than or equal to 10" in error_of(
        rubric(item("a", score_ranges=[band(0, 5), band(6, 11)]))
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (rubric(item("a"), item("a")), "rubric item id(s) 'a' are not unique"),
        (rubric(item("a", weight=0)), "every rubric item's weight is 0"),
        (rubric(), "at least 1 item"),
        (rubric(item("")), "at least 1 character"),
        (rubric({"id": "a"}), "Field required"),
        (rubric(item("a", min_score=7)), "less than or equal to 1"),
        (rubric(item("a", wieght=2)), "unknown key 'wieght'. Did you mean 'weight'?"),
    ],
)
def test_invalid_items_are_rejected_when_the_suite_loads(
    spec: dict[str, Any], message: str
) -> None:
    assert message in error_of(spec)


def test_a_band_error_is_located_in_the_suite(tmp_path: Path) -> None:
    body = """tests:
  - id: t
    input: hi
    assertions:
      - type: rubrics
        rubrics:
          - id: accuracy
            outcome: Correct
            score_ranges:
              - {score_range: [0, 5], outcome: Wrong}
              - {score_range: [7, 10], outcome: Right}
"""
    (error,) = load_errors(tmp_path, body)
    assert "tests[0].assertions[0].rubrics[0].score_ranges" in error
    assert error.endswith(
        "score_ranges[1] [7, 10] leaves a gap after score_ranges[0] [0, 5]: 6 is in no band"
    )


def test_i21_9_the_request_schema_pins_each_item_by_id_with_its_statement() -> None:
    spec = rubric(item("accuracy", "Factually correct"), item("tone", "Polite"))
    with FakeOpenAIServer(judge=reply(verdict("accuracy", 8), verdict("tone", 8))) as server:
        result = grade_judged(spec, "Hi", server)
        body = server.requests[-1]
    assert result.score == pytest.approx(0.8, abs=1e-12)
    fmt = body["response_format"]["json_schema"]
    assert (fmt["name"], fmt["strict"]) == ("RubricsReply", True)
    items = fmt["schema"]["properties"]["items"]
    assert (items["required"], items["additionalProperties"]) == (["accuracy", "tone"], False)
    for id, statement in [("accuracy", "Factually correct"), ("tone", "Polite")]:
        entry = items["properties"][id]
        assert entry["properties"]["outcome"]["enum"] == [statement]
        assert entry["required"] == ["outcome", "score", "satisfied", "reasoning", "evidence"]
        assert entry["additionalProperties"] is False
