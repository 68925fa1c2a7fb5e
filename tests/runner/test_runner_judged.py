"""Judged runs end to end: expected outcomes as the case gate, judge resolution, the judge's
cost kept apart from the target's, the cache, and borderline re-judging (SPEC §5)."""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay import EvalConfig, evaluate
from assay.errors import ConfigError, UsageError
from assay.results import RunResult, TokenUsage
from assay.testing import FakeOpenAIServer
from assay.testing._judge_script import is_judge_request
from tests.conftest import write

REPLIES = {"refund?": "Refunds within 30 days.", "hours?": "We never close."}


def suite_file(tmp_path: Path, tests: list[dict[str, Any]], **top: Any) -> Path:
    suite = {
        "name": "judged",
        "target": {"type": "fake", "responses": REPLIES},
        "tests": tests,
        **top,
    }
    return write(tmp_path / "judged.eval.yaml", yaml.safe_dump(suite, sort_keys=False))


def run(path: Path, server: FakeOpenAIServer, **config: Any) -> RunResult:
    settings: dict[str, Any] = {
        "store": False,
        "cache_mode": "off",
        "judge_base_url": server.base_url,
    }
    settings.update(config)
    return evaluate(path, config=EvalConfig(**settings))


@pytest.fixture(autouse=True)
def _judge_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # the response cache lives in ./.assay
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    monkeypatch.delenv("ASSAY_JUDGE_MODEL", raising=False)
    monkeypatch.delenv("ASSAY_JUDGE_BASE_URL", raising=False)


def outcomes_judge(verdicts: dict[str, list[bool]]) -> Any:
    """Answers each outcome statement found in the prompt with the verdict listed for it."""

    def reply(body: dict[str, Any], schema: Any) -> dict[str, Any]:
        del schema
        prompt = body["messages"][-1]["content"]
        for statement, answers in verdicts.items():
            if statement in prompt:
                return {
                    "outcomes": {
                        str(i + 1): {"passed": ok, "justification": f"checked {i}"}
                        for i, ok in enumerate(answers)
                    }
                }
        raise AssertionError(prompt)

    return reply


def test_expected_outcomes_are_the_case_gate_and_their_cost_is_the_judges(tmp_path: Path) -> None:
    path = suite_file(
        tmp_path,
        [
            {"id": "good", "input": "refund?", "expected_outcomes": ["Says 30 days", "Is polite"]},
            {"id": "bad", "input": "hours?", "expected_outcomes": ["Gives opening hours"]},
        ],
        judge={"model": "judge-model"},
    )
    judge = outcomes_judge({"Says 30 days": [True, True], "Gives opening hours": [False]})
    with FakeOpenAIServer(judge=judge) as server:
        result = run(path, server)
        asked = server.request_count
    by_id = {c.case_id: c for c in result.results}  # results come in completion order
    good, bad = by_id["good"], by_id["bad"]
    assert (good.verdict, good.score, bad.verdict, bad.score) == ("pass", 1.0, "fail", 0.0)
    assert [(o.outcome, o.passed, o.justification) for o in good.expected_outcome_results] == [
        ("Says 30 days", True, "checked 0"),
        ("Is polite", True, "checked 1"),
    ]
    assert bad.expected_outcome_results[0].passed is False
    (shown,) = good.grader_results
    assert (shown.name, shown.weight, shown.judge_model) == (
        "expected_outcomes",
        0.0,
        "judge-model",
    )
    assert asked == 2  # one call per case, every statement in it
    assert good.judge_calls == 1 and good.judge_token_usage is not None
    assert good.token_usage is None  # the fake target reports none: nothing leaked across
    assert result.summary.judge_calls == 2
    assert result.summary.judge_token_usage == (
        good.judge_token_usage + bad.judge_token_usage  # type: ignore[operator]
    )


def test_a_failed_outcome_judgement_is_an_error_counted_in_judge_error_rate(
    tmp_path: Path,
) -> None:
    path = suite_file(
        tmp_path,
        [{"id": "a", "input": "refund?", "expected_outcomes": ["Says 30 days"]}],
        judge={"model": "judge-model", "max_retries": 0},
    )
    with FakeOpenAIServer(judge={}, faults={"503": 1.0}) as server:
        result = run(path, server)
    (case,) = result.results
    assert (case.verdict, case.score) == ("error", None)
    assert case.error is not None and "HTTP 503" in case.error.message
    assert (result.summary.judge_error_rate, result.summary.error_count) == (1.0, 1)


