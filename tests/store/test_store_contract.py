"""The store contract: every backend (a SQLite file, a PostgreSQL server) passes these tests."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable

import pytest
from sqlalchemy import delete, func, select

from assay.errors import UsageError
from assay.results import CaseResult, RunResult, RunStatus, RunSummary, TokenUsage
from assay.store import RunFinish, SQLStore, open_store
from assay.store._tables import case_results, runs

MakeRun = Callable[..., RunResult]
MakeCase = Callable[..., CaseResult]

SUMMARY = RunSummary(
    total=3,
    passed_count=1,
    failed_count=1,
    error_count=1,
    passed_pct=33.3333,
    failed_pct=33.3333,
    error_pct=33.3333,
    cases_pass_rate_pct=33.3333,
    weighted_metrics_score_pct=70.0,
    metrics_passed=False,
    cases_passed=False,
    passed=False,
    judge_error_rate=0.5,
)


def finish(store: SQLStore, run_id: str, status: RunStatus = "completed") -> None:
    store.finish_run(
        run_id,
        RunFinish(
            status=status,  # type: ignore[arg-type]
            finished_at="2025-01-02T03:09:00.000000Z",
            summary=SUMMARY,
            duration_ms=295000.125,
            token_usage=TokenUsage(input=1000, output=200),
            cost_usd=0.0123,
        ),
    )


def test_round_trip_reproduces_the_models_exactly(
    store: SQLStore, make_run: MakeRun, rich_cases: list[CaseResult]
) -> None:
    run = make_run()
    snapshot = {"suite": {"name": "support-bot", "tests": [{"id": "refund-policy"}]}, "git": None}
    store.create_run(run, snapshot)
    for case in rich_cases:
        store.add_case_result(run.id, case)
    finish(store, run.id)

    expected = run.model_copy(
        update={
            "status": "completed",
            "finished_at": "2025-01-02T03:09:00.000000Z",
            "summary": SUMMARY,
            "duration_ms": 295000.125,
            "token_usage": TokenUsage(input=1000, output=200),
            "cost_usd": 0.0123,
            "results": rich_cases,
        }
    )
    loaded = store.get_run(run.id, include_results=True)
    assert loaded == expected
    assert loaded.model_dump() == expected.model_dump()
    assert loaded.config.model_extra == {"judge_prompt_version": "rubric-v3"}
    assert loaded.results[2].score_ci95 == (-0.7423, 1.7423)
    assert store.get_run(run.id) == expected.model_copy(update={"results": []})
    assert store.get_snapshot(run.id) == snapshot
    assert list(store.iter_case_results(run.id)) == rich_cases


def test_a_running_run_reads_back_with_no_finish_fields(store: SQLStore, make_run: MakeRun) -> None:
    run = make_run()
    store.create_run(run, {})
    loaded = store.get_run(run.id)
    assert loaded == run
    assert loaded.finished_at is None
    assert loaded.token_usage is None


def test_create_run_stores_results_already_on_the_run(
    store: SQLStore, make_run: MakeRun, rich_cases: list[CaseResult]
) -> None:
    imported = make_run(results=rich_cases).model_copy(update={"status": "completed"})
    store.create_run(imported, {"imported": True})
    assert store.get_run(imported.id, include_results=True) == imported


def test_create_run_with_duplicate_case_ids_stores_nothing(
    store: SQLStore, make_run: MakeRun, make_case: MakeCase
) -> None:
    bad = make_run(results=[make_case("a"), make_case("a")])
    with pytest.raises(UsageError, match="lists a case id more than once"):
        store.create_run(bad, {})
    with pytest.raises(UsageError, match="not found"):
        store.get_run(bad.id)


def test_duplicate_run_id_is_rejected(store: SQLStore, make_run: MakeRun) -> None:
    store.create_run(make_run(), {})
    with pytest.raises(UsageError, match=r"^run 'run-0001' already exists in "):
        store.create_run(make_run(), {})


def test_results_committed_before_finish_survive_in_another_store(
    location: str, store: SQLStore, make_run: MakeRun, make_case: MakeCase
) -> None:
    run = make_run()
    store.create_run(run, {})
    for case_id in ("a", "b", "c"):
        store.add_case_result(run.id, make_case(case_id))

    # The writer is still open and the run unfinished, as in a run that is in progress.
    with open_store(location) as reader:
        loaded = reader.get_run(run.id, include_results=True)
    assert loaded.status == "running"
    assert [r.case_id for r in loaded.results] == ["a", "b", "c"]


def test_results_survive_a_crashed_process(location: str, make_run: MakeRun) -> None:
    run = make_run()
    script = textwrap.dedent(
        """
        import os, sys
        from assay.results import CaseResult, RunResult
        from assay.store import open_store

        store = open_store(sys.argv[1])
        run = RunResult.model_validate_json(sys.argv[2])
        store.create_run(run, {"pid": os.getpid()})
        for case_id in ("a", "b", "c"):
            store.add_case_result(run.id, CaseResult(
                case_id=case_id, score=1.0, verdict="pass", threshold=0.8))
        os._exit(9)  # no finish_run, no close, no interpreter cleanup
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, location, run.model_dump_json()],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 9, proc.stderr

    with open_store(location) as after:
        loaded = after.get_run(run.id, include_results=True)
        assert loaded.status == "running"
        assert [r.case_id for r in loaded.results] == ["a", "b", "c"]
        # The run can be completed afterwards (what `--resume` does).
        after.add_case_result(
            run.id, CaseResult(case_id="d", score=0.0, verdict="fail", threshold=0.8)
        )
        finish(after, run.id, status="completed")
        assert [r.case_id for r in after.iter_case_results(run.id)] == ["a", "b", "c", "d"]


