"""A case that runs once builds no `SampleResult`, and gives its result its hits and misses:
the same result as the general path (a repeated case, whose samples are stored)."""

from __future__ import annotations

import asyncio

import pytest

from assay.config import LoadedSuite, load_project, parse_suite
from assay.results import CaseResult, ErrorInfo, RunResult, TokenUsage
from assay.runner import RunOptions, execute, plan_run
from assay.store import MemorySink

REPLY = "Our refund policy allows returns within 30 days."
GRADERS = [
    {"type": "contains", "value": "refund"},
    {"type": "regex", "value": r"\d+ weeks"},
    {"type": "is-json", "negate": True},
    {"type": "similarity", "value": REPLY, "min_score": 0.5},
    {"type": "icontains", "value": "POLICY", "weight": 2.0},
    {"type": "equals", "value": "no", "required": True},
]


def _suite(repeat: int, test: dict[str, object], reply: object = REPLY) -> LoadedSuite:
    return parse_suite(
        {
            "name": "once",
            "target": {"type": "fake", "responses": [reply]},
            "execution": {"repeat": repeat, "verdicts": {"borderline": 0.3}},
            "tests": [
                {"id": "c", "tags": ["t"], **({} if "turns" in test else {"input": "q"}), **test}
            ],
        }
    )


def _run(loaded: LoadedSuite) -> RunResult:
    sink = MemorySink()
    plan = plan_run(loaded, load_project(), RunOptions())
    asyncio.run(execute(plan, sink))
    return sink.run


def _timeless(case: CaseResult) -> dict[str, object]:
    """The stored document without the measured times, and without what differs by design
    between one run and two (summed usage and cost, an error's "n of n samples")."""
    document = case.model_dump(
        mode="json", exclude={"samples", "duration_ms", "error", "token_usage", "cost_usd"}
    )
    for result in document["grader_results"]:
        result.pop("duration_ms")
    for turn in document["turns"]:
        turn.pop("duration_ms")
        for result in turn["grader_results"]:
            result.pop("duration_ms")
    return document


@pytest.mark.parametrize(
    ("test", "reply"),
    [
        pytest.param({"assertions": GRADERS}, REPLY, id="graders"),
        pytest.param({"assertions": GRADERS}, {"error": "model overloaded"}, id="target-error"),
        pytest.param(
            {"assertions": GRADERS},
            {"output": REPLY, "token_usage": {"input": 3, "output": 4}, "cost_usd": 0.5},
            id="usage-and-cost",
        ),
        pytest.param(
            {"turns": [{"input": "a"}, {"input": "b"}], "assertions": GRADERS[:3]},
            REPLY,
            id="conversation",
        ),
    ],
)
def test_i10_a_case_run_once_stores_what_a_repeated_case_stores_for_the_same_samples(
    test: dict[str, object], reply: object
) -> None:
    [once] = _run(_suite(1, test, reply)).results
    [twice] = _run(_suite(2, test, reply)).results
    assert once.samples == []
    assert [s.index for s in twice.samples] == [0, 1]
    assert _timeless(once) == _timeless(twice)
    error = reply.get("error") if isinstance(reply, dict) else None
    assert once.error == (None if error is None else ErrorInfo(type="TargetError", message=error))
    usage = reply.get("token_usage") if isinstance(reply, dict) else None
    assert once.token_usage == (None if usage is None else TokenUsage(input=3, output=4))
    assert (once.cost_usd, twice.cost_usd) == ((0.5, 1.0) if usage else (None, None))


def test_i10_the_hits_and_misses_given_are_those_the_result_gathers() -> None:
    """The runner passes a single case's hits and misses; `CaseResult` would gather the same
    ones itself. A conversation's stay gathered turn by turn (prefixed `turn N: `)."""
    [single] = _run(_suite(1, {"assertions": GRADERS})).results
    conversation = {"turns": [{"input": "a"}, {"input": "b"}], "assertions": GRADERS[:2]}
    [talk] = _run(_suite(1, conversation)).results
    for case in (single, talk):
        gathered = CaseResult.model_validate(case.model_dump(exclude={"hits", "misses"}))
        assert (case.hits, case.misses) == (gathered.hits, gathered.misses)
    assert single.hits[0] == "contains 'refund'"
    assert single.misses and all(not m.startswith("turn") for m in single.misses)
    assert talk.hits and all(h.startswith("turn ") for h in talk.hits)
