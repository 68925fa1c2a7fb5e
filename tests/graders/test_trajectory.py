"""The tool-trajectory grader (SPEC §4): modes, argument matching, durations and Details."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from tests.conftest import write
from tests.graders._grading import SPEC
from tests.graders._grading import grade as grade_spec

from assay import EvalConfig, evaluate
from assay.results import JSON, Detail, GraderResult, TargetOutput, ToolCall


def call(tool: str, ms: float | None = None, **args: JSON) -> ToolCall:
    return ToolCall(tool=tool, args=args, duration_ms=ms)


def grade(
    spec: dict[str, Any],
    calls: list[ToolCall],
    *,
    expected_tool_calls: tuple[JSON, ...] = (),
    threshold: float = 0.8,
    output: str = "done",
) -> GraderResult:
    return grade_spec(
        {"type": "tool-trajectory", **spec},
        output,
        threshold=threshold,
        target_output=TargetOutput(output=output, tool_calls=calls),
        expected_tool_calls=expected_tool_calls,
    )


def summary(result: GraderResult) -> list[tuple[str, bool, str]]:
    return [(d.check, d.passed, d.message) for d in result.details]


def error_of(spec: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python({"type": "tool-trajectory", **spec})
    errors = info.value.errors()
    assert len(errors) == 1, errors
    field = ".".join(str(p) for p in errors[0]["loc"][1:])  # after the union's type tag
    return f"{field}: {errors[0]['msg']}"


LOOKUP_REFUND = [{"tool": "lookup", "args": {"id": 7}}, {"tool": "refund"}]


# --- in_order (the default) --------------------------------------------------------------------


def test_in_order_allows_other_calls_between() -> None:
    calls = [call("search", q="order"), call("lookup", id=7), call("log"), call("refund", amount=5)]
    result = grade({"expected": LOOKUP_REFUND}, calls)
    assert (result.score, result.verdict, result.error) == (1.0, "pass", None)
    assert result.hits == ['called lookup {"id": 7}', "called refund (any args)"]
    assert result.misses == []
    assert (
        result.reasoning == "mode in_order: 2 of 2 expected calls matched; 2 other call(s) allowed"
    )
    assert result.details == [
        Detail(
            check="tool_trajectory.call[0].lookup",
            passed=True,
            expected='lookup {"id": 7}',
            actual='lookup {"id": 7}',
            message="matched actual call [1]",
        ),
        Detail(
            check="tool_trajectory.call[1].refund",
            passed=True,
            expected="refund (any args)",
            actual='refund {"amount": 5}',
            message="matched actual call [3]",
        ),
    ]


def test_in_order_missing_call() -> None:
    result = grade({"expected": LOOKUP_REFUND}, [call("lookup", id=7)])
    assert (result.score, result.verdict) == (0.5, "fail")
    assert result.misses == ["refund was not called"]
    assert result.details[1] == Detail(
        check="tool_trajectory.call[1].refund",
        passed=False,
        expected="refund (any args)",
        message="refund was not called",
    )


def test_in_order_wrong_order_names_the_call() -> None:
    result = grade({"expected": LOOKUP_REFUND}, [call("refund"), call("lookup", id=7)])
    assert result.score == 0.5
    assert result.misses == ["lookup called out of order"]
    assert summary(result) == [
        (
            "tool_trajectory.call[0].lookup",
            False,
            "call [1] is lookup, but not in the expected order",
        ),
        ("tool_trajectory.call[1].refund", True, "matched actual call [0]"),
    ]


def test_in_order_finds_the_longest_ordered_match() -> None:
    # greedy would tie expected a to the first a and then miss b-c; the LCS takes a(2) b c
    expected = [{"tool": "a", "args": {"n": 2}}, {"tool": "b"}, {"tool": "c"}]
    calls = [call("a", n=1), call("b"), call("a", n=2), call("b"), call("c")]
    result = grade({"expected": expected}, calls)
    assert result.score == 1.0
    assert [d.message for d in result.details] == [
        "matched actual call [2]",
        "matched actual call [3]",
        "matched actual call [4]",
    ]


# --- exact --------------------------------------------------------------------------------------


def test_exact_match_passes() -> None:
    result = grade(
        {"mode": "exact", "expected": LOOKUP_REFUND}, [call("lookup", id=7), call("refund")]
    )
    assert (result.score, result.verdict) == (1.0, "pass")
    assert result.reasoning == "mode exact: 2 of 2 expected calls matched, 2 made"


def test_exact_extra_call_fails_whatever_the_threshold() -> None:
    calls = [call("lookup", id=7), call("refund"), call("email", to="x@y.z")]
    result = grade({"mode": "exact", "expected": LOOKUP_REFUND}, calls, threshold=0.5)
    assert result.score == pytest.approx(2 / 3)  # matched / max(expected, actual)
    assert result.verdict == "fail"
    assert result.misses == ["extra call [2] email"]
    assert result.details[2] == Detail(
        check="tool_trajectory.extra[2].email",
        passed=False,
        actual='email {"to": "x@y.z"}',
        message="a call beyond the expected ones (mode exact allows none)",
    )


def test_exact_wrong_order_names_each_position() -> None:
    result = grade(
        {"mode": "exact", "expected": LOOKUP_REFUND}, [call("refund"), call("lookup", id=7)]
    )
    assert (result.score, result.verdict) == (0.0, "fail")
    assert summary(result) == [
        ("tool_trajectory.call[0].lookup", False, "call [0] is refund, expected lookup"),
        ("tool_trajectory.call[1].refund", False, "call [1] is lookup, expected refund"),
    ]


def test_exact_missing_last_call() -> None:
    result = grade({"mode": "exact", "expected": LOOKUP_REFUND}, [call("lookup", id=7)])
    assert (result.score, result.verdict) == (0.5, "fail")
    assert summary(result)[1] == ("tool_trajectory.call[1].refund", False, "refund was not called")


def test_exact_empty_expected_means_no_tool_calls() -> None:
    assert grade({"mode": "exact", "expected": []}, []).score == 1.0
    result = grade({"mode": "exact", "expected": []}, [call("lookup")])
    assert (result.score, result.verdict) == (0.0, "fail")
    assert summary(result) == [
        (
            "tool_trajectory.extra[0].lookup",
            False,
            "a call beyond the expected ones (mode exact allows none)",
        )
    ]


# --- any_order ----------------------------------------------------------------------------------


def test_any_order_accepts_a_permutation() -> None:
    result = grade(
        {"mode": "any_order", "expected": LOOKUP_REFUND}, [call("refund"), call("lookup", id=7)]
    )
    assert (result.score, result.verdict) == (1.0, "pass")


def test_any_order_is_a_proper_assignment_not_greedy() -> None:
    # the loose second expectation must not take the only call the strict first one accepts
    expected = [{"tool": "lookup", "args": {"id": 7}}, {"tool": "lookup"}]
    result = grade(
        {"mode": "any_order", "expected": expected}, [call("lookup", id=8), call("lookup", id=7)]
    )
    assert result.score == 1.0
    assert [d.message for d in result.details] == [
        "matched actual call [1]",
        "matched actual call [0]",
    ]


def test_any_order_reversed_loose_first() -> None:
    expected = [{"tool": "lookup"}, {"tool": "lookup", "args": {"id": 7}}]
    result = grade(
        {"mode": "any_order", "expected": expected}, [call("lookup", id=7), call("lookup", id=8)]
    )
    assert result.score == 1.0
    assert [d.message for d in result.details] == [
        "matched actual call [1]",
        "matched actual call [0]",
    ]


def test_any_order_extra_call_fails() -> None:
    calls = [call("refund"), call("lookup", id=7), call("refund")]
    result = grade({"mode": "any_order", "expected": LOOKUP_REFUND}, calls, threshold=0.6)
    assert result.score == pytest.approx(2 / 3)
    assert result.verdict == "fail"
    assert result.misses == ["extra call [2] refund"]


# --- superset and subset ------------------------------------------------------------------------


def test_superset_allows_extras_and_ignores_order() -> None:
    calls = [call("refund"), call("search"), call("lookup", id=7)]
    result = grade({"mode": "superset", "expected": LOOKUP_REFUND}, calls)
    assert (result.score, result.verdict) == (1.0, "pass")
    assert (
        result.reasoning == "mode superset: 2 of 2 expected calls matched; 1 other call(s) allowed"
    )


def test_superset_counts_missing_calls() -> None:
    expected = [{"tool": "a"}, {"tool": "b"}, {"tool": "c"}, {"tool": "d"}, {"tool": "e"}]
    result = grade(
        {"mode": "superset", "expected": expected}, [call("e"), call("a"), call("c"), call("d")]
    )
    assert (result.score, result.verdict) == (0.8, "pass")
    assert result.misses == ["b was not called"]


def test_subset_allows_skipping_expected_calls() -> None:
    result = grade({"mode": "subset", "expected": LOOKUP_REFUND}, [call("refund")])
    assert (result.score, result.verdict) == (1.0, "pass")
    assert result.reasoning == "mode subset: 1 of 1 calls made were expected"
    assert summary(result) == [
        ("tool_trajectory.call[0].lookup", True, "not called (allowed in mode subset)"),
        ("tool_trajectory.call[1].refund", True, "matched actual call [0]"),
    ]


def test_subset_scores_the_calls_made() -> None:
    calls = [call("refund"), call("delete_account"), call("lookup", id=7), call("wipe")]
    result = grade({"mode": "subset", "expected": LOOKUP_REFUND}, calls)
    assert (result.score, result.verdict) == (0.5, "fail")  # 2 of the 4 calls were allowed
    assert result.misses == ["extra call [1] delete_account", "extra call [3] wipe"]
    assert result.details[2].message == "not among the expected calls"


def test_subset_counts_repeats() -> None:
    # the expected list is a multiset: list a call twice to allow it twice
    result = grade(
        {"mode": "subset", "expected": [{"tool": "lookup"}]}, [call("lookup"), call("lookup")]
    )
    assert result.score == 0.5
    assert result.misses == ["extra call [1] lookup"]


def test_subset_without_calls_passes() -> None:
    assert grade({"mode": "subset", "expected": LOOKUP_REFUND}, []).score == 1.0


# --- arguments ----------------------------------------------------------------------------------


def test_mis_argued_call_names_each_argument() -> None:
    expected = [{"tool": "lookup", "args": {"id": 7, "region": "eu"}}]
    result = grade({"expected": expected}, [call("lookup", id=8, verbose=True)])
    assert result.score == 0.0
    message = "args.id: expected 7, got 8; args.region: missing; args.verbose: not expected"
    assert result.misses == [f"lookup called with other args ({message})"]
    assert result.details == [
        Detail(
            check="tool_trajectory.call[0].lookup",
            passed=False,
            expected='lookup {"id": 7, "region": "eu"}',
            actual='lookup {"id": 8, "verbose": true}',
            message=f"call [0] args differ: {message}",
        )
    ]


@pytest.mark.parametrize(
    ("want", "got", "matches"),
    [
        (True, 1, False),
        (1, True, False),
        (0, False, False),
        (1, 1.0, True),
        ("7", 7, False),
        (None, None, True),
        ([1, 2], [1, 2], True),
        ([1, 2], [2, 1], False),
        ({"a": [True]}, {"a": [1]}, False),
    ],
)
def test_arguments_compare_as_json(want: JSON, got: JSON, matches: bool) -> None:
    result = grade({"expected": [{"tool": "t", "args": {"v": want}}]}, [call("t", v=got)])
    assert result.score == (1.0 if matches else 0.0)


def test_string_and_number_look_different_in_the_message() -> None:
    result = grade({"expected": [{"tool": "t", "args": {"id": "7"}}]}, [call("t", id=7)])
    assert result.details[0].message == 'call [0] args differ: args.id: expected "7", got 7'


def test_subset_args_are_recursive_for_objects() -> None:
    expected = [{"tool": "search", "args": {"filter": {"status": "open"}}, "args_match": "subset"}]
    good = call("search", q="x", filter={"status": "open", "owner": "me"})
    assert grade({"expected": expected}, [good]).score == 1.0
    bad = call("search", filter={"status": "closed", "owner": "me"})
    result = grade({"expected": expected}, [bad])
    assert result.details[0].message == (
        'call [0] args differ: args.filter.status: expected "open", got "closed"'
    )
    assert result.details[0].expected == 'search {"filter": {"status": "open"}, …}'


def test_exact_args_are_exact_in_nested_objects() -> None:
    expected = [{"tool": "search", "args": {"filter": {"status": "open"}}}]
    result = grade(
        {"expected": expected}, [call("search", filter={"status": "open", "owner": "me"})]
    )
    assert result.details[0].message == "call [0] args differ: args.filter.owner: not expected"


def test_subset_lists_compare_whole() -> None:
    expected = [{"tool": "t", "args": {"ids": [1]}, "args_match": "subset"}]
    assert grade({"expected": expected}, [call("t", ids=[1, 2])]).score == 0.0


def test_empty_exact_args_require_a_call_without_arguments() -> None:
    expected = [{"tool": "ping", "args": {}}]
    assert grade({"expected": expected}, [call("ping")]).score == 1.0
    assert grade({"expected": expected}, [call("ping", loud=True)]).score == 0.0
    loose = [{"tool": "ping", "args": {}, "args_match": "subset"}]
    assert grade({"expected": loose}, [call("ping", loud=True)]).score == 1.0


def test_unicode_tools_and_args() -> None:
    expected = [{"tool": "検索", "args": {"q": "返金 🚀"}}]
    result = grade({"expected": expected}, [call("検索", q="返金 🚀")], output="日本語")
    assert result.score == 1.0
    assert result.details[0].check == "tool_trajectory.call[0].検索"


def test_long_arguments_are_cut_in_details() -> None:
    big = "x" * 500
    result = grade({"expected": [{"tool": "t", "args": {"v": big}}]}, [call("t", v="y")])
    detail = result.details[0]
    assert detail.expected is not None and len(detail.expected) == 80
    assert detail.expected.endswith("…")
    assert detail.message == f'call [0] args differ: args.v: expected "{"x" * 28}…, got "y"'


# --- durations ----------------------------------------------------------------------------------


def test_over_time_call_is_named() -> None:
    expected = [{"tool": "lookup", "args": {"id": 7}, "max_duration_ms": 500}, {"tool": "refund"}]
    result = grade({"expected": expected}, [call("lookup", 950, id=7), call("refund", 10)])
    assert result.score == 0.5
    assert result.misses == ["lookup took 950 ms, over max_duration_ms 500"]
    assert summary(result)[0] == (
        "tool_trajectory.call[0].lookup",
        False,
        "call [0] took 950 ms, over max_duration_ms 500",
    )


def test_a_fast_enough_repeat_is_matched() -> None:
    expected = [{"tool": "lookup", "max_duration_ms": 500}]
    result = grade(
        {"mode": "superset", "expected": expected}, [call("lookup", 900), call("lookup", 400)]
    )
    assert result.score == 1.0
    assert result.details[0].message == "matched actual call [1]"


def test_unreported_duration_is_an_error() -> None:
    expected = [{"tool": "lookup", "max_duration_ms": 500}]
    result = grade({"expected": expected}, [call("lookup")])
    assert (result.score, result.verdict) == (None, "error")
    assert result.error is not None
    assert result.error.message.startswith(
        "expected call [0] lookup has max_duration_ms, and the target did not report the "
        "duration of its call [0] lookup"
    )


# --- expected calls from the test ---------------------------------------------------------------


def test_defaults_to_the_tests_expected_tool_calls() -> None:
    from_test = ({"tool": "lookup", "args": {"id": 7}}, {"tool": "refund"})
    result = grade({}, [call("lookup", id=7)], expected_tool_calls=from_test)
    assert result.score == 0.5
    assert result.misses == ["refund was not called"]


def test_grader_expected_wins_over_the_test() -> None:
    result = grade(
        {"expected": [{"tool": "refund"}]}, [call("refund")], expected_tool_calls=({"tool": "x"},)
    )
    assert result.score == 1.0


def test_no_expected_calls_anywhere_is_an_error() -> None:
    result = grade({}, [call("lookup")])
    assert result.verdict == "error"
    assert result.error is not None
    assert result.error.message == (
        "tool-trajectory has no `expected` calls and the test has no `expected_tool_calls`"
    )


# --- edges --------------------------------------------------------------------------------------


def test_negated_trajectory() -> None:
    result = grade({"mode": "exact", "expected": LOOKUP_REFUND, "negate": True}, [call("refund")])
    assert (result.score, result.verdict) == (1.0, "pass")
    negated_match = grade(
        {"mode": "exact", "expected": LOOKUP_REFUND, "negate": True},
        [call("lookup", id=7), call("refund")],
    )
    assert (negated_match.score, negated_match.verdict) == (0.0, "fail")


def test_output_text_is_irrelevant() -> None:
    for output in ["", "x" * 1_000_000, "{not json"]:
        result = grade(
            {"expected": LOOKUP_REFUND}, [call("lookup", id=7), call("refund")], output=output
        )
        assert result.score == 1.0


def test_no_calls_at_all() -> None:
    result = grade({"expected": LOOKUP_REFUND}, [])
    assert (result.score, result.verdict) == (0.0, "fail")
    assert result.misses == ["lookup was not called", "refund was not called"]


def test_many_missing_calls_are_capped() -> None:
    expected = [{"tool": f"t{i}"} for i in range(15)]
    result = grade({"expected": expected}, [])
    assert [d.check for d in result.details][-2:] == ["tool_trajectory.call[9].t9", "+ 5 more"]
    assert len(result.misses) == 15


def test_long_trajectories_match_completely() -> None:
    # 300 × 300 candidate pairs; the speed is a benchmark matter, correctness is checked here
    expected = [{"tool": "step", "args": {"n": i}} for i in range(300)]
    calls = [call("step", n=i) for i in reversed(range(300))]
    result = grade({"mode": "any_order", "expected": expected}, calls)
    assert result.score == 1.0


@pytest.mark.parametrize("subset", [False, True])
@pytest.mark.parametrize(
    ("want", "got"),
    [
        ({"id": 7}, {"id": 7}),
        ({"id": 7}, {"id": 7, "verbose": True}),
        ({"id": 7}, {"id": "7"}),
        ({"ok": True}, {"ok": 1}),
        ({"f": {"a": 1}}, {"f": {"a": 1, "b": 2}}),
        ({"f": {"a": 1}}, {"f": {"a": 2}}),
        ({"f": {"a": 1}}, {"f": [1]}),
        ({"xs": [1, 2]}, {"xs": [1, 2, 3]}),
        ({}, {"id": 7}),
        ({"id": 7}, {}),
    ],
)
def test_the_fast_fit_agrees_with_the_reported_problems(
    want: dict[str, JSON], got: dict[str, JSON], subset: bool
) -> None:
    from assay.graders.trajectory import _arg_problems, _args_fit

    assert _args_fit(want, got, subset=subset) == (_arg_problems(want, got, subset=subset) == [])


# --- configuration ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"mode": "in-order", "expected": LOOKUP_REFUND},
            "mode: Input should be 'exact', 'in_order', 'any_order', 'subset' or 'superset'",
        ),
        (
            {"expected": [{"tool": "lookup", "args_match": "subset"}]},
            "expected.0: Value error, args_match: subset compares `args`, and this call gives "
            "none; add `args` (`args: {}` with args_match: exact requires a call without "
            "arguments) or remove args_match",
        ),
        (
            {"expected": [{"tool": "lookup", "args": {"id": 7}, "args_match": "ignore"}]},
            "expected.0: Value error, args_match: ignore never looks at `args`; remove `args` or "
            "choose args_match exact or subset",
        ),
        (
            {"expected": [{"tool": "lookup", "arg": {"id": 7}}]},
            "expected.0: unknown key 'arg'. Did you mean 'args'?",
        ),
        (
            {"expected": [{"tool": "lookup", "args_match": "partial", "args": {}}]},
            "expected.0.args_match: Input should be 'exact', 'subset' or 'ignore'",
        ),
        (
            {"expected": [{"tool": "lookup", "max_duration_ms": 0}]},
            "expected.0.max_duration_ms: Input should be greater than 0",
        ),
        ({"expected": [{"tool": ""}]}, "expected.0.tool: String should have at least 1 character"),
        ({"expected": [{"args": {}}]}, "expected.0.tool: Field required"),
        (
            {"mode": "superset", "expected": []},
            ": Value error, an empty `expected` list checks nothing in mode superset; to require "
            "that no tool is called use mode exact, or list the calls you expect",
        ),
        (
            {"mode": "exact", "expected": LOOKUP_REFUND, "min_score": 0.5},
            ": Value error, mode exact passes only when the calls are exactly the expected ones, "
            "so min_score has no effect; remove min_score, or use mode in_order or superset for "
            "partial credit",
        ),
    ],
)
def test_options_are_checked(spec: dict[str, Any], message: str) -> None:
    assert error_of(spec) == message


def test_min_score_is_kept_in_scored_modes() -> None:
    spec = {"mode": "superset", "expected": LOOKUP_REFUND, "min_score": 0.5}
    result = grade(spec, [call("refund")])
    assert (result.score, result.verdict) == (0.5, "pass")


# --- through a suite ----------------------------------------------------------------------------

SUITE = """name: trajectory
target:
  type: fake
  responses:
    refund: {output: "Refunded.", tool_calls: [{tool: lookup, args: {id: 7, region: eu}},
                                              {tool: refund, args: {amount: 20}}]}
    chat: "Hello!"