def test_finished_run_refuses_new_results(
    store: SQLStore, make_run: MakeRun, make_case: MakeCase
) -> None:
    run = make_run()
    store.create_run(run, {})
    store.add_case_result(run.id, make_case("a"))
    finish(store, run.id, status="interrupted")
    with pytest.raises(
        UsageError,
        match=r"^cannot add a case result to run 'run-0001': it is already finished "
        r"\(status 'interrupted'\) and finished runs are immutable$",
    ):
        store.add_case_result(run.id, make_case("b"))
    assert [r.case_id for r in store.iter_case_results(run.id)] == ["a"]


def test_finished_run_refuses_a_second_finish(store: SQLStore, make_run: MakeRun) -> None:
    run = make_run()
    store.create_run(run, {})
    finish(store, run.id, status="failed")
    with pytest.raises(UsageError, match=r"^cannot finish run 'run-0001': it is already finished"):
        store.finish_run(
            run.id,
            RunFinish(
                status="completed",
                finished_at="2030-01-01T00:00:00Z",
                summary=RunSummary(total=99),
                duration_ms=1.0,
            ),
        )
    loaded = store.get_run(run.id)
    assert (loaded.status, loaded.finished_at, loaded.summary) == (
        "failed",
        "2025-01-02T03:09:00.000000Z",
        SUMMARY,
    )


def test_finish_with_status_running_is_refused(store: SQLStore, make_run: MakeRun) -> None:
    store.create_run(make_run(), {})
    with pytest.raises(UsageError, match="with status 'running'"):
        finish(store, "run-0001", status="running")
    assert store.get_run("run-0001").status == "running"


def test_writes_to_an_unknown_run_are_refused(store: SQLStore, make_case: MakeCase) -> None:
    with pytest.raises(UsageError, match=r"^cannot add a case result to run 'nope': not found in "):
        store.add_case_result("nope", make_case("a"))
    with pytest.raises(UsageError, match=r"^cannot finish run 'nope': not found in "):
        finish(store, "nope")


def test_duplicate_case_id_in_one_run_is_rejected(
    store: SQLStore, make_run: MakeRun, make_case: MakeCase
) -> None:
    store.create_run(make_run("run-a"), {})
    store.create_run(make_run("run-b"), {})
    store.add_case_result("run-a", make_case("same"))
    with pytest.raises(
        UsageError,
        match=r"^run 'run-a' already has a result for case 'same'; each case is stored once",
    ):
        store.add_case_result("run-a", make_case("same", score=0.1, verdict="fail"))
    store.add_case_result("run-b", make_case("same"))  # another run may reuse the id
    assert [r.score for r in store.iter_case_results("run-a")] == [0.9]