def test_a_suite_needing_a_judge_without_one_fails_before_any_case_runs(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s.eval.yaml",
        "name: s\n"
        "target: {type: fake, default: ok}\n"
        "tests:\n"
        "  - id: a\n"
        "    input: hi\n"
        "    expected_outcomes: [Greets]\n"
        "  - id: b\n"
        "    input: hi\n"
        "    assertions:\n"
        "      - {type: llm-grader, prompt: Polite?}\n",
    )
    with pytest.raises(ConfigError) as info:
        evaluate(path, config=EvalConfig(store=False, cache_mode="off"))
    fix = (
        "needs an LLM judge and none is configured: set `judge: {model: ...}` in the suite or "
        "in assay.yaml, pass --judge-model, or export ASSAY_JUDGE_MODEL"
    )
    assert [str(i) for i in info.value.issues] == [
        f"s.eval.yaml:6 tests[0].expected_outcomes: {fix}",
        f"s.eval.yaml:10 tests[1].assertions[0]: {fix}",
    ]


def test_the_environment_supplies_the_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = suite_file(
        tmp_path, [{"id": "a", "input": "refund?", "expected_outcomes": ["Says 30 days"]}]
    )
    with FakeOpenAIServer(judge=outcomes_judge({"Says 30 days": [True]})) as server:
        monkeypatch.setenv("ASSAY_JUDGE_MODEL", "env-judge")
        monkeypatch.setenv("ASSAY_JUDGE_BASE_URL", server.base_url)
        result = evaluate(path, config=EvalConfig(store=False, cache_mode="off"))
        model = server.requests[-1]["model"]
    assert (result.results[0].verdict, model) == ("pass", "env-judge")


def test_run_level_model_wins_over_the_graders_own_which_wins_over_the_suites(
    tmp_path: Path,
) -> None:
    graders = [
        {"type": "llm-grader", "prompt": "Polite?", "name": "own", "judge": {"model": "strong"}},
        {"type": "llm-grader", "prompt": "Short?", "name": "default"},
    ]
    path = suite_file(
        tmp_path, [{"id": "a", "input": "refund?", "assertions": graders}], judge={"model": "cheap"}
    )
    with FakeOpenAIServer(judge={"score": 1.0}) as server:
        run(path, server)
        configured = sorted(r["model"] for r in server.requests)
        server.reset_counters()
        run(path, server, judge_model="override")
        overridden = sorted(r["model"] for r in server.requests)
    assert configured == ["cheap", "strong"]
    assert overridden == ["override", "override"]


def test_a_second_identical_run_is_served_from_the_cache_and_a_new_model_misses(
    tmp_path: Path,
) -> None:
    path = suite_file(
        tmp_path,
        [
            {
                "id": "a",
                "input": "refund?",
                "assertions": [{"type": "llm-grader", "prompt": "Ok?"}],
            },
            {"id": "b", "input": "hours?", "expected_outcomes": ["Says 30 days"]},
        ],
        judge={"model": "judge-model"},
    )
    judge = {"score": 0.9, "outcomes": {"1": {"passed": True, "justification": "says so"}}}
    with FakeOpenAIServer(judge=judge) as server:
        first = run(path, server, cache_mode="use")
        filled = server.request_count
        second = run(path, server, cache_mode="use")
        after_second = server.request_count
        run(path, server, cache_mode="use", judge_model="other-judge")
        after_switch = server.request_count
    assert filled == 2 and after_second == filled  # zero judge requests the second time
    assert after_switch == filled + 2
    assert [c.verdict for c in second.results] == [c.verdict for c in first.results]
    assert second.results[0].grader_results[0].score == 0.9


def test_a_borderline_case_is_re_judged_and_decided_by_the_mean(tmp_path: Path) -> None:
    path = suite_file(
        tmp_path,
        [{"id": "a", "input": "refund?", "assertions": [{"type": "llm-grader", "prompt": "Ok?"}]}],
        judge={"model": "judge-model"},
        execution={"rejudge_borderline": 2},
    )
    scores = itertools.chain([0.7, 0.9, 0.86], itertools.repeat(0.0))
    with FakeOpenAIServer(judge=lambda body, schema: {"score": next(scores)}) as server:
        result = run(path, server)
        asked = server.request_count
    (case,) = result.results
    assert asked == 3
    assert case.rejudged_scores == [0.7, 0.9, 0.86]
    assert (case.score, case.verdict) == (pytest.approx(0.82), "pass")
    assert case.judge_calls == 3


