"""execute: bounded concurrency, streaming to the sink, timeouts, errors, repeats, cancellation."""

from __future__ import annotations

import asyncio
import importlib
import os
import statistics
import sys
import textwrap
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType

import pytest

from assay.config import LoadedSuite, load_project, parse_suite
from assay.errors import UsageError
from assay.results import (
    JSON,
    CaseResult,
    ErrorInfo,
    Message,
    RunResult,
    RunSummary,
    TokenUsage,
    ToolCall,
)
from assay.runner import RunOptions, _writer, execute, plan_run
from assay.store import (
    DeferredStore,
    MemorySink,
    RunFinish,
    SQLiteStore,
    StoreLocation,
    StoreWriter,
)
from assay.targets.python import PythonTarget

AGENT_SOURCE = """
import asyncio

in_flight = 0
max_in_flight = 0
started = []


async def answer(case):
    global in_flight, max_in_flight
    started.append(case["id"])
    in_flight += 1
    max_in_flight = max(max_in_flight, in_flight)
    try:
        await asyncio.sleep(case["metadata"].get("delay", 0.01))
        if case["metadata"].get("raise"):
            raise RuntimeError("boom in " + case["id"])
        return case["metadata"].get("reply", "ok")
    finally:
        in_flight -= 1


def structured(case):
    return {
        "output": "refunds take 30 days",
        "messages": [
            {"role": "user", "content": case["input"]},
            {"role": "assistant", "content": "refunds take 30 days"},
        ],
        "tool_calls": [
            {"tool": "lookup_policy", "args": {"topic": "refunds"}, "output": "30d",
             "duration_ms": 3}
        ],
        "token_usage": {"input": 11, "output": 4},
        "cost_usd": 0.25,
    }


def retrieving(case):
    return {"output": "refunds take 30 days",
            "context": [{"id": "refunds", "text": "Refunds: 30 days.", "score": 0.8}]}


def sees_contexts(payload):
    retrieved = [p["id"] for p in payload["retrieved_context"]]
    ok = retrieved == ["refunds"] and payload["context"] == ["static doc"]
    return {"score": 1.0 if ok else 0.0, "reasoning": f"{retrieved} {payload['context']}"}
"""


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """A uniquely named agent module in tmp_path (fresh globals); sys.path/modules restored."""
    name = f"assay_runner_agent_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(AGENT_SOURCE), encoding="utf-8")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    importlib.invalidate_caches()
    yield importlib.import_module(name)
    sys.modules.pop(name, None)


def python_suite(
    module: ModuleType,
    tests: list[JSON],
    *,
    function: str = "answer",
    execution: dict[str, JSON] | None = None,
) -> LoadedSuite:
    return parse_suite(
        {
            "name": "exec",
            "target": {"type": "python", "function": f"{module.__name__}:{function}"},
            "execution": execution or {},
            "tests": tests,
        }
    )


def ok_case(case_id: str, **metadata: JSON) -> JSON:
    return {
        "id": case_id,
        "input": f"question {case_id}",
        "metadata": metadata,
        "assertions": [{"type": "equals", "value": "ok"}],
    }


def run(loaded: LoadedSuite, sink: object | None = None, **options: object) -> RunResult:
    target = sink if sink is not None else MemorySink()
    plan = plan_run(loaded, load_project(), RunOptions(**options))  # type: ignore[arg-type]
    finished = asyncio.run(execute(plan, target))  # type: ignore[arg-type]
    if isinstance(target, MemorySink):
        assert target.run.model_copy(update={"results": []}) == finished
        return target.run
    return finished


class RecordingSink:
    """A sink that records each call, and what the agent had in flight at that moment."""

    def __init__(self, agent: ModuleType | None = None) -> None:
        self.agent = agent
        self.calls: list[tuple[str, JSON]] = []
        self.results: list[CaseResult] = []
        self.created: RunResult | None = None
        self.finished: RunFinish | None = None

    def create_run(self, run: RunResult, snapshot: dict[str, JSON]) -> None:
        self.created = run
        self.calls.append(("create_run", run.status))

    def add_case_result(self, run_id: str, result: CaseResult) -> None:
        assert self.created is not None and run_id == self.created.id
        in_flight = self.agent.in_flight if self.agent is not None else None
        self.calls.append(("add_case_result", (result.case_id, in_flight)))
        self.results.append(result)

    def add_case_results(self, run_id: str, results: Sequence[CaseResult]) -> None:
        for result in results:
            self.add_case_result(run_id, result)

    def finish_run(self, run_id: str, finish: RunFinish) -> None:
        assert self.created is not None and run_id == self.created.id
        self.calls.append(("finish_run", finish.status))
        self.finished = finish