def test_unknown_run_id(store: SQLStore) -> None:
    with pytest.raises(UsageError) as info:
        store.get_run("deadbeef")
    assert str(info.value) == f"run 'deadbeef' not found in {store.describe()}"
    with pytest.raises(UsageError, match="run 'deadbeef' not found"):
        store.get_snapshot("deadbeef")
    # Resolved at the call, not at the first next().
    with pytest.raises(UsageError, match="run 'deadbeef' not found"):
        store.iter_case_results("deadbeef")


def test_id_prefix_lookup(store: SQLStore, make_run: MakeRun) -> None:
    for run_id in ("abcd1234", "abcd5678", "abce0000", "ABCF9999", "xy"):
        store.create_run(make_run(run_id), {"id": run_id})

    assert store.get_run("abcd1").id == "abcd1234"
    assert store.get_run("abce").id == "abce0000"
    assert store.get_snapshot("abcd56") == {"id": "abcd5678"}
    assert list(store.iter_case_results("abcd5")) == []
    assert store.get_run("xy").id == "xy"  # an exact id of any length

    with pytest.raises(
        UsageError,
        match=r"^run id prefix 'abcd' is ambiguous: it matches abcd1234, abcd5678\. "
        r"Give more characters of the id\.$",
    ):
        store.get_run("abcd")
    with pytest.raises(UsageError, match=r"prefix needs at least 4 characters"):
        store.get_run("abc")
    # Prefixes match case-sensitively and literally, unlike SQL LIKE.
    with pytest.raises(UsageError, match="run 'abcf' not found"):
        store.get_run("abcf")
    with pytest.raises(UsageError, match="run 'ab%_' not found"):
        store.get_run("ab%_")


def test_i21_12_a_prefix_of_the_random_part_names_a_generated_run(
    store: SQLStore, make_run: MakeRun
) -> None:
    ids = ("20261122T054312-3f9a1c", "20261122T060000-3f9a2d", "20261123T070000-77aa01")
    for run_id in (*ids, "x-77aa01dd"):  # an id not in the generated form is not split
        store.create_run(make_run(run_id), {"id": run_id})
    assert store.get_run("3f9a1").id == "20261122T054312-3f9a1c"
    assert store.get_run("77aa").id == "20261123T070000-77aa01"
    assert store.get_snapshot("3f9a2") == {"id": "20261122T060000-3f9a2d"}
    with pytest.raises(UsageError) as info:
        store.get_run("3f9a")
    assert str(info.value) == (
        f"run id prefix '3f9a' is ambiguous: it matches {ids[0]}, {ids[1]}. "
        "Give more characters of the id."
    )
    with pytest.raises(UsageError) as info:
        store.get_run("2026")  # the whole id and its random part are both searched
    assert str(info.value) == (
        f"run id prefix '2026' is ambiguous: it matches {', '.join(ids)}. "
        "Give more characters of the id."
    )
    with pytest.raises(UsageError, match="prefix needs at least 4 characters"):
        store.get_run("3f9")


def test_i21_8_runs_filter_by_their_verdict_apart_from_aborted_ones(
    store: SQLStore, make_run: MakeRun
) -> None:
    ended = {"ok": ("completed", True), "below": ("completed", False), "crash": ("failed", False)}
    for minute, (run_id, (status, passed)) in enumerate(ended.items()):
        store.create_run(make_run(run_id, started_at=f"2025-01-02T03:0{minute}:00Z"), {})
        store.finish_run(
            run_id,
            RunFinish(
                status=status,
                finished_at="2025-01-02T04:00:00Z",
                summary=RunSummary(total=1, passed=passed),
                duration_ms=1.0,
            ),
        )
    store.create_run(make_run("live", started_at="2025-01-02T03:09:00Z"), {})

    def ids(**where: object) -> list[str]:
        return [r.id for r in store.list_runs(**where)]  # type: ignore[arg-type]

    assert ids(status="completed", passed=False) == ["below"]
    assert ids(status="completed", passed=True) == ["ok"]
    assert ids(status="failed") == ["crash"]
    assert ids(passed=False) == ["crash", "below"]  # `running` runs have no verdict yet
    assert store.count_runs(status="completed", passed=False) == 1


