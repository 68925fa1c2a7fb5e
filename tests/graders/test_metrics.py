"""The run-metric graders (SPEC §4): latency, cost, token-usage and execution-metrics.

Budgets are binary and inclusive; execution-metrics scores limits met / limits configured; a
value the target did not report is a grader error, never a pass or a 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from tests.conftest import write
from tests.graders._grading import SPEC
from tests.graders._grading import grade as grade_spec

from assay import EvalConfig, evaluate
from assay.config import load_suite
from assay.graders import ExecutionMetrics, GradingContext
from assay.graders.metrics import count_llm_calls
from assay.results import Detail, GraderResult, Message, TargetOutput, TokenUsage, ToolCall

RUN = TargetOutput(
    output="Your refund is on its way.",
    duration_ms=620.0,
    cost_usd=0.0123,
    token_usage=TokenUsage(input=100, output=50),
    tool_calls=[ToolCall(tool="lookup", args={"id": 7}), ToolCall(tool="refund")],
    messages=[
        Message(role="user", content="refund please"),
        Message(role="assistant", tool_calls=[ToolCall(tool="lookup", args={"id": 7})]),
        Message(role="tool", content="order 7"),
        Message(role="assistant", tool_calls=[ToolCall(tool="refund")]),
        Message(role="tool", content="done"),
        Message(role="assistant", content="Your refund is on its way."),
    ],
)


def grade(
    spec: dict[str, Any], run: TargetOutput | None = RUN, *, given: Any = None
) -> GraderResult:
    return grade_spec(spec, run.output if run else "", input=given, target_output=run)


def error_of(spec: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python(spec)
    errors = info.value.errors()
    assert len(errors) == 1, errors
    field = ".".join(str(p) for p in errors[0]["loc"][1:])  # after the union's type tag
    return f"{field}: {errors[0]['msg']}"


# --- latency ------------------------------------------------------------------------------------


def test_latency_within_the_limit_passes() -> None:
    result = grade({"type": "latency", "max_ms": 1000})
    assert (result.score, result.verdict, result.error) == (1.0, "pass", None)
    assert result.hits == ["response time: 620 ms (limit 1000 ms)"]
    assert result.misses == []
    assert result.details == [
        Detail(
            check="latency.max_ms",
            passed=True,
            expected="≤ 1000 ms",
            actual="620 ms",
            message="response time: 620 ms (limit 1000 ms)",
        )
    ]


def test_latency_over_the_limit_fails() -> None:
    result = grade({"type": "latency", "max_ms": 500})
    assert (result.score, result.verdict) == (0.0, "fail")
    assert result.misses == ["response time: 620 ms, over the limit of 500 ms"]
    assert result.details[0] == Detail(
        check="latency.max_ms",
        passed=False,
        expected="≤ 500 ms",
        actual="620 ms",
        message="response time: 620 ms, over the limit of 500 ms",
    )


def test_latency_limit_is_inclusive_and_fractions_show() -> None:
    run = RUN.model_copy(update={"duration_ms": 250.25})
    assert grade({"type": "latency", "max_ms": 250.25}, run).score == 1.0
    result = grade({"type": "latency", "max_ms": 250.2}, run)
    assert result.score == 0.0
    assert result.details[0].actual == "250.2 ms"  # shown to one decimal
    assert result.details[0].expected == "≤ 250.2 ms"


def test_negated_latency_passes_when_slow() -> None:
    result = grade({"type": "latency", "max_ms": 500, "negate": True})
    assert (result.score, result.verdict) == (1.0, "pass")
    assert result.hits == ["response time: 620 ms, over the limit of 500 ms"]


def test_output_text_does_not_matter() -> None:
    for text in ["", "日本語の返事 🚀", "x" * 1_000_000, "{not json"]:
        run = RUN.model_copy(update={"output": text})
        assert grade({"type": "latency", "max_ms": 700}, run).score == 1.0


def test_no_run_metrics_is_an_error() -> None:
    result = grade({"type": "latency", "max_ms": 500}, None)
    assert (result.score, result.verdict) == (None, "error")
    assert result.error is not None
    assert result.error.message == "latency grades the target's run metrics, and none were recorded"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"type": "latency"}, "max_ms: Field required"),
        ({"type": "latency", "max_ms": 0}, "max_ms: Input should be greater than 0"),
        (
            {"type": "latency", "max_ms": "fast"},
            "max_ms: Input should be a valid number, unable to parse string as a number",
        ),
        ({"type": "latency", "max_ms": 5, "max": 3}, ": unknown key 'max'. Did you mean 'max_ms'?"),
    ],
)
def test_latency_options_are_checked(spec: dict[str, Any], message: str) -> None:
    assert error_of(spec) == message


# --- cost ---------------------------------------------------------------------------------------


def test_cost_within_budget_passes() -> None:
    result = grade({"type": "cost", "max_usd": 0.05})
    assert (result.score, result.verdict) == (1.0, "pass")
    assert result.details == [
        Detail(
            check="cost.max_usd",
            passed=True,
            expected="≤ $0.05",
            actual="$0.0123",
            message="cost: $0.0123 (limit $0.05)",
        )
    ]


def test_cost_over_budget_fails() -> None:
    result = grade({"type": "cost", "max_usd": 0.01})
    assert (result.score, result.verdict) == (0.0, "fail")
    assert result.misses == ["cost: $0.0123, over the limit of $0.01"]


def test_tiny_costs_are_not_shown_as_zero() -> None:
    run = RUN.model_copy(update={"cost_usd": 0.0000004})
    result = grade({"type": "cost", "max_usd": 0}, run)
    assert result.score == 0.0
    assert result.misses == ["cost: $0.0000004, over the limit of $0"]


def test_free_call_meets_a_zero_budget() -> None:
    assert (
        grade({"type": "cost", "max_usd": 0}, RUN.model_copy(update={"cost_usd": 0.0})).score == 1.0
    )


def test_unreported_cost_is_an_error_not_a_pass() -> None:
    result = grade({"type": "cost", "max_usd": 1}, RUN.model_copy(update={"cost_usd": None}))
    assert (result.score, result.verdict) == (None, "error")
    assert result.error is not None
    assert result.error.type == "GraderError"
    assert result.error.message.startswith(
        "cost: the target reported no cost (`cost_usd`), so the cost limit cannot be checked"
    )


def test_cost_options_are_checked() -> None:
    assert error_of({"type": "cost"}) == "max_usd: Field required"
    assert error_of({"type": "cost", "max_usd": -1}) == (
        "max_usd: Input should be greater than or equal to 0"
    )


# --- token-usage --------------------------------------------------------------------------------


def test_token_usage_every_limit_met() -> None:
    spec = {"type": "token-usage", "max_total": 150, "max_prompt": 100, "max_completion": 60}
    result = grade(spec)
    assert (result.score, result.verdict) == (1.0, "pass")
    assert [(d.check, d.passed, d.expected, d.actual) for d in result.details] == [
        ("token_usage.max_total", True, "≤ 150", "150"),
        ("token_usage.max_prompt", True, "≤ 100", "100"),
        ("token_usage.max_completion", True, "≤ 60", "50"),
    ]
    assert result.reasoning == "3 of 3 limits met"


def test_token_usage_is_binary_one_limit_over_fails() -> None:
    result = grade({"type": "token-usage", "max_total": 1000, "max_completion": 40})
    assert (result.score, result.verdict) == (0.0, "fail")
    assert result.hits == ["total tokens: 150 (limit 1000)"]
    assert result.misses == ["completion tokens: 50, over the limit of 40"]
    assert result.reasoning == "1 of 2 limits met"


def test_missing_token_usage_is_an_error() -> None:
    result = grade(
        {"type": "token-usage", "max_total": 10}, RUN.model_copy(update={"token_usage": None})
    )
    assert result.verdict == "error"
    assert result.error is not None
    assert result.error.message == (
        "token-usage: the target reported no token usage (`token_usage`), so the token limit "
        "cannot be checked; use a target that reports it"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"type": "token-usage"},
            ": Value error, token-usage needs at least one limit: max_total, max_prompt or "
            "max_completion",
        ),
        (
            {"type": "token-usage", "max_total": -1},
            "max_total: Input should be greater than or equal to 0",
        ),
        ({"type": "token-usage", "max_total": 1.5}, "max_total: Input should be a valid integer"),
        ({"type": "token-usage", "max_total": "10"}, "max_total: Input should be a valid integer"),
        (
            {"type": "token-usage", "max_prompt": True},
            "max_prompt: Input should be a valid integer",
        ),
    ],
)
def test_token_usage_options_are_checked(spec: dict[str, Any], message: str) -> None:
    assert error_of(spec) == message


# --- execution-metrics --------------------------------------------------------------------------


def test_execution_metrics_scores_the_fraction_of_limits_met() -> None:
    spec = {
        "type": "execution-metrics",
        "max_tool_calls": 1,
        "min_tool_calls": 1,
        "max_llm_calls": 3,
        "max_tokens": 200,
        "max_cost_usd": 0.01,
        "max_duration_ms": 1000,
    }
    result = grade(spec)
    assert result.score == pytest.approx(4 / 6)
    assert result.verdict == "fail"
    assert result.reasoning == "4 of 6 limits met"
    assert result.details == [
        Detail(
            check="execution_metrics.max_tool_calls",
            passed=False,
            expected="≤ 1",
            actual="2",
            message="tool calls: 2, over the limit of 1",
        ),
        Detail(
            check="execution_metrics.min_tool_calls",
            passed=True,
            expected="≥ 1",
            actual="2",
            message="tool calls: 2 (minimum 1)",
        ),
        Detail(
            check="execution_metrics.max_llm_calls",
            passed=True,
            expected="≤ 3",
            actual="3",
            message="model calls: 3 (limit 3)",
        ),
        Detail(
            check="execution_metrics.max_tokens",
            passed=True,
            expected="≤ 200",
            actual="150",
            message="total tokens: 150 (limit 200)",
        ),
        Detail(
            check="execution_metrics.max_cost_usd",
            passed=False,
            expected="≤ $0.01",
            actual="$0.0123",
            message="cost: $0.0123, over the limit of $0.01",
        ),
        Detail(
            check="execution_metrics.max_duration_ms",
            passed=True,
            expected="≤ 1000 ms",
            actual="620 ms",
            message="response time: 620 ms (limit 1000 ms)",
        ),
    ]


def test_too_few_tool_calls_fails_the_minimum() -> None:
    result = grade({"type": "execution-metrics", "min_tool_calls": 3})
    assert (result.score, result.verdict) == (0.0, "fail")
    assert result.misses == ["tool calls: 2, under the minimum of 3"]


def test_zero_tool_calls_forbids_tools() -> None:
    no_tools = TargetOutput(output="hi", duration_ms=5.0)
    assert grade({"type": "execution-metrics", "max_tool_calls": 0}, no_tools).score == 1.0
    assert grade({"type": "execution-metrics", "max_tool_calls": 0}).score == 0.0


def test_one_of_two_limits_met_is_a_fail() -> None:
    # one of two limits met: 0.5 is below the default borderline bound of 0.6
    result = grade({"type": "execution-metrics", "max_tool_calls": 1, "max_duration_ms": 700})
    assert (result.score, result.verdict) == (0.5, "fail")


@pytest.mark.parametrize(
    ("update", "option", "message"),
    [
        (
            {"token_usage": None},
            "max_tokens",
            "execution-metrics max_tokens: the target reported no token usage",
        ),
        (
            {"cost_usd": None},
            "max_cost_usd",
            "execution-metrics max_cost_usd: the target reported no cost",
        ),
    ],
)
def test_execution_metrics_needs_the_values_it_checks(
    update: dict[str, Any], option: str, message: str
) -> None:
    spec = {"type": "execution-metrics", "max_tool_calls": 5, option: 1}
    result = grade(spec, RUN.model_copy(update=update))
    assert result.verdict == "error"
    assert result.error is not None
    assert result.error.message.startswith(message)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"type": "execution-metrics"},
            ": Value error, execution-metrics needs at least one limit: max_tool_calls, "
            "min_tool_calls, max_llm_calls, max_tokens, max_cost_usd, max_duration_ms, "
            "target_exploration_ratio",
        ),
        (
            {"type": "execution-metrics", "min_tool_calls": 4, "max_tool_calls": 2},
            ": Value error, min_tool_calls (4) is above max_tool_calls (2); no run can meet both",
        ),
        (
            {"type": "execution-metrics", "max_duration_ms": 0},
            "max_duration_ms: Input should be greater than 0",
        ),
        (
            {"type": "execution-metrics", "max_tool_call": 3},
            ": unknown key 'max_tool_call'. Did you mean 'max_tool_calls'?",
        ),
    ],
)
def test_execution_metrics_options_are_checked(spec: dict[str, Any], message: str) -> None:
    assert error_of(spec) == message


# --- counting model calls -----------------------------------------------------------------------


def _ctx(given: Any = None) -> GradingContext:
    return GradingContext(case_id="c", output="", threshold=0.8, input=given)


def test_each_assistant_message_is_one_model_call() -> None:
    assert count_llm_calls(_ctx("refund please"), RUN) == 3


def test_an_echoed_history_is_not_counted() -> None:
    history = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "refund please"},
    ]
    run = TargetOutput(
        output="done",
        messages=[
            Message(role="system", content="be brief"),
            *(Message(role=m["role"], content=m["content"]) for m in history),
            Message(role="assistant", content="done"),
        ],
    )
    assert count_llm_calls(_ctx(history), run) == 1
    # a transcript that does not start with the input is counted whole
    assert count_llm_calls(_ctx([{"role": "user", "content": "other"}]), run) == 2


def test_no_transcript_but_an_answer_is_one_call() -> None:
    assert count_llm_calls(_ctx("q"), TargetOutput(output="an answer")) == 1
    tools_only = TargetOutput(output="", tool_calls=[ToolCall(tool="lookup")])
    assert count_llm_calls(_ctx("q"), tools_only) == 1
    assert count_llm_calls(_ctx("q"), TargetOutput(output="")) == 0


def test_max_llm_calls_uses_the_fallback() -> None:
    result = grade({"type": "execution-metrics", "max_llm_calls": 1}, TargetOutput(output="hi"))
    assert result.details[0].actual == "1"
    assert result.score == 1.0


# --- through a suite ----------------------------------------------------------------------------

SUITE = """name: metrics
target:
  type: fake
  responses:
    fast: {output: "ok", duration_ms: 120, cost_usd: 0.002, token_usage: {input: 40, output: 10},
           tool_calls: [{tool: lookup, args: {id: 7}}]}
    slow: {output: "ok", duration_ms: 4000, cost_usd: 0.2, token_usage: {input: 900, output: 600}}
    plain: "no metrics reported"