def test_a_clear_verdict_is_not_re_judged(tmp_path: Path) -> None:
    path = suite_file(
        tmp_path,
        [{"id": "a", "input": "refund?", "assertions": [{"type": "llm-grader", "prompt": "Ok?"}]}],
        judge={"model": "judge-model"},
        execution={"rejudge_borderline": 3},
    )
    with FakeOpenAIServer(judge={"score": 0.95}) as server:
        result = run(path, server)
        asked = server.request_count
    assert (asked, result.results[0].rejudged_scores) == (1, [])


def test_judge_usage_is_reported_per_grader_and_per_run(tmp_path: Path) -> None:
    path = suite_file(
        tmp_path,
        [{"id": "a", "input": "refund?", "assertions": [{"type": "llm-grader", "prompt": "Ok?"}]}],
        judge={"model": "judge-model", "cost_per_1k_input": 1.0, "cost_per_1k_output": 2.0},
    )
    reply = {"score": 1.0}
    with FakeOpenAIServer(judge=reply) as server:
        result = run(path, server)
    (grader,) = result.results[0].grader_results
    assert grader.token_usage is not None
    usage: TokenUsage = grader.token_usage
    assert grader.cost_usd == pytest.approx((usage.input * 1.0 + usage.output * 2.0) / 1000)
    assert result.summary.judge_cost_usd == grader.cost_usd
    assert result.cost_usd is None  # the target's cost: none for a fake target


def test_judge_concurrency_bounds_judge_calls_separately_from_targets(tmp_path: Path) -> None:
    tests = [
        {"id": f"c{i}", "input": "refund?", "assertions": [{"type": "llm-grader", "prompt": "?"}]}
        for i in range(8)
    ]
    path = suite_file(
        tmp_path,
        tests,
        judge={"model": "judge-model"},
        execution={"concurrency": 8, "judge_concurrency": 2},
    )
    with FakeOpenAIServer(judge={"score": 1.0}, latency_ms=100) as server:
        started = time.perf_counter()
        run(path, server)
        wall = time.perf_counter() - started
    # 8 judge calls of >= 100 ms, at most 2 at a time: at least 4 rounds
    assert wall >= 0.4


def test_a_case_waiting_for_its_judge_leaves_its_target_slot_to_the_next(tmp_path: Path) -> None:
    # concurrency bounds target calls and judge_concurrency judge calls, separately: while
    # one case's judge call runs, the next case's target call may run too.
    events: list[tuple[int, str]] = []

    def kind(body: dict[str, Any]) -> str:
        return "judge" if is_judge_request(body) else "target"

    def arrive(body: dict[str, Any]) -> None:
        events.append((1, kind(body)))

    def answer(body: dict[str, Any]) -> str:
        events.append((-1, "target"))
        return "Refunds within 30 days."

    def judge(body: dict[str, Any], schema: Any) -> dict[str, Any]:
        events.append((-1, "judge"))
        return {"score": 1.0}

    tests = [
        {"id": f"c{i}", "input": "refund?", "assertions": [{"type": "llm-grader", "prompt": "?"}]}
        for i in range(3)
    ]
    with FakeOpenAIServer(answer, judge=judge, fault=arrive, latency_ms=100) as server:
        target = {"type": "openai", "model": "fake-model", "base_url": server.base_url}
        path = suite_file(
            tmp_path,
            tests,
            target={**target, "api_key_env": None},
            judge={"model": "judge-model"},
            execution={"concurrency": 1, "judge_concurrency": 1},
        )
        result = run(path, server)
    assert [r.verdict for r in result.results] == ["pass"] * 3
    in_flight = {"target": 0, "judge": 0}
    peaks = {"target": 0, "judge": 0, "both": 0}
    for step, call in events:
        in_flight[call] += step
        peaks[call] = max(peaks[call], in_flight[call])
        peaks["both"] = max(peaks["both"], sum(in_flight.values()))
    assert peaks == {"target": 1, "judge": 1, "both": 2}


def test_a_turns_expected_outcomes_gate_that_turn(tmp_path: Path) -> None:
    turns = [
        {"input": "refund?", "expected_outcomes": ["Says 30 days"]},
        {"input": "hours?", "expected_outcomes": ["Gives opening hours"]},
    ]
    path = suite_file(
        tmp_path, [{"id": "conv", "turns": turns, "aggregation": "min"}], judge={"model": "j"}
    )
    judge = outcomes_judge({"Says 30 days": [True], "Gives opening hours": [False]})
    with FakeOpenAIServer(judge=judge) as server:
        result = run(path, server)
    (case,) = result.results
    first, second = case.turns
    assert [o.passed for o in first.expected_outcome_results] == [True]
    assert (first.verdict, second.verdict) == ("pass", "fail")
    assert case.verdict == "fail"
    assert case.judge_calls == 2


