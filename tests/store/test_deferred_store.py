"""`DeferredStore`: the store `assay run` opens only when it reads, and the writer process that
creates, fills and finishes a run in a database the run's own process never opened."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from assay.errors import UsageError
from assay.results import CaseResult, RunResult, RunSummary
from assay.store import DeferredStore, RawJSON, RunFinish, StoreWriter, open_store

MakeCase = Callable[..., CaseResult]


@pytest.fixture(autouse=True)
def _no_database_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)


def _writer(deferred: DeferredStore) -> StoreWriter:
    writer = deferred.spawn_writer()
    assert writer is not None
    return writer


def _finish(writer: StoreWriter, run_id: str, total: int) -> None:
    writer.finish_run(
        run_id,
        RunFinish(
            status="completed",
            finished_at="2025-01-02T03:05:00.000000Z",
            summary=RunSummary(total=total, passed_count=total, passed=True),
            duration_ms=12.5,
        ),
    )


def test_the_writer_process_creates_fills_and_finishes_a_run_the_parent_never_opened(
    location: str, make_run: Callable[..., RunResult], rich_cases: list[CaseResult]
) -> None:
    deferred = DeferredStore(location)
    writer = _writer(deferred)
    writer.create_run(make_run(), {"suite": RawJSON('{"name":"s"}'), "options": {"repeat": 2}})
    writer.send("run-0001", [case.model_dump_json() for case in rich_cases])
    writer.receive()
    _finish(writer, "run-0001", len(rich_cases))
    writer.close()
    assert not deferred.opened  # everything so far happened in the writer process
    stored = deferred.get_run("run-0001", include_results=True)
    assert deferred.opened
    assert stored.status == "completed" and stored.passed
    assert stored.summary.total == len(rich_cases) and stored.duration_ms == 12.5
    assert stored.results == rich_cases
    assert deferred.get_snapshot("run-0001") == {"suite": {"name": "s"}, "options": {"repeat": 2}}
    deferred.close()


def test_a_store_that_cannot_be_opened_refuses_the_runs_creation_and_every_later_request(
    tmp_path: Path, make_run: Callable[..., RunResult], make_case: MakeCase
) -> None:
    (tmp_path / "blocker").write_text("a file where the store's directory should be")
    deferred = DeferredStore(tmp_path / "blocker" / "runs.db")
    writer = _writer(deferred)
    with pytest.raises(UsageError, match="cannot create the directory of the run store"):
        writer.create_run(make_run(), {})
    writer.send("run-0001", [make_case("a").model_dump_json()])
    with pytest.raises(UsageError, match="cannot create the directory of the run store"):
        writer.receive()
    writer.close()
    assert not deferred.opened


def test_describing_a_sqlite_file_and_closing_open_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    deferred = DeferredStore(None)
    assert deferred.describe() == str(tmp_path / ".assay" / "assay.db")
    deferred.close()
    assert not deferred.opened
    assert not (tmp_path / ".assay").exists()  # not even its directory was made
    assert DeferredStore("rel/r.db").describe() == str(tmp_path / "rel" / "r.db")


def test_the_location_is_chosen_like_open_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = str(tmp_path / "project.db")
    assert DeferredStore(None, fallback=project).describe() == project
    monkeypatch.setenv("ASSAY_DATABASE_URL", f"sqlite:///{tmp_path}/env.db")
    from_env = DeferredStore(None, fallback=project)
    assert from_env.location.source == "$ASSAY_DATABASE_URL"
    assert from_env.describe() == str(tmp_path / "env.db")  # a URL is parsed by opening it
    assert from_env.opened
    from_env.close()
    assert DeferredStore(tmp_path / "flag.db", fallback=project).describe() == str(
        tmp_path / "flag.db"
    )


def test_an_unsupported_scheme_is_refused_at_once_and_a_bad_url_on_first_use() -> None:
    with pytest.raises(UsageError, match="unsupported database scheme 'mysql'") as info:
        DeferredStore("mysql://u:pw@h/d")
    assert "pw" not in str(info.value)
    in_memory = DeferredStore("sqlite://")
    with pytest.raises(UsageError, match="names an in-memory SQLite database"):
        in_memory.list_runs()


def test_a_postgres_store_describes_itself_without_its_password(postgres_url: str) -> None:
    deferred = DeferredStore(postgres_url.replace("postgresql+psycopg://", "postgresql://"))
    with open_store(postgres_url) as direct:
        assert deferred.describe() == direct.describe()
    deferred.close()


def test_every_call_reaches_the_store_it_opens(
    location: str, make_run: Callable[..., RunResult], make_case: MakeCase
) -> None:
    deferred = DeferredStore(location)
    deferred.create_run(make_run(), {"k": 1})
    deferred.add_case_result("run-0001", make_case("a"))
    deferred.add_case_results("run-0001", [make_case("b", score=0.1, verdict="fail")])
    deferred.finish_run(
        "run-0001",
        RunFinish(
            status="completed",
            finished_at="2025-01-02T03:05:00.000000Z",
            summary=RunSummary(total=2, passed_count=1, failed_count=1, passed=True),
            duration_ms=1.0,
        ),
    )
    assert [r.id for r in deferred.list_runs(suite="support-bot", limit=5)] == ["run-0001"]
    assert deferred.count_runs(status="completed") == 1
    assert [r.case_id for r in deferred.iter_case_results("run-0001", verdicts=["fail"])] == ["b"]
    assert len(list(deferred.iter_case_results_json("run-0001"))) == 2
    assert [s.case_id for s in deferred.iter_case_scores("run-0001")] == ["a", "b"]
    assert deferred.get_snapshot("run-0001") == {"k": 1}
    assert deferred.page_case_results("run-0001", sort="score", limit=1).total == 2
    assert deferred.get_case_result("run-0001", "b").verdict == "fail"
    assert deferred.get_run_facets("run-0001").verdicts["fail"] == 1
    pinned = deferred.pin_baseline("run-0001", pinned_at="2025-01-03T00:00:00.000000Z")
    assert deferred.get_baseline("support-bot") == pinned
    assert deferred.list_baselines() == [pinned]
    later = "2026-01-01T00:00:00.000000Z"
    passing = deferred.last_passing_run("support-bot", "openai:gpt-4o-mini", before=later)
    assert passing is not None and passing.id == "run-0001"
    assert deferred.unpin_baseline("support-bot") == pinned
    deferred.create_run(make_run("run-0002"), {})
    deferred.finish_run(
        "run-0002",
        RunFinish(
            status="interrupted",
            finished_at="2025-01-02T03:06:00.000000Z",
            summary=RunSummary(),
            duration_ms=1.0,
        ),
    )
    assert deferred.reopen_run("run-0002").status == "running"
    assert deferred.delete_run("run-0002", force=True) == "run-0002"
    _writer(deferred).close()  # once opened, the opened store starts the writer
    deferred.close()


def test_i23_3_a_kept_writer_reads_results_back_one_read_at_a_time(
    location: str, make_run: Callable[..., RunResult], rich_cases: list[CaseResult]
) -> None:
    deferred = DeferredStore(location)
    writer = _writer(deferred)
    writer.create_run(make_run(), {})
    writer.send("run-0001", [case.model_dump_json() for case in rich_cases])
    writer.receive()
    _finish(writer, "run-0001", len(rich_cases))
    deferred.keep_writer(writer)
    # Through the kept writer: the parent never opens the store.
    assert list(deferred.iter_case_results("run-0001")) == rich_cases
    verdicts = {case.verdict for case in rich_cases[:1]}
    assert list(deferred.iter_case_results("run-0001", verdicts=verdicts)) == [
        case for case in rich_cases if case.verdict in verdicts
    ]
    assert not deferred.opened
    # Two reads interleaved: the second, started while the first is in flight, opens the store.
    first, second = (
        deferred.iter_case_results("run-0001"),
        deferred.iter_case_results_json("run-0001"),
    )
    assert next(first) == rich_cases[0]
    assert [CaseResult.model_validate_json(d) for d in second] == rich_cases
    assert deferred.opened
    assert list(first) == rich_cases[1:]
    # A read abandoned half way ends the process: its answers would be out of step.
    abandoned = writer.read_documents("run-0001")
    next(abandoned)
    abandoned.close()
    assert not writer.alive
    deferred.close()