def test_ambiguous_prefix_lists_at_most_ten_matches(store: SQLStore, make_run: MakeRun) -> None:
    for n in range(12):
        store.create_run(make_run(f"feed{n:02d}"), {})
    with pytest.raises(UsageError) as info:
        store.get_run("feed")
    listed = ", ".join(f"feed{n:02d}" for n in range(10))
    assert str(info.value) == (
        f"run id prefix 'feed' is ambiguous: it matches {listed}, .... "
        "Give more characters of the id."
    )


def test_list_runs_newest_first_with_suite_filter(store: SQLStore, make_run: MakeRun) -> None:
    started = {
        "r1": ("alpha", "2025-01-01T00:00:00Z"),
        "r2": ("beta", "2025-03-01T00:00:00Z"),
        "r3": ("alpha", "2025-02-01T00:00:00Z"),
        "r4": ("alpha", "2025-04-01T00:00:00Z"),
    }
    for run_id, (suite, at) in started.items():
        store.create_run(make_run(run_id, suite=suite, started_at=at), {})
    store.add_case_result("r4", CaseResult(case_id="c", score=1.0, verdict="pass", threshold=0.8))

    assert [r.id for r in store.list_runs()] == ["r4", "r2", "r3", "r1"]
    assert [r.id for r in store.list_runs(suite="alpha")] == ["r4", "r3", "r1"]
    assert [r.id for r in store.list_runs(suite="alpha", limit=2)] == ["r4", "r3"]
    assert store.list_runs(suite="gamma") == []
    assert all(r.results == [] for r in store.list_runs())
    with pytest.raises(UsageError, match="limit must be at least 1, got 0"):
        store.list_runs(limit=0)


def test_results_stream_in_insertion_order_across_batches(
    store: SQLStore, make_run: MakeRun, make_case: MakeCase
) -> None:
    store.create_run(make_run(), {})
    # Ids that sort differently from insertion order, over several fetch batches.
    ids = [f"case-{(n * 7919) % 1000:03d}" for n in range(450)]
    for case_id in ids:
        store.add_case_result("run-0001", make_case(case_id))
    stream = store.iter_case_results("run-0001")
    assert next(stream).case_id == ids[0]
    assert [r.case_id for r in stream] == ids[1:]
    with store.engine.connect() as conn:
        seqs = conn.execute(select(case_results.c.seq).order_by(case_results.c.id)).scalars().all()
    assert seqs == list(range(1, 451))


def test_results_can_be_filtered_by_verdict(
    store: SQLStore, make_run: MakeRun, make_case: MakeCase
) -> None:
    store.create_run(make_run(), {})
    verdicts = ["pass", "fail", "borderline", "pass", "error", "fail"]
    for n, verdict in enumerate(verdicts):
        store.add_case_result("run-0001", make_case(f"c{n}", verdict=verdict))
    failing = store.iter_case_results("run-0001", verdicts=("fail", "error"))
    assert [(r.case_id, r.verdict) for r in failing] == [
        ("c1", "fail"),
        ("c4", "error"),
        ("c5", "fail"),
    ]
    assert list(store.iter_case_results("run-0001", verdicts=())) == []
    assert len(list(store.iter_case_results("run-0001"))) == 6


def test_deleting_a_run_cascades_to_its_results(
    store: SQLStore, make_run: MakeRun, make_case: MakeCase
) -> None:
    for run_id in ("keep", "drop"):
        store.create_run(make_run(run_id), {})
        store.add_case_result(run_id, make_case("a"))
        store.add_case_result(run_id, make_case("b"))
    with store.engine.begin() as conn:
        conn.execute(delete(runs).where(runs.c.id == "drop"))
    with store.engine.connect() as conn:
        remaining = conn.execute(
            select(case_results.c.run_id, func.count()).group_by(case_results.c.run_id)
        ).all()
    assert [tuple(row) for row in remaining] == [("keep", 2)]