tests:
  - id: from-test
    input: refund
    expected_tool_calls: [{tool: lookup, args: {id: 7, region: eu}}, {tool: refund}]
    assertions:
      - {type: tool_trajectory, mode: exact}
  - id: own-expected
    input: refund
    assertions:
      - type: tool-trajectory
        mode: in_order
        expected: [{tool: lookup, args: {id: 7}, args_match: subset}, {tool: refund}]
  - id: no-tools-allowed
    input: chat
    assertions:
      - {type: tool-trajectory, mode: exact, expected: []}
  - id: missing-refund
    input: chat
    expected_tool_calls: [{tool: refund}]
    assertions:
      - {type: tool-trajectory}
"""


def test_suite_run(tmp_path: Path) -> None:
    path = write(tmp_path / "t.eval.yaml", SUITE)
    result = evaluate(path, config=EvalConfig(store=False, cache_mode="off"))
    assert {c.case_id: (c.score, c.verdict) for c in result.results} == {
        "from-test": (1.0, "pass"),
        "own-expected": (1.0, "pass"),
        "no-tools-allowed": (1.0, "pass"),
        "missing-refund": (0.0, "fail"),
    }


def test_a_tests_expected_tool_calls_carry_per_call_matching_options(tmp_path: Path) -> None:
    suite = write(
        tmp_path / "calls.eval.yaml",
        """\
name: calls
target:
  type: fake
  default:
    output: done
    tool_calls:
      - {tool: lookup, args: {id: 7, verbose: true}, duration_ms: 40}
tests:
  - id: subset-args
    input: go
    expected_tool_calls:
      - {tool: lookup, args: {id: 7}, args_match: subset, max_duration_ms: 100}
    assertions: [{type: tool-trajectory}]
  - id: exact-args
    input: go
    expected_tool_calls: [{tool: lookup, args: {id: 7}}]
    assertions: [{type: tool-trajectory}]
""",
    )
    result = evaluate(suite, config=EvalConfig(store=False, cache_mode="off"))
    assert {c.case_id: c.verdict for c in result.results} == {
        "subset-args": "pass",
        "exact-args": "fail",
    }