# -- concurrency and streaming -----------------------------------------------------------------


@pytest.mark.parametrize("concurrency", [1, 3])
def test_concurrency_is_bounded(agent: ModuleType, concurrency: int) -> None:
    loaded = python_suite(agent, [ok_case(f"c{i:02d}", delay=0.02) for i in range(12)])
    result = run(loaded, concurrency=concurrency)
    assert agent.max_in_flight == concurrency
    assert agent.in_flight == 0
    assert agent.started == [f"c{i:02d}" for i in range(12)]  # taken in suite order
    assert sorted(r.case_id for r in result.results) == [f"c{i:02d}" for i in range(12)]
    assert {r.verdict for r in result.results} == {"pass"}


def test_the_suite_concurrency_bounds_the_run(agent: ModuleType) -> None:
    loaded = python_suite(
        agent, [ok_case(f"c{i}", delay=0.02) for i in range(6)], execution={"concurrency": 2}
    )
    run(loaded)
    assert agent.max_in_flight == 2


def test_results_stream_to_the_sink_as_each_case_finishes(agent: ModuleType) -> None:
    # With two workers, the fast cases are stored while the slow one is still running.
    loaded = python_suite(
        agent,
        [ok_case("slow", delay=0.15), ok_case("fast-1"), ok_case("fast-2"), ok_case("fast-3")],
    )
    sink = RecordingSink(agent)
    finished = run(loaded, sink, concurrency=2)
    # Each fast case is stored while the slow one is still in flight (in_flight >= 1).
    assert [
        (name, args if name != "add_case_result" else args[0]) for name, args in sink.calls
    ] == [
        ("create_run", "running"),
        ("add_case_result", "fast-1"),
        ("add_case_result", "fast-2"),
        ("add_case_result", "fast-3"),
        ("add_case_result", "slow"),
        ("finish_run", "completed"),
    ]
    in_flight = [args[1] for name, args in sink.calls if name == "add_case_result"]
    assert all(n >= 1 for n in in_flight[:3]) and in_flight[3] == 0, in_flight
    assert sink.created is not None
    assert (sink.created.summary.total, sink.created.finished_at) == (0, None)
    assert sink.finished is not None
    summary = sink.finished.summary
    assert (summary.total, summary.passed_count, summary.cases_pass_rate_pct) == (4, 4, 100.0)
    assert summary.passed is True
    assert finished.summary == summary
    assert finished.status == "completed"
    assert finished.finished_at == sink.finished.finished_at


def test_the_summary_matches_the_streamed_results(agent: ModuleType) -> None:
    loaded = python_suite(
        agent,
        [
            ok_case("good"),
            ok_case("wrong", reply="nope"),
            ok_case("broken", **{"raise": True}),
            ok_case("good-2"),
        ],
    )
    sink = RecordingSink(agent)
    finished = run(loaded, sink, concurrency=4)
    verdicts = {r.case_id: r.verdict for r in sink.results}
    assert verdicts == {"good": "pass", "wrong": "fail", "broken": "error", "good-2": "pass"}
    assert [call[0] for call in sink.calls] == [
        "create_run",
        *["add_case_result"] * 4,
        "finish_run",
    ]
    assert finished.summary == RunSummary(
        total=4,
        passed_count=2,
        failed_count=1,
        error_count=1,
        passed_pct=50.0,
        failed_pct=25.0,
        error_pct=25.0,
        cases_pass_rate_pct=50.0,
        weighted_metrics_score_pct=round(100 * 2 / 3, 4),
        metrics_passed=False,
        cases_passed=False,
        passed=False,
    )


def _watch_writer_process(monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[int]]:
    """Runs of 3+ cases commit through a writer process; (the order in which the process is
    started and the target set up, the process ids)."""
    monkeypatch.setattr(_writer, "PROCESS_MIN_CASES", 3)
    events: list[str] = []
    pids: list[int] = []
    spawn, setup = SQLiteStore.spawn_writer, PythonTarget.setup

    def spawn_writer(store: SQLiteStore) -> StoreWriter | None:
        events.append("writer process")
        process = spawn(store)
        pids.extend([process.pid] if process is not None else [])
        return process

    async def set_up(target: PythonTarget, base_dir: Path) -> None:
        events.append("target set-up")
        await setup(target, base_dir)

    monkeypatch.setattr(SQLiteStore, "spawn_writer", spawn_writer)
    monkeypatch.setattr(PythonTarget, "setup", set_up)
    return events, pids


