"""The Python API beyond suite files: callables as targets and graders, lists of cases,
verdict-band and selection settings, `assay.grade`, `assay.compare`, and parity with the CLI."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import assay
from assay import EvalConfig
from assay.config import TestCase as Case
from assay.graders import Contains, Equals, ToolTrajectory
from assay.results import JSON
from assay.store import SQLiteStore
from assay.targets import FakeTarget
from tests.conftest import write
from tests.e2e._cli import assay as run_cli

MEMORY = EvalConfig(store=False)


def shout(case: dict[str, JSON]) -> str:
    return str(case["input"]).upper()


def starts_loud(context: dict[str, JSON]) -> dict[str, JSON]:
    output = str(context["output"])
    if output.isupper():
        return {"score": 1.0, "hits": ["all caps"]}
    return {"score": 0.0, "misses": [f"not all caps: {output}"]}


def verdicts(run: assay.RunResult) -> dict[str, tuple[float | None, str]]:
    return {r.case_id: (r.score, r.verdict) for r in run.results}


# -- targets ------------------------------------------------------------------------------------


def test_a_function_target_gets_the_case_mapping_and_its_reply_is_graded() -> None:
    seen: list[dict[str, JSON]] = []

    def bot(case: dict[str, JSON]) -> str:
        seen.append(case)
        return f"echo {case['input']}"

    cases = [
        {"id": "a", "input": "hi", "metadata": {"lang": "en"}, "expected_output": "echo hi"},
        {"id": "b", "input": "yo", "expected_output": "echo hi"},
    ]
    run = assay.evaluate(cases, target=bot, graders=[Equals()], config=MEMORY)
    assert verdicts(run) == {"a": (1.0, "pass"), "b": (0.0, "fail")}
    assert (run.suite, run.target) == ("python-api", f"python {__name__}:{bot.__qualname__}")
    by_id = {c["id"]: c for c in seen}
    assert by_id["a"] == {
        "id": "a",
        "input": "hi",
        "messages": [{"role": "user", "content": "hi"}],
        "metadata": {"lang": "en"},
        "repeat_index": 0,
    }


def test_an_async_function_target_may_return_the_structured_output() -> None:
    async def agent(case: dict[str, JSON]) -> dict[str, JSON]:
        await asyncio.sleep(0)
        return {
            "output": "refund issued",
            "tool_calls": [{"tool": "refund", "args": {"order": case["metadata"]["order"]}}],
            "token_usage": {"input": 7, "output": 3},
            "cost_usd": 0.25,
        }

    cases = [
        {
            "id": "refund",
            "input": "refund my order",
            "metadata": {"order": "A1"},
            "expected_tool_calls": [{"tool": "refund", "args": {"order": "A1"}}],
        }
    ]
    run = assay.evaluate(cases, target=agent, graders=[ToolTrajectory(mode="exact")], config=MEMORY)
    [result] = run.results
    assert (result.verdict, result.output, result.cost_usd) == ("pass", "refund issued", 0.25)
    assert (result.token_usage.input, result.token_usage.output) == (7, 3)
    assert [c.tool for c in result.tool_calls] == ["refund"]


def test_a_target_that_raises_makes_the_case_an_error() -> None:
    def broken(case: dict[str, JSON]) -> str:
        raise KeyError("no such order")

    run = assay.evaluate(
        [{"id": "a", "input": "q"}], target=broken, graders=[Contains(value="x")], config=MEMORY
    )
    [result] = run.results
    assert (result.verdict, result.score) == ("error", None)
    assert result.error is not None
    assert result.error.message == (
        f"function '{__name__}:test_a_target_that_raises_makes_the_case_an_error.<locals>"
        ".broken' raised KeyError: 'no such order'"
    )
    assert run.summary.error_count == 1


def test_a_target_object_or_name_replaces_the_suite_target(tmp_path: Path) -> None:
    suite = write(
        tmp_path / "s.eval.yaml",
        "name: s\ntarget: a\ntargets:\n  a: {type: fake, default: alpha}\n"
        "  b: {type: fake, default: beta}\n"
        "tests:\n  - {id: t, input: q, assertions: [{type: equals, value: beta}]}\n",
    )
    assert verdicts(assay.evaluate(suite, config=MEMORY)) == {"t": (0.0, "fail")}
    assert verdicts(assay.evaluate(suite, target="b", config=MEMORY)) == {"t": (1.0, "pass")}
    by_object = assay.evaluate(suite, target=FakeTarget(type="fake", default="beta"), config=MEMORY)
    assert (verdicts(by_object), by_object.target) == ({"t": (1.0, "pass")}, "fake")
    with pytest.raises(assay.UsageError, match="both choose the target"):
        assay.evaluate(suite, target=shout, config=EvalConfig(target="b", store=False))
    with pytest.raises(assay.UsageError, match="is not a target"):
        assay.evaluate(suite, target=42, config=MEMORY)  # type: ignore[arg-type]


def test_a_stored_run_records_the_function_target_and_grader_as_their_yaml_twins() -> None:
    run = assay.evaluate([{"id": "a", "input": "hi"}], target=shout, graders=[starts_loud])
    with SQLiteStore(Path(".assay/assay.db")) as store:
        snapshot = store.get_snapshot(run.id)
    suite = json.loads(json.dumps(snapshot["suite"], default=str))
    assert suite["target"] == {"type": "python", "function": f"{__name__}:shout"}
    assert suite["assertions"] == [
        {"type": "code-grader", "name": "starts_loud", "function": f"{__name__}:starts_loud"}
    ]
    assert snapshot["target"] == {
        "name": f"python {__name__}:shout",
        "spec": {"type": "python", "function": f"{__name__}:shout"},
    }


# -- graders ------------------------------------------------------------------------------------


def test_grader_functions_follow_the_code_grader_convention() -> None:
    contexts: list[dict[str, JSON]] = []

    def exact(context: dict[str, JSON]) -> bool:
        contexts.append(context)
        return context["output"] == context["expected_output"]

    async def half(context: dict[str, JSON]) -> float:
        return 0.5

    cases = [{"id": "a", "input": "hi", "expected_output": "HI", "context": ["doc"]}]
    run = assay.evaluate(cases, target=shout, graders=[exact, half, starts_loud], config=MEMORY)
    [result] = run.results
    assert [(g.name, g.type, g.score, g.verdict) for g in result.grader_results] == [
        ("exact", "code-grader", 1.0, "pass"),
        ("half", "code-grader", 0.5, "fail"),
        ("starts_loud", "code-grader", 1.0, "pass"),
    ]
    assert result.grader_results[2].hits == ["all caps"]
    assert result.score == pytest.approx(2.5 / 3)
    assert contexts[0] == {
        "case_id": "a",
        "output": "HI",
        "input": "hi",
        "expected_output": "HI",
        "context": ["doc"],
        "metadata": {},
        "tool_calls": [],
        "retrieved_context": [],
        "expected_context_ids": [],
        "target_output": {
            "output": "HI",
            "messages": [],
            "tool_calls": [],
            "context": [],
            "token_usage": None,
            "cost_usd": None,
            "duration_ms": contexts[0]["target_output"]["duration_ms"],
            "finish_reason": None,
        },
        "threshold": 0.8,
        "criteria": None,
        "messages": [],
        "token_usage": None,
        "cost_usd": None,
        "duration_ms": contexts[0]["target_output"]["duration_ms"],
        "workspace_path": None,
    }


def test_a_grader_function_that_raises_or_answers_badly_is_a_grader_error() -> None:
    def crash(context: dict[str, JSON]) -> float:
        raise RuntimeError("boom")

    def wrong(context: dict[str, JSON]) -> str:
        return "yes"

    for check, message in [
        (crash, "raised RuntimeError: boom"),
        (wrong, "expected a number, a boolean or an object with `score`, got str"),
    ]:
        run = assay.evaluate(
            [{"id": "a", "input": "q"}], target=shout, graders=[check], config=MEMORY
        )
        [result] = run.results
        [graded] = result.grader_results
        assert (result.verdict, graded.score) == ("error", None)
        assert graded.error is not None
        assert message in graded.error.message


def test_graders_may_be_mappings_and_are_appended_as_suite_defaults(tmp_path: Path) -> None:
    suite = write(
        tmp_path / "s.eval.yaml",
        "name: s\ntarget: {type: fake, default: Hello there}\n"
        "assertions: [{type: contains, value: Hello}]\n"
        "tests:\n  - {id: own, input: q, assertions: [{type: contains, value: there}]}\n"
        "  - {id: skips, input: q, execution: {skip_defaults: true},\n"
        "     assertions: [{type: contains, value: there}]}\n",
    )
    run = assay.evaluate(
        suite, graders=[{"type": "starts_with", "value": "Bye"}, Contains(value="e")], config=MEMORY
    )
    graded = {r.case_id: [g.name for g in r.grader_results] for r in run.results}
    assert graded == {
        "own": ["contains", "contains", "starts-with", "contains"],
        "skips": ["contains"],
    }
    assert verdicts(run) == {"own": (0.75, "borderline"), "skips": (1.0, "pass")}


def test_graders_are_checked_against_every_test() -> None:
    with pytest.raises(assay.ConfigError, match="has no `expected_output`"):
        assay.evaluate([{"id": "a", "input": "q"}], target=shout, graders=[Equals()], config=MEMORY)
    with pytest.raises(
        assay.UsageError,
        match=r"graders\[1\]: unknown grader type 'contain'\. "
        r"Did you mean 'contains'\?",
    ):
        assay.evaluate(
            [{"id": "a", "input": "q"}],
            target=shout,
            graders=[starts_loud, {"type": "contain", "value": "x"}],
            config=MEMORY,
        )
    with pytest.raises(assay.UsageError, match=r"graders\[0\]: not a valid grader spec"):
        assay.evaluate(
            [{"id": "a", "input": "q"}],
            target=shout,
            graders=[{"type": "contains", "valu": "x"}],
            config=MEMORY,
        )
    with pytest.raises(assay.UsageError, match="takes a list of graders"):
        assay.evaluate([{"id": "a", "input": "q"}], target=shout, graders=starts_loud)  # type: ignore[arg-type]
    with pytest.raises(assay.ConfigError, match="has nothing to grade"):
        assay.evaluate([{"id": "a", "input": "q"}], target=shout, config=MEMORY)


# -- what can be evaluated ---------------------------------------------------------------------


def test_cases_may_be_test_case_models() -> None:
    cases = [
        Case(id="one", input="abc", assertions=[Equals(value="ABC")]),
        Case(id="two", input="x", expected_output="Y"),
    ]
    run = assay.evaluate(cases, target=shout, graders=[starts_loud], config=MEMORY)
    assert verdicts(run) == {"one": (1.0, "pass"), "two": (1.0, "pass")}


def test_other_inputs_are_usage_errors() -> None:
    with pytest.raises(assay.UsageError, match="cannot evaluate int"):
        assay.evaluate(3, target=shout, config=MEMORY)  # type: ignore[arg-type]


# -- settings -----------------------------------------------------------------------------------

BANDS = [
    {
        "id": f"s{n}",
        "input": "q",
        "assertions": [Contains(value="Q", weight=n), Contains(value="z", weight=10 - n)],
    }
    for n in (9, 7, 5)
]


def test_eval_config_borderline_overrides_every_level() -> None:
    own = assay.evaluate(BANDS, target=shout, config=MEMORY)
    assert {r.case_id: r.verdict for r in own.results} == {
        "s9": "pass",
        "s7": "borderline",
        "s5": "fail",
    }
    wider = assay.evaluate(BANDS, target=shout, config=EvalConfig(borderline=0.5, store=False))
    assert {r.case_id: r.verdict for r in wider.results} == {
        "s9": "pass",
        "s7": "borderline",
        "s5": "borderline",
    }
    assert wider.config.borderline == 0.5
    off = assay.evaluate(BANDS, target=shout, config=EvalConfig(borderline="off", store=False))
    assert {r.case_id: r.verdict for r in off.results} == {"s9": "pass", "s7": "fail", "s5": "fail"}
    assert off.config.borderline is None
    with pytest.raises(assay.UsageError, match="above threshold"):
        EvalConfig(threshold=0.5, borderline=0.6)


def test_eval_config_selects_cases_like_the_cli_flags() -> None:
    cases = [
        {"id": "a-1", "input": "q", "tags": ["smoke"]},
        {"id": "a-2", "input": "q", "tags": ["slow"]},
        {"id": "b-1", "input": "q", "tags": ["smoke", "slow"]},
    ]
    picked: dict[str, set[str]] = {}
    for label, config in {
        "cases": EvalConfig(cases=("a-*",), store=False),
        "tags": EvalConfig(tags=("smoke",), store=False),
        "exclude": EvalConfig(exclude_tags=("slow",), store=False),
    }.items():
        run = assay.evaluate(cases, target=shout, graders=[starts_loud], config=config)
        picked[label] = {r.case_id for r in run.results}
    assert picked == {"cases": {"a-1", "a-2"}, "tags": {"a-1", "b-1"}, "exclude": {"a-1"}}


def test_on_case_sees_every_result_as_it_finishes() -> None:
    seen: list[str] = []
    run = assay.evaluate(
        [{"id": f"c{i}", "input": "q"} for i in range(3)],
        target=shout,
        graders=[starts_loud],
        config=MEMORY,
        on_case=lambda result: seen.append(result.case_id),
    )
    assert sorted(seen) == ["c0", "c1", "c2"] == sorted(r.case_id for r in run.results)


def test_the_sync_wrappers_refuse_to_run_inside_an_event_loop() -> None:
    async def inside() -> None:
        with pytest.raises(assay.UsageError, match=r"use `await assay\.evaluate_async"):
            assay.evaluate([{"id": "a", "input": "q"}], target=shout, graders=[starts_loud])
        with pytest.raises(assay.UsageError, match=r"use `await assay\.grade_async"):
            assay.grade("X", graders=[starts_loud])

    asyncio.run(inside())


def test_memory_runs_cannot_measure_a_baseline() -> None:
    with pytest.raises(assay.UsageError, match=r"kept in memory \(EvalConfig\(store=False\)\)"):
        assay.evaluate(
            [{"id": "a", "input": "q"}],
            target=shout,
            graders=[starts_loud],
            config=EvalConfig(store=False, baseline="last_passing"),
        )


# -- grade --------------------------------------------------------------------------------------


def test_grade_scores_one_output_like_a_suite_case() -> None:
    result = assay.grade(
        "The refund window is 30 days.",
        graders=[Contains(value="30 days"), {"type": "contains", "value": "receipt"}],
        config=EvalConfig(threshold=0.5),
    )
    assert (result.case_id, result.score, result.threshold, result.verdict) == (
        "output",
        0.5,
        0.5,
        "pass",
    )
    assert [g.misses for g in result.grader_results] == [[], ["does not contain 'receipt'"]]
    exact = assay.grade("30 days", graders=[Equals()], expected="30 days")
    assert (exact.score, exact.verdict) == (1.0, "pass")
    assert not Path(".assay").exists()


def test_grade_accepts_a_structured_output_for_tool_call_graders() -> None:
    output = {"output": "done", "tool_calls": [{"tool": "lookup", "args": {"q": "refunds"}}]}
    result = assay.grade(
        output,
        graders=[ToolTrajectory(mode="exact")],
        expected_tool_calls=[{"tool": "lookup", "args": {"q": "refunds"}}],
    )
    assert (result.verdict, result.output) == ("pass", "done")
    missed = assay.grade(
        output, graders=[ToolTrajectory(mode="exact")], expected_tool_calls=[{"tool": "refund"}]
    )
    assert missed.verdict == "fail"


def test_grade_async_and_its_errors() -> None:
    result = asyncio.run(assay.grade_async("LOUD", graders=[starts_loud], input="shout"))
    assert (result.verdict, result.input) == ("pass", "shout")
    with pytest.raises(assay.UsageError, match="nothing to grade with"):
        assay.grade("x")
    with pytest.raises(assay.ConfigError, match="has no `expected_output`"):
        assay.grade("x", graders=[Equals()])


# -- compare ------------------------------------------------------------------------------------


def _two_runs(store: str | bool | None) -> tuple[assay.RunResult, assay.RunResult]:
    cases = [{"id": f"c{i}", "input": f"q{i}", "expected_output": f"Q{i}"} for i in range(4)]
    config = EvalConfig(store=store)

    def worse(case: dict[str, JSON]) -> str:
        return "Q0" if case["id"] == "c0" else "nope"

    return (
        assay.evaluate(cases, target=shout, graders=[Equals()], config=config),
        assay.evaluate(cases, target=worse, graders=[Equals()], config=config),
    )


def test_compare_run_objects() -> None:
    base, head = _two_runs(False)
    result = assay.compare(base, head)
    assert isinstance(result, assay.Comparison)
    assert result.summary.regression_detected
    assert (result.summary.base_pass_rate, result.summary.head_pass_rate) == (1.0, 0.25)
    assert {c.case_id: c.status for c in result.cases} == {
        "c0": "unchanged",
        "c1": "regressed",
        "c2": "regressed",
        "c3": "regressed",
    }
    # Latencies of these in-process cases are microseconds of noise: that gate is left open.
    reverse = assay.compare(head, base, max_latency_increase_pct=1e9)
    assert not reverse.summary.regression_detected
    tolerant = assay.compare(
        base, head, max_pass_rate_drop=1.0, max_avg_score_drop=1.0, max_latency_increase_pct=1e9
    )
    assert not tolerant.summary.regression_detected
    assert tolerant.thresholds.max_pass_rate_drop == 1.0
    with pytest.raises(ValidationError):
        assay.compare(base, head, case_score_delta=2.0)


def test_compare_stored_runs_by_reference(tmp_path: Path) -> None:
    base, head = _two_runs("runs.db")
    by_id = assay.compare(base.id, head.id, store="runs.db")
    assert (by_id.base, by_id.head) == (base.id, head.id)
    assert by_id.summary.regression_detected
    by_keyword = assay.compare("latest~1", "latest", store=tmp_path / "runs.db")
    assert by_keyword.model_dump() == by_id.model_dump()
    mixed = assay.compare(base, "latest", store="runs.db")
    assert mixed.model_dump() == by_id.model_dump()
    with SQLiteStore(tmp_path / "runs.db") as store:
        store.pin_baseline(base.id, pinned_at="2026-01-01T00:00:00.000+00:00")
        against_pin = assay.compare("baseline", head, store=store)
    assert against_pin.model_dump() == by_id.model_dump()
    with pytest.raises(assay.UsageError, match="names no run"):
        assay.compare("latest~5", head, store="runs.db")


def test_compare_defaults_to_the_project_store(tmp_path: Path) -> None:
    write(tmp_path / "assay.yaml", "store: project.db\n")
    base, _ = _two_runs(None)
    assert assay.compare("latest~1", "latest").base == base.id
    assert not (tmp_path / ".assay").exists()


# -- parity with the CLI ------------------------------------------------------------------------

PARITY_SUITE = """\
name: parity
target: bot
targets:
  bot: {type: fake, responses: {q1: "alpha beta", q2: "alpha", q3: "nothing"}, default: "x"}