def rubric_judge(scores: dict[str, int]) -> Any:
    def reply(body: dict[str, Any], schema: Any) -> dict[str, Any]:
        del body, schema
        items = {
            k: {"score": v, "satisfied": v >= 7, "reasoning": "r", "evidence": "e"}
            for k, v in scores.items()
        }
        return {"items": items}

    return reply


def test_test_level_rubrics_are_one_grader_and_a_failed_required_item_gates_the_case(
    tmp_path: Path,
) -> None:
    rubrics = [
        {
            "id": "accuracy",
            "outcome": "Factually correct",
            "weight": 2,
            "required": True,
            "required_min_score": 7,
        },
        {"id": "tone", "outcome": "Friendly"},
    ]
    graders = [{"type": "contains", "value": "30 days", "name": "mentions"}]
    path = suite_file(
        tmp_path,
        [{"id": "a", "input": "refund?", "assertions": graders, "rubrics": rubrics}],
        judge={"model": "j"},
    )
    with FakeOpenAIServer(judge=rubric_judge({"accuracy": 9, "tone": 6})) as server:
        good = run(path, server).results[0]
    with FakeOpenAIServer(judge=rubric_judge({"accuracy": 6, "tone": 10})) as server:
        gated = run(path, server).results[0]
    names = [g.name for g in good.grader_results]
    assert names == ["mentions", "rubrics"]
    assert good.grader_results[1].score == pytest.approx((0.9 * 2 + 0.6) / 3)
    assert (good.verdict, good.score) == ("pass", pytest.approx((1.0 + 0.8) / 2))
    rubric = gated.grader_results[1]
    assert (rubric.verdict, rubric.required) == ("fail", True)
    assert (gated.verdict, gated.score) == ("fail", 0.0)


def test_tone_mode_judge_needs_a_judge_but_auto_falls_back(tmp_path: Path) -> None:
    tone = {"type": "tone", "profile": {"formality": "formal"}}
    auto = suite_file(tmp_path, [{"id": "a", "input": "refund?", "assertions": [tone]}])
    result = evaluate(auto, config=EvalConfig(store=False, cache_mode="off"))
    assert result.results[0].grader_results[0].judge_model is None
    forced = suite_file(
        tmp_path, [{"id": "a", "input": "refund?", "assertions": [{**tone, "mode": "judge"}]}]
    )
    with pytest.raises(ConfigError, match=r"tests\[0\]\.assertions\[0\]: needs an LLM judge"):
        evaluate(forced, config=EvalConfig(store=False, cache_mode="off"))


def test_a_default_judge_without_its_api_key_stops_the_run_before_any_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    path = suite_file(
        tmp_path,
        [{"id": "a", "input": "refund?", "expected_outcomes": ["Says 30 days"]}],
        judge={"model": "gpt-4.1-mini"},
    )
    with pytest.raises(UsageError) as info:
        evaluate(path, config=EvalConfig(store=False, cache_mode="off"))
    assert str(info.value) == (
        "judged.eval.yaml:12 judge: the judge gpt-4.1-mini reads its API key from "
        "OPENAI_API_KEY, which is not set; export it, or name another variable in the judge's "
        "`api_key_env`"
    )


def test_the_run_snapshot_records_the_resolved_judge_without_secrets(tmp_path: Path) -> None:
    from assay.store import SQLiteStore

    path = suite_file(
        tmp_path,
        [{"id": "a", "input": "refund?", "expected_outcomes": ["Says 30 days"]}],
        judge={"model": "suite-judge", "temperature": 0.2},
    )
    db = tmp_path / "runs.db"
    with FakeOpenAIServer(judge=outcomes_judge({"Says 30 days": [True]})) as server:
        run_id = run(path, server, store=str(db)).id
    with SQLiteStore(db) as store:
        snapshot = store.get_snapshot(run_id)
    assert snapshot["judge"] == {
        "model": "suite-judge",
        "temperature": 0.2,
        "base_url": server.base_url,
    }
    assert snapshot["options"]["judge_base_url"] == server.base_url  # resume asks it again