tests:
  - id: fast
    input: fast
    assertions:
      - {type: latency, max_ms: 500}
      - {type: cost, max_usd: 0.01}
      - {type: token-usage, max_total: 100}
      - {type: execution_metrics, max_tool_calls: 2, min_tool_calls: 1, max_llm_calls: 1}
  - id: slow
    input: slow
    assertions:
      - {type: latency, max_ms: 500}
      - {type: execution-metrics, max_tokens: 2000, max_cost_usd: 0.05}
  - id: plain
    input: plain
    assertions:
      - {type: cost, max_usd: 0.01}
"""


def test_suite_run(tmp_path: Path) -> None:
    path = write(tmp_path / "m.eval.yaml", SUITE)
    result = evaluate(path, config=EvalConfig(store=False, cache_mode="off"))
    cases = {c.case_id: c for c in result.results}
    assert {k: (c.score, c.verdict) for k, c in cases.items()} == {
        "fast": (1.0, "pass"),
        "slow": (0.25, "fail"),  # latency 0 and execution-metrics 1/2, averaged
        "plain": (None, "error"),
    }
    error = cases["plain"].grader_results[0].error
    assert error is not None
    assert error.message.startswith("cost: the target reported no cost")


def test_underscore_type_names_load(tmp_path: Path) -> None:
    path = write(tmp_path / "m.eval.yaml", SUITE)
    grader = load_suite(path).suite.tests[0].assertions[3]
    assert isinstance(grader, ExecutionMetrics)
    assert grader.type == "execution-metrics"


def _explored(spec: dict[str, Any], tools: list[str]) -> GraderResult:
    run = TargetOutput(output="done", tool_calls=[ToolCall(tool=t) for t in tools])
    return grade_spec({"type": "execution-metrics", **spec}, "done", target_output=run)


def test_i24_5_exploration_ratio_within_its_tolerance() -> None:
    tools = ["Read", "Grep", "Edit", "Bash"]  # 2 of 4 explore: ratio 0.5
    met = _explored({"target_exploration_ratio": 0.6, "exploration_tolerance": 0.15}, tools)
    assert (met.score, met.verdict) == (1.0, "pass")
    assert [(d.check, d.passed, d.expected, d.actual) for d in met.details] == [
        ("execution_metrics.target_exploration_ratio", True, "≤ 0.15", "0.1")
    ]
    assert met.hits == ["exploration ratio 0.5 (target 0.6), distance: 0.1 (limit 0.15)"]
    missed = _explored({"target_exploration_ratio": 0.9, "max_tool_calls": 10}, tools)
    assert (missed.score, missed.verdict) == (0.5, "fail")  # default tolerance 0.2
    assert missed.misses == [
        "exploration ratio 0.5 (target 0.9), distance: 0.4, over the limit of 0.2"
    ]
    own = _explored({"target_exploration_ratio": 1.0, "exploration_tools": ["Edit"]}, ["Edit"])
    assert own.score == 1.0


def test_i24_5_exploration_ratio_without_tool_calls_fails() -> None:
    result = _explored({"target_exploration_ratio": 0.5}, [])
    assert (result.score, result.verdict) == (0.0, "fail")
