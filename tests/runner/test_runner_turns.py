"""Conversation tests: real history turn by turn, graders per turn, folding, stop, errors."""

from __future__ import annotations

import asyncio
import importlib
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from assay.config import load_project, load_suite, parse_suite
from assay.errors import ConfigError
from assay.results import JSON, CaseResult, ErrorInfo, Message, RunResult, TokenUsage, ToolCall
from assay.runner import RunOptions, execute, plan_run
from assay.store import MemorySink
from tests.conftest import write

AGENT_SOURCE = """
calls = []


async def chat(case):
    messages = case["messages"]
    calls.append(messages)
    said = [m["content"] for m in messages if m["role"] == "user"][-1]
    if said == "explode":
        raise RuntimeError("kaboom")
    return f"{len(messages)} messages; you said: {said}"


def tools(case):
    n = len(case["messages"])
    calls.append(case["messages"])
    return {
        "output": f"reply {n}",
        "tool_calls": [{"tool": "lookup", "args": {"n": n}}],
        "token_usage": {"input": n, "output": 1},
        "cost_usd": 0.5,
    }
"""


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """A uniquely named agent module in tmp_path (fresh globals); sys.path/modules restored."""
    name = f"assay_turns_agent_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(AGENT_SOURCE), encoding="utf-8")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    importlib.invalidate_caches()
    yield importlib.import_module(name)
    sys.modules.pop(name, None)


def contains(value: str, name: str | None = None, **extra: JSON) -> JSON:
    grader: dict[str, JSON] = {"type": "contains", "value": value, **extra}
    if name is not None:
        grader["name"] = name
    return grader


SAID = contains("you said", "said")


def run_suite(
    agent: ModuleType,
    tests: list[JSON],
    *,
    function: str = "chat",
    suite: dict[str, JSON] | None = None,
) -> RunResult:
    loaded = parse_suite(
        {
            "name": "conversations",
            "target": {"type": "python", "function": f"{agent.__name__}:{function}"},
            **(suite or {}),
            "tests": tests,
        }
    )
    sink = MemorySink()
    asyncio.run(execute(plan_run(loaded, load_project(), RunOptions()), sink))
    return sink.run


def run_one(agent: ModuleType, test: dict[str, JSON], **kwargs: object) -> CaseResult:
    [only] = run_suite(agent, [{"id": "conv", **test}], **kwargs).results  # type: ignore[arg-type]
    return only


def user(content: str) -> dict[str, str]:
    return {"role": "user", "content": content}


def assistant(content: str) -> dict[str, str]:
    return {"role": "assistant", "content": content}


def turn_view(case: CaseResult) -> list[tuple[int, JSON, str | None, float | None, str]]:
    return [(t.index, t.input, t.output, t.score, t.verdict) for t in case.turns]


# -- the transcript grows with the real replies ------------------------------------------------


def test_each_turn_is_sent_with_the_real_replies_so_far(agent: ModuleType) -> None:
    case = run_one(
        agent,
        {"turns": [{"input": "hello"}, {"input": "again"}, {"input": "bye"}], "assertions": [SAID]},
    )
    first = "1 messages; you said: hello"
    second = "3 messages; you said: again"
    third = "5 messages; you said: bye"
    assert agent.calls == [
        [user("hello")],
        [user("hello"), assistant(first), user("again")],
        [user("hello"), assistant(first), user("again"), assistant(second), user("bye")],
    ]
    assert (case.verdict, case.score, case.error, case.output) == ("pass", 1.0, None, third)
    assert case.input == ["hello", "again", "bye"]
    assert turn_view(case) == [
        (0, "hello", first, 1.0, "pass"),
        (1, "again", second, 1.0, "pass"),
        (2, "bye", third, 1.0, "pass"),
    ]
    assert [t.error for t in case.turns] == [None, None, None]
    assert all(t.duration_ms >= 0 for t in case.turns)
    assert case.messages == [
        Message(role="user", content="hello"),
        Message(role="assistant", content=first),
        Message(role="user", content="again"),
        Message(role="assistant", content=second),
        Message(role="user", content="bye"),
        Message(role="assistant", content=third),
    ]
    assert case.grader_results == case.turns[-1].grader_results