execution: {verdicts: {borderline: 0.4}}
tests:
  - id: two-of-two
    input: q1
    tags: [smoke]
    assertions: [{type: contains, value: alpha}, {type: contains, value: beta}]
  - id: one-of-two
    input: q2
    assertions: [{type: contains, value: alpha}, {type: contains, value: beta}]
  - id: strict
    input: q1
    execution: {threshold: 0.95}
    assertions: [{type: contains, value: alpha}, {type: regex, value: "^beta"}]
  - id: none
    input: q3
    assertions: [{type: contains, value: alpha}]
"""

_VOLATILE = frozenset({"id", "started_at", "finished_at", "duration_ms"})


def _stable(value: Any) -> Any:
    """The document without what differs between any two runs: ids, times and durations."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


@pytest.mark.parametrize("threshold", [None, 0.5, 0.9])
def test_the_api_and_the_cli_give_the_same_run_document(
    tmp_path: Path, threshold: float | None
) -> None:
    suite = write(tmp_path / "evals" / "parity.eval.yaml", PARITY_SUITE)
    flags = [] if threshold is None else ["--threshold", str(threshold)]
    done = run_cli("run", str(suite), "--json", *flags, cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    cli = json.loads(done.stdout)
    api = assay.evaluate(suite, config=EvalConfig(threshold=threshold, store=False))
    assert _stable(cli) == _stable(api.model_dump(mode="json"))
    assert done.returncode == (0 if api.passed else 1)
    assert [r["verdict"] for r in cli["results"]] == {
        None: ["pass", "borderline", "borderline", "fail"],
        0.5: ["pass", "pass", "pass", "fail"],
        0.9: ["pass", "borderline", "borderline", "fail"],
    }[threshold]


@pytest.mark.parametrize(
    ("borderline", "verdicts"),
    [
        ("off", ["pass", "fail", "fail", "fail"]),
        ("0.0", ["pass", "borderline", "borderline", "borderline"]),
    ],
)
def test_borderline_is_the_same_from_the_api_and_the_cli(
    tmp_path: Path, borderline: str, verdicts: list[str]
) -> None:
    suite = write(tmp_path / "evals" / "parity.eval.yaml", PARITY_SUITE)
    done = run_cli("run", str(suite), "--json", "--borderline", borderline, cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    cli = json.loads(done.stdout)
    bound = borderline if borderline == "off" else float(borderline)
    api = assay.evaluate(suite, config=EvalConfig(borderline=bound, store=False))
    assert _stable(cli) == _stable(api.model_dump(mode="json"))
    assert [r["verdict"] for r in cli["results"]] == verdicts


# -- the package face ---------------------------------------------------------------------------


def test_every_public_name_resolves_lazily() -> None:
    probe = (
        "import sys, assay; heavy = sorted(m for m in sys.modules if m.startswith('assay.')); "
        "print(heavy); [getattr(assay, n) for n in assay.__all__]; print('ok')"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split("\n")[:2] == ["['assay._version']", "ok"]
    assert assay.RunResult is assay.EvalSummary
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        _ = assay.nope  # type: ignore[attr-defined]


def test_i26_1_grade_takes_a_rag_answer_with_its_passages_and_expected_ids() -> None:
    produced = {
        "output": "Refunds are accepted within 30 days.",
        "context": [
            {"id": "shipping", "text": "Shipping is free."},
            {"id": "refunds", "text": "Refunds are accepted within 30 days of purchase."},
        ],
    }
    result = assay.grade(
        produced,
        graders=[{"type": "faithfulness"}, {"type": "retrieval", "metric": "mrr"}],
        expected_context_ids=["refunds"],
    )
    assert [g.score for g in result.grader_results] == [1.0, 0.5]
    assert [p.id for p in result.context] == ["shipping", "refunds"]