def test_a_long_runs_writer_process_starts_before_the_target_is_set_up(
    agent: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events, pids = _watch_writer_process(monkeypatch)
    with SQLiteStore(tmp_path / "runs.db") as store:
        finished = run(python_suite(agent, [ok_case(f"c{i}") for i in range(4)]), store)
        stored = store.get_run(finished.id, include_results=True)
    assert events == ["writer process", "target set-up"]  # its start-up overlaps the set-up
    assert [r.case_id for r in stored.results] == ["c0", "c1", "c2", "c3"]
    assert len(pids) == 1


def test_the_writer_process_ends_when_the_target_cannot_be_set_up(
    agent: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events, pids = _watch_writer_process(monkeypatch)
    tests = [ok_case(f"c{i}") for i in range(4)]
    plan = plan_run(python_suite(agent, tests), load_project(), RunOptions())

    def refuse(target: PythonTarget, base_dir: Path) -> None:
        raise UsageError("the module changed since the run was planned")

    # Planning checks the target as its set-up does; here the set-up fails all the same.
    monkeypatch.setattr(PythonTarget, "check", refuse)
    with SQLiteStore(tmp_path / "runs.db") as store, pytest.raises(UsageError):
        asyncio.run(execute(plan, store))
    assert events == ["writer process", "target set-up"]
    with pytest.raises(ProcessLookupError):  # ended and reaped, not left behind
        os.kill(pids[0], 0)


@pytest.mark.parametrize("cases", [4, 2], ids=["writer process", "own thread"])
def test_a_store_that_cannot_be_opened_stops_the_run_before_its_first_case(
    agent: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cases: int
) -> None:
    # The run is created after the target's set-up (by the writer process for a long run):
    # the refusal comes then, and the target is torn down again.
    monkeypatch.setattr(_writer, "PROCESS_MIN_CASES", 3)
    events: list[str] = []
    teardown = PythonTarget.teardown

    async def tear_down(target: PythonTarget) -> None:
        events.append("target teardown")
        await teardown(target)

    monkeypatch.setattr(PythonTarget, "teardown", tear_down)
    (tmp_path / "blocker").write_text("a file where the store's directory should be")
    store = DeferredStore(tmp_path / "blocker" / "runs.db")
    tests = [ok_case(f"c{i}") for i in range(cases)]
    with pytest.raises(UsageError, match="cannot create the directory of the run store"):
        run(python_suite(agent, tests), store)
    assert events == ["target teardown"]
    assert agent.started == []  # type: ignore[attr-defined]


# -- failures of the system under test ---------------------------------------------------------


def test_a_timeout_is_a_case_error_and_other_cases_are_unaffected(agent: ModuleType) -> None:
    slow = ok_case("slow", delay=5.0)
    slow["execution"] = {"timeout_s": 0.05}  # type: ignore[index]
    loaded = python_suite(agent, [ok_case("before"), slow, ok_case("after", delay=0.1)])
    result = run(loaded, concurrency=3)
    by_id = {r.case_id: r for r in result.results}
    assert by_id["slow"].verdict == "error"
    assert by_id["slow"].score is None
    assert by_id["slow"].output is None
    assert by_id["slow"].error == ErrorInfo(
        type="TimeoutError", message="target took longer than 0.05s"
    )
    assert by_id["slow"].grader_results == []
    assert (by_id["before"].verdict, by_id["after"].verdict) == ("pass", "pass")
    assert (result.summary.error_count, result.summary.passed_count) == (1, 2)
    assert result.status == "completed"


def test_a_suite_timeout_applies_to_every_case(agent: ModuleType) -> None:
    loaded = python_suite(
        agent,
        [ok_case("quick"), ok_case("slow", delay=5.0)],
        execution={"timeout_s": 0.1},
    )
    result = run(loaded)
    assert {r.case_id: (r.verdict, r.error) for r in result.results} == {
        "quick": ("pass", None),
        "slow": ("error", ErrorInfo(type="TimeoutError", message="target took longer than 0.1s")),
    }


def test_a_target_that_raises_is_an_error_and_the_run_continues(agent: ModuleType) -> None:
    loaded = python_suite(
        agent, [ok_case("a"), ok_case("boom", **{"raise": True}), ok_case("c"), ok_case("d")]
    )
    result = run(loaded, concurrency=1)
    assert [(r.case_id, r.verdict) for r in result.results] == [
        ("a", "pass"),
        ("boom", "error"),
        ("c", "pass"),
        ("d", "pass"),
    ]
    boom = result.results[1]
    assert boom.error == ErrorInfo(
        type="RuntimeError",
        message=f"function '{agent.__name__}:answer' raised RuntimeError: boom in boom",
    )
    assert (boom.score, boom.output, boom.grader_results) == (None, None, [])
    assert result.status == "completed"
    assert (result.summary.error_count, result.summary.weighted_metrics_score_pct) == (1, 100.0)


def test_a_fake_error_reply_is_a_target_error() -> None:
    loaded = parse_suite(
        {
            "name": "fake-errors",
            "target": {"type": "fake", "responses": {"q": {"error": "model overloaded"}}},
            "tests": [
                {"id": "a", "input": "q", "assertions": [{"type": "contains", "value": "x"}]}
            ],
        }
    )
    [only] = run(loaded).results
    assert (only.verdict, only.error) == (
        "error",
        ErrorInfo(type="TargetError", message="model overloaded"),
    )


# -- repeats -----------------------------------------------------------------------------------

# Four graders, so the three fake replies score 0.5, 0.75 and 0.5.
WORDS = ["alpha", "beta", "gamma", "delta"]
REPLIES = ["alpha beta", "alpha beta gamma", "alpha beta"]
MEAN = statistics.fmean([0.5, 0.75, 0.5])
T_975_DF2 = 4.302652729911275  # Student t quantile: scipy.stats.t.ppf(0.975, 2)


def repeat_suite(strategy: str, reply: JSON = None) -> LoadedSuite:
    return parse_suite(
        {
            "name": "repeats",
            "target": {"type": "fake", "responses": [reply] if reply else REPLIES},
            "execution": {
                "repeat": 3,
                "repeat_strategy": strategy,
                "threshold": 0.7,
                "verdicts": {"borderline": 0.6},
            },
            "tests": [
                {
                    "id": "r",
                    "input": "q",
                    "assertions": [{"type": "contains", "value": w} for w in WORDS],
                }
            ],
        }
    )


def test_every_repeat_is_kept_as_a_sample_with_its_own_verdict() -> None:
    [only] = run(repeat_suite("mean")).results
    assert [(s.index, s.output, s.score, s.verdict) for s in only.samples] == [
        (0, "alpha beta", 0.5, "fail"),
        (1, "alpha beta gamma", 0.75, "pass"),
        (2, "alpha beta", 0.5, "fail"),
    ]
    assert [len(s.grader_results) for s in only.samples] == [4, 4, 4]
    assert [[g.score for g in s.grader_results] for s in only.samples][1] == [1.0, 1.0, 1.0, 0.0]


@pytest.mark.parametrize(
    ("strategy", "score", "verdict", "output"),
    [
        pytest.param("mean", MEAN, "fail", "alpha beta", id="mean"),
        pytest.param("pass_at_k", 0.75, "pass", "alpha beta gamma", id="pass_at_k"),
        pytest.param("pass_all", 0.5, "fail", "alpha beta", id="pass_all"),
        pytest.param("confidence_interval", MEAN, "fail", "alpha beta", id="ci"),
    ],
)
def test_repeat_strategies(strategy: str, score: float, verdict: str, output: str) -> None:
    [only] = run(repeat_suite(strategy)).results
    assert (only.score, only.verdict, only.output, only.threshold) == (
        pytest.approx(score),
        verdict,
        output,
        0.7,
    )
    assert len(only.samples) == 3
    if strategy == "confidence_interval":
        half = T_975_DF2 * statistics.stdev([0.5, 0.75, 0.5]) / 3**0.5
        assert only.score_ci95 == pytest.approx((score - half, score + half))
        assert only.score_ci95 == pytest.approx((0.224779, 0.941888), abs=1e-6)
    else:
        assert only.score_ci95 is None


def test_a_single_run_has_no_samples() -> None:
    loaded = parse_suite(
        {
            "name": "once",
            "target": {"type": "fake", "default": "alpha beta"},
            "tests": [
                {"id": "a", "input": "q", "assertions": [{"type": "contains", "value": "a"}]}
            ],
        }
    )
    [only] = run(loaded).results
    assert (only.samples, only.score_ci95, only.score, only.verdict) == ([], None, 1.0, "pass")


def test_repeats_sum_token_usage_and_cost() -> None:
    reply = {"output": "alpha beta gamma delta", "token_usage": {"input": 5, "output": 2}}
    reply["cost_usd"] = 0.5
    [only] = run(repeat_suite("mean", reply)).results
    assert (only.token_usage, only.cost_usd, only.score, only.verdict) == (
        TokenUsage(input=15, output=6),
        1.5,
        1.0,
        "pass",
    )


# -- what a case result carries ----------------------------------------------------------------


def test_a_case_result_carries_the_transcript_tool_calls_and_usage(agent: ModuleType) -> None:
    loaded = python_suite(
        agent,
        [
            {
                "id": f"refund-{i}",
                "input": "How long do refunds take?",
                "tags": ["billing"],
                "assertions": [{"type": "contains", "value": "30 days"}],
            }
            for i in range(3)
        ],
        function="structured",
    )
    result = run(loaded)
    first = result.results[0]
    assert first.output == "refunds take 30 days"
    assert first.messages == [
        Message(role="user", content="How long do refunds take?"),
        Message(role="assistant", content="refunds take 30 days"),
    ]
    assert first.tool_calls == [
        ToolCall(tool="lookup_policy", args={"topic": "refunds"}, output="30d", duration_ms=3)
    ]
    assert (first.token_usage, first.cost_usd) == (TokenUsage(input=11, output=4), 0.25)
    assert (first.input, first.tags, first.verdict) == (
        "How long do refunds take?",
        ["billing"],
        "pass",
    )
    assert result.token_usage == TokenUsage(input=33, output=12)
    assert result.cost_usd == 0.75
    assert result.duration_ms > 0


def test_a_run_without_usage_reports_none(agent: ModuleType) -> None:
    result = run(python_suite(agent, [ok_case("a")]))
    assert (result.token_usage, result.cost_usd) == (None, None)
    assert (result.results[0].token_usage, result.results[0].cost_usd) == (None, None)


# -- cancellation and crashes ------------------------------------------------------------------


def test_cancelling_a_run_keeps_the_finished_results(agent: ModuleType, tmp_path: Path) -> None:
    loaded = python_suite(agent, [ok_case(f"c{i:02d}", delay=0.05) for i in range(40)])
    plan = plan_run(loaded, load_project(), RunOptions(concurrency=2))
    seen: list[str] = []

    async def main(store: SQLiteStore) -> str:
        enough = asyncio.Event()

        def on_case(result: CaseResult) -> None:
            seen.append(result.case_id)
            if len(seen) >= 3:
                enough.set()

        task = asyncio.create_task(execute(plan, store, on_case=on_case, run_id="run-cancel"))
        await enough.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return "run-cancel"

    with SQLiteStore(tmp_path / "runs.db") as store:
        run_id = asyncio.run(main(store))
    assert agent.in_flight == 0  # the cases in flight were cancelled too

    with SQLiteStore(tmp_path / "runs.db") as store:
        stored = store.get_run(run_id, include_results=True)
    assert stored.status == "interrupted"
    assert stored.finished_at is not None
    assert 3 <= len(seen) < 40
    assert [r.case_id for r in stored.results] == seen
    assert {r.verdict for r in stored.results} == {"pass"}
    assert (stored.summary.total, stored.summary.passed_count) == (len(seen), len(seen))


def test_a_long_run_is_interrupted_and_resumed_through_its_writer_process(
    agent: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Both the interrupted run and its resumption create or finish the run in the writer
    # process; the resumption reads the stored run first, so its own process opens the store.
    # The store keeps the writer the first part finished through, and the second reuses it.
    from assay.api import prepare_resume

    monkeypatch.setattr(_writer, "PROCESS_MIN_CASES", 3)
    pids: list[int] = []
    started = StoreWriter.__init__

    def start(writer: StoreWriter, location: StoreLocation) -> None:
        started(writer, location)
        pids.append(writer.pid)

    monkeypatch.setattr(StoreWriter, "__init__", start)
    loaded = python_suite(agent, [ok_case(f"c{i:02d}", delay=0.02) for i in range(40)])
    plan = plan_run(loaded, load_project(), RunOptions(concurrency=2))
    store = DeferredStore(tmp_path / "runs.db")

    async def interrupted() -> None:
        enough = asyncio.Event()
        task = asyncio.create_task(
            execute(plan, store, on_case=lambda _: enough.set(), run_id="run-long")
        )
        await enough.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())
    assert not store.opened
    assert store.get_run("run-long").status == "interrupted"
    resumed_plan, state = prepare_resume(store, "run-long", suite=loaded)
    finished = asyncio.run(execute(resumed_plan, store, resume=state))
    stored = store.get_run("run-long", include_results=True)
    store.close()
    assert len(pids) == 1  # one writer process, kept by the store between the two parts
    assert finished.status == stored.status == "completed"
    assert sorted(r.case_id for r in stored.results) == [f"c{i:02d}" for i in range(40)]
    assert stored.summary.total == stored.summary.passed_count == 40


def test_i22_10_a_resumed_run_counts_its_summary_from_the_stored_rows(
    agent: ModuleType, tmp_path: Path
) -> None:
    """Whatever else wrote to the run while it was resumed, its summary is what is stored."""
    from assay.api import prepare_resume

    loaded = python_suite(agent, [ok_case(f"c{i:02d}", delay=0.02) for i in range(12)])
    plan = plan_run(loaded, load_project(), RunOptions(concurrency=2))
    with SQLiteStore(tmp_path / "runs.db") as store:

        async def interrupted() -> None:
            enough = asyncio.Event()
            task = asyncio.create_task(
                execute(plan, store, on_case=lambda _: enough.set(), run_id="run-r")
            )
            await enough.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(interrupted())
        resumed_plan, state = prepare_resume(store, "run-r", suite=loaded)
        stray = CaseResult(case_id="written-elsewhere", score=0.0, verdict="fail", threshold=0.8)
        injected: list[str] = []

        def on_case(result: CaseResult) -> None:
            if not injected:  # another writer's row lands while the run is resumed
                injected.append(result.case_id)
                store.add_case_result("run-r", stray)

        finished = asyncio.run(execute(resumed_plan, store, resume=state, on_case=on_case))
        stored = store.get_run("run-r", include_results=True)
    assert len(stored.results) == 13
    assert finished.summary == stored.summary
    assert (stored.summary.total, stored.summary.failed_count) == (13, 1)


class _FailingSink(RecordingSink):
    """Refuses any batch holding case `c`, all or nothing, as a store's transaction would."""

    def add_case_results(self, run_id: str, results: Sequence[CaseResult]) -> None:
        if any(result.case_id == "c" for result in results):
            raise OSError("disk full")
        super().add_case_results(run_id, results)


def test_a_crash_inside_the_run_fails_it_and_surfaces_the_original_error(
    agent: ModuleType,
) -> None:
    # Cases 100 ms apart, ten times the writer's linger, so each is committed on its own.
    loaded = python_suite(agent, [ok_case(case_id, delay=0.1) for case_id in ("a", "b", "c", "d")])
    sink = _FailingSink()
    with pytest.raises(OSError) as raised:
        run(loaded, sink, concurrency=1)
    assert (type(raised.value), str(raised.value)) == (OSError, "disk full")
    assert sink.calls == [
        ("create_run", "running"),
        ("add_case_result", ("a", None)),
        ("add_case_result", ("b", None)),
        ("finish_run", "failed"),
    ]
    assert sink.finished is not None
    summary = sink.finished.summary
    assert (summary.total, summary.passed_count) == (2, 2)


def test_i21_7_a_run_leaves_the_garbage_collector_settings_alone(agent: ModuleType) -> None:
    # `evaluate` may run inside a user's process: collecting rarely and freezing the heap are
    # tricks of the `assay` executable (assay.cli._process), never of a run.
    import gc

    before = gc.get_threshold()
    seen: list[tuple[tuple[int, int, int], int]] = []

    class Spy(RecordingSink):
        def add_case_results(self, run_id: str, results: Sequence[CaseResult]) -> None:
            seen.append((gc.get_threshold(), gc.get_freeze_count()))
            super().add_case_results(run_id, results)

    gc.unfreeze()
    run(python_suite(agent, [ok_case("a")]), Spy(agent))
    assert seen == [(before, 0)]
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_i26_1_the_runtime_context_is_stored_and_graded_apart_from_the_static_one(
    agent: ModuleType,
) -> None:
    test = {
        "id": "rag",
        "input": "refunds?",
        "context": ["static doc"],
        "assertions": [{"type": "code-grader", "function": f"{agent.__name__}:sees_contexts"}],
    }
    result = run(python_suite(agent, [test], function="retrieving")).results[0]
    assert result.grader_results[0].score == 1.0, result.grader_results[0].reasoning
    assert [p.model_dump() for p in result.context] == [
        {"text": "Refunds: 30 days.", "id": "refunds", "score": 0.8}
    ]