def test_a_turn_can_give_several_messages(agent: ModuleType) -> None:
    scripted = [{"role": "system", "content": "be brief"}, user("and now?")]
    case = run_one(agent, {"turns": [{"input": "hi"}, {"input": scripted}], "assertions": [SAID]})
    reply = "1 messages; you said: hi"
    assert agent.calls[1] == [user("hi"), assistant(reply), *scripted]
    assert case.input == ["hi", scripted]
    assert turn_view(case) == [
        (0, "hi", reply, 1.0, "pass"),
        (1, scripted, "4 messages; you said: and now?", 1.0, "pass"),
    ]


def test_tool_calls_usage_and_cost_accumulate_across_turns(agent: ModuleType) -> None:
    result = run_suite(
        agent,
        [{"id": "conv", "turns": [{"input": "a"}, {"input": "b"}], "assertions": [SAID]}],
        function="tools",
        suite={"assertions": [contains("reply")]},
    )
    [case] = result.results
    assert case.tool_calls == [
        ToolCall(tool="lookup", args={"n": 1}),
        ToolCall(tool="lookup", args={"n": 3}),
    ]
    assert (case.token_usage, case.cost_usd) == (TokenUsage(input=4, output=2), 1.0)
    assert (result.token_usage, result.cost_usd) == (TokenUsage(input=4, output=2), 1.0)
    assert case.messages == [
        Message(role="user", content="a"),
        Message(role="assistant", content="reply 1"),
        Message(role="user", content="b"),
        Message(role="assistant", content="reply 3"),
    ]
    # "you said" is missing from every reply, "reply" is there: each turn scores 0.5.
    assert turn_view(case) == [(0, "a", "reply 1", 0.5, "fail"), (1, "b", "reply 3", 0.5, "fail")]


def test_each_repeat_is_a_fresh_conversation(agent: ModuleType) -> None:
    case = run_one(
        agent,
        {
            "turns": [{"input": "one"}, {"input": "two"}],
            "assertions": [SAID],
            "execution": {"repeat": 2},
        },
    )
    assert [len(messages) for messages in agent.calls] == [1, 3, 1, 3]
    assert [len(s.turns) for s in case.samples] == [2, 2]
    assert case.turns == case.samples[0].turns
    assert len(case.messages) == 4


# -- which graders grade each turn -------------------------------------------------------------


def test_each_turn_is_graded_by_its_own_then_the_tests_then_the_suites_graders(
    agent: ModuleType,
) -> None:
    case = run_one(
        agent,
        {
            "turns": [
                {"input": "hello", "assertions": [contains("hello", "turn-0")]},
                {"input": "again", "assertions": [contains("nope", "turn-1")]},
                {"input": "bye"},
            ],
            "assertions": [SAID],
        },
        suite={"assertions": [contains("messages", "suite-default")]},
    )
    graded = [[(g.name, g.score) for g in t.grader_results] for t in case.turns]
    assert graded == [
        [("turn-0", 1.0), ("said", 1.0), ("suite-default", 1.0)],
        [("turn-1", 0.0), ("said", 1.0), ("suite-default", 1.0)],
        [("said", 1.0), ("suite-default", 1.0)],
    ]
    assert [t.score for t in case.turns] == [1.0, pytest.approx(2 / 3), 1.0]
    assert case.score == pytest.approx((1.0 + 2 / 3 + 1.0) / 3)


def test_skip_defaults_drops_the_suite_graders_from_every_turn(agent: ModuleType) -> None:
    case = run_one(
        agent,
        {
            "turns": [{"input": "hello"}, {"input": "again"}],
            "assertions": [SAID],
            "execution": {"skip_defaults": True},
        },
        suite={"assertions": [contains("nope", "suite-default")]},
    )
    assert [[g.name for g in t.grader_results] for t in case.turns] == [["said"], ["said"]]
    assert (case.score, case.verdict) == (1.0, "pass")


# -- folding turns into the case ---------------------------------------------------------------

# Two test graders pass every turn; turn 0 adds two failing ones (2/4 = 0.5), turn 1 one passing
# and one failing (3/4 = 0.75).
FOLDED = {
    "turns": [
        {"input": "hello", "assertions": [contains("zzz"), contains("yyy")]},
        {"input": "again", "assertions": [contains("again"), contains("zzz")]},
    ],
    "assertions": [SAID, contains("messages")],
    "execution": {"threshold": 0.6, "verdicts": {"borderline": 0.55}},
}


@pytest.mark.parametrize(
    ("aggregation", "score", "verdict"),
    [
        pytest.param(None, 0.625, "pass", id="default-is-mean"),
        pytest.param("mean", 0.625, "pass", id="mean"),
        pytest.param("min", 0.5, "fail", id="min"),
        pytest.param("last", 0.75, "pass", id="last"),
    ],
)
def test_turn_scores_fold_by_the_aggregation(
    agent: ModuleType, aggregation: str | None, score: float, verdict: str
) -> None:
    test = dict(FOLDED) if aggregation is None else {**FOLDED, "aggregation": aggregation}
    case = run_one(agent, test)
    assert [(t.score, t.verdict) for t in case.turns] == [(0.5, "fail"), (0.75, "pass")]
    assert (case.score, case.verdict, case.threshold, case.borderline) == (
        score,
        verdict,
        0.6,
        0.55,
    )


STOPPABLE = {
    "turns": [
        {"input": "hello"},
        {"input": "again", "assertions": [contains("zzz")]},
        {"input": "bye"},
    ],
    "assertions": [SAID],
}


def test_on_turn_failure_stop_ends_the_conversation_at_the_failed_turn(agent: ModuleType) -> None:
    case = run_one(agent, {**STOPPABLE, "on_turn_failure": "stop"})
    assert len(agent.calls) == 2
    assert [(t.index, t.score, t.verdict) for t in case.turns] == [
        (0, 1.0, "pass"),
        (1, 0.5, "fail"),
    ]
    # The mean of the turns that ran, under the default bands (0.8 / 0.6).
    assert (case.score, case.verdict) == (0.75, "borderline")
    assert case.output == "3 messages; you said: again"
    assert len(case.messages) == 4


def test_on_turn_failure_continue_runs_every_turn(agent: ModuleType) -> None:
    for test in ({**STOPPABLE, "on_turn_failure": "continue"}, STOPPABLE):
        agent.calls.clear()
        case = run_one(agent, test)
        assert len(agent.calls) == 3
        assert [(t.score, t.verdict) for t in case.turns] == [
            (1.0, "pass"),
            (0.5, "fail"),
            (1.0, "pass"),
        ]
        assert case.score == pytest.approx(2.5 / 3)
        assert case.verdict == "pass"


def test_a_required_grader_failing_in_one_turn_makes_the_case_score_zero(
    agent: ModuleType,
) -> None:
    case = run_one(
        agent,
        {
            "turns": [
                {"input": "hello"},
                {"input": "again", "assertions": [contains("zzz", "gate", required=True)]},
                {"input": "bye"},
            ],
            "assertions": [SAID],
            "aggregation": "last",  # the last turn passes; the gate still wins
        },
    )
    assert [(t.score, t.verdict) for t in case.turns] == [
        (1.0, "pass"),
        (0.0, "fail"),
        (1.0, "pass"),
    ]
    assert (case.score, case.verdict, case.error) == (0.0, "fail", None)


@pytest.mark.parametrize(("on_turn_failure", "turns_run"), [("stop", 2), ("continue", 3)])
def test_a_target_error_in_a_turn_makes_the_case_an_error(
    agent: ModuleType, on_turn_failure: str, turns_run: int
) -> None:
    result = run_suite(
        agent,
        [
            {
                "id": "conv",
                "turns": [{"input": "hello"}, {"input": "explode"}, {"input": "bye"}],
                "assertions": [SAID],
                "on_turn_failure": on_turn_failure,
            }
        ],
    )
    [case] = result.results
    raised = f"function '{agent.__name__}:chat' raised RuntimeError: kaboom"
    assert (case.verdict, case.score) == ("error", None)
    assert case.error == ErrorInfo(type="RuntimeError", message=f"turn 1: {raised}")
    assert len(case.turns) == turns_run == len(agent.calls)
    broken = case.turns[1]
    assert (broken.verdict, broken.score, broken.output, broken.grader_results) == (
        "error",
        None,
        None,
        [],
    )
    assert broken.error == ErrorInfo(type="RuntimeError", message=raised)
    assert (result.summary.total, result.summary.error_count) == (1, 1)


# -- configuration errors ----------------------------------------------------------------------

HEAD = "name: conv\ntarget: {type: fake, default: ok}\n"


def load_error(text: str) -> str:
    write(Path("s.eval.yaml"), HEAD + text)
    with pytest.raises(ConfigError) as raised:
        load_suite("s.eval.yaml")
    return str(raised.value)


def test_a_test_gives_input_or_turns_not_both_or_neither() -> None:
    message = load_error(
        "assertions: [{type: contains, value: ok}]\n"
        "tests:\n"
        "  - id: fine\n"
        "    input: hi\n"
        "  - id: both\n"
        "    input: hi\n"
        "    turns: [{input: again}]\n"
        "  - id: neither\n"
        "    tags: [x]\n"
    )
    one = (
        "give exactly one of `input`, `turns` (a scripted conversation) or `simulate` "
        "(a simulated user)"
    )
    assert message == (
        f"s.eval.yaml:7 tests[1]: {one}, got `input` and `turns`\n"
        f"s.eval.yaml:10 tests[2]: {one}, got none"
    )


def test_a_turn_with_nothing_to_grade_is_located() -> None:
    message = load_error(
        "tests:\n"
        "  - id: conv\n"
        "    turns:\n"
        "      - input: hi\n"
        "        assertions: [{type: contains, value: ok}]\n"
        "      - input: again\n"
        "      - input: weightless\n"
        "        assertions: [{type: contains, value: ok, weight: 0}]\n"
    )
    fix = "add `assertions` with weight > 0 to the turn, the test or the suite"
    # Turn 0's graders do not grade turn 1 or 2: each turn is graded by its own graders only.
    assert message == (
        f"s.eval.yaml:8 tests[0].turns[1]: turn 1 of test 'conv' has nothing to grade: {fix}\n"
        f"s.eval.yaml:9 tests[0].turns[2]: turn 2 of test 'conv' has nothing to grade: {fix}"
    )


@pytest.mark.parametrize(
    "graders",
    [
        pytest.param("    assertions: [{type: contains, value: ok}]\n", id="test"),
        pytest.param("assertions: [{type: contains, value: ok}]\n", id="suite"),
    ],
)
def test_test_or_suite_graders_grade_turns_without_their_own(graders: str) -> None:
    text = "tests:\n  - id: conv\n    turns: [{input: hi}, {input: again}]\n"
    if graders.startswith(" "):
        text += graders
    else:
        text = graders + text
    write(Path("s.eval.yaml"), HEAD + text)
    loaded = load_suite("s.eval.yaml")
    [test] = loaded.suite.tests
    assert test.turns is not None and [t.input for t in test.turns] == ["hi", "again"]
    assert (test.aggregation, test.on_turn_failure) == ("mean", "continue")


def test_aggregation_and_on_turn_failure_are_validated() -> None:
    message = load_error(
        "assertions: [{type: contains, value: ok}]\n"
        "tests:\n"
        "  - id: conv\n"
        "    turns: [{input: hi}]\n"
        "    aggregation: median\n"
        "    on_turn_failure: abort\n"
    )
    assert message == (
        "s.eval.yaml:7 tests[0].aggregation: Input should be 'mean', 'min' or 'last' "
        "(got 'median')\n"
        "s.eval.yaml:8 tests[0].on_turn_failure: Input should be 'continue' or 'stop' "
        "(got 'abort')"
    )
