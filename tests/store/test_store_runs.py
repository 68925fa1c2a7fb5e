"""Listing filters, deletion and a created run's scheduling record (`assay runs`)."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from assay.errors import UsageError
from assay.results import CaseResult, RunResult, SchedulingStats
from assay.store import RunFinish, SQLStore

MakeRun = Callable[..., RunResult]
MakeCase = Callable[..., CaseResult]


def test_list_runs_filters_by_target_status_and_start_date(
    store: SQLStore, make_run: MakeRun
) -> None:
    runs = {
        "r1": ("2025-01-01T10:00:00Z", "bot-a", "running"),
        "r2": ("2025-02-01T10:00:00Z", "bot-b", "completed"),
        "r3": ("2025-03-01T10:00:00Z", "bot-a", "completed"),
    }
    for run_id, (at, target, status) in runs.items():
        run = make_run(run_id, started_at=at).model_copy(update={"target": target})
        store.create_run(run.model_copy(update={"status": status}), {})
    assert [r.id for r in store.list_runs(target="bot-a")] == ["r3", "r1"]
    assert [r.id for r in store.list_runs(status="completed")] == ["r3", "r2"]
    assert [r.id for r in store.list_runs(since="2025-02-01")] == ["r3", "r2"]
    assert [r.id for r in store.list_runs(until="2025-02-01T10:00:00Z")] == ["r1"]
    assert [r.id for r in store.list_runs(since="2025-01-15", until="2025-02-15")] == ["r2"]


def test_delete_run_removes_it_and_its_results_only(
    store: SQLStore, make_run: MakeRun, make_case: MakeCase
) -> None:
    store.create_run(make_run("keep-1"), {})
    store.create_run(make_run("gone-1", results=[make_case("a"), make_case("b")]), {})
    store.add_case_result("keep-1", make_case("a"))
    assert store.delete_run("gone", force=True) == "gone-1"  # a unique prefix is enough
    assert [r.id for r in store.list_runs()] == ["keep-1"]
    assert [c.case_id for c in store.iter_case_results("keep-1")] == ["a"]
    with pytest.raises(UsageError, match="gone-1"):
        store.get_run("gone-1")


def test_a_created_run_keeps_its_scheduling_record(store: SQLStore, make_run: MakeRun) -> None:
    scheduling = SchedulingStats(
        target_concurrency=8, target_concurrency_final=4, target_concurrency_lowest=2, retries=3
    )
    store.create_run(make_run().model_copy(update={"scheduling": scheduling}), {})
    assert store.get_run("run-0001").scheduling == scheduling


def _claim_race(location: str, run_id: str, index: int) -> str:
    """One process's attempt to claim `run_id` for a resume: "claimed" or its refusal."""
    from assay.store import open_store

    with open_store(location) as store:
        try:
            store.reopen_run(run_id)
        except UsageError as exc:
            return str(exc)
    return "claimed"


def test_i22_10_of_processes_racing_to_resume_a_run_exactly_one_claims_it(
    store: SQLStore, location: str, make_run: MakeRun, make_case: MakeCase
) -> None:
    import concurrent.futures
    import multiprocessing

    store.create_run(make_run("r1", results=[make_case("a")]), {})
    store.finish_run(
        "r1",
        RunFinish(
            status="interrupted",
            finished_at="2026-01-01T00:00:00Z",
            summary=store.get_run("r1").summary,
            duration_ms=1.0,
        ),
    )
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(6, mp_context=context) as pool:
        outcomes = list(pool.map(_claim_race, [location] * 6, ["r1"] * 6, range(6)))
    assert outcomes.count("claimed") == 1, outcomes
    # The losers saw the winner, a live process of this host, own it.
    refused = [o for o in outcomes if o != "claimed"]
    assert all(o.startswith("run 'r1' is running: pid ") for o in refused), refused
    assert all("(kill " in o and "--takeover" not in o for o in refused), refused
    assert store.get_run("r1").status == "running"
    # Taken over when asked for; then this (live) process owns it and nobody else claims it.
    assert store.reopen_run("r1", takeover=True).status == "running"
    with pytest.raises(UsageError, match=f"is running: pid {os.getpid()} on host"):
        store.reopen_run("r1")


def test_i22_9_nul_characters_in_model_text_are_stored_as_replacement_characters(
    store: SQLStore, make_run: MakeRun
) -> None:
    """A NUL in an output, a judge's reasoning or justification, a tag or a grader name is
    stored (U+FFFD in its place) on both backends; PostgreSQL refused the whole batch."""
    from sqlalchemy import select

    from assay.results import ExpectedOutcomeResult, GraderResult
    from assay.store._tables import case_tags, expected_outcome_results, grader_results

    store.create_run(make_run("r-nul", suite="su\x00ite"), {"note": "snap\x00shot"})
    cases = [
        CaseResult(
            case_id=f"c{i}",
            score=1.0,
            verdict="pass",
            threshold=0.8,
            output=f"answer\x00{i} \\u0000 kept",
            tags=["t\x00ag"],
            grader_results=[
                GraderResult(
                    name="judge\x00",
                    type="llm-grader",
                    score=1.0,
                    verdict="pass",
                    reasoning="because\x00",
                )
            ],
            expected_outcome_results=[
                ExpectedOutcomeResult(outcome="o", passed=True, justification="just\x00ified")
            ],
        )
        for i in range(30)
    ]
    store.add_case_results("r-nul", cases[:15])
    for case in cases[15:]:
        store.add_case_result("r-nul", case)
    stored = list(store.iter_case_results("r-nul"))
    assert len(stored) == 30
    first = stored[0]
    assert first.output == "answer\ufffd0 \\u0000 kept"  # the escaped text is left alone
    assert first.tags == ["t\ufffdag"]
    assert first.grader_results[0].reasoning == "because\ufffd"
    with store.engine.connect() as conn:
        assert conn.execute(select(case_tags.c.tag).distinct()).scalars().all() == ["t\ufffdag"]
        assert set(conn.execute(select(grader_results.c.name)).scalars()) == {"judge\ufffd"}
        assert set(conn.execute(select(expected_outcome_results.c.justification)).scalars()) == {
            "just\ufffdified"
        }
    assert store.get_run("r-nul").suite == "su\ufffdite"
    assert store.get_snapshot("r-nul") == {"note": "snap\ufffdshot"}
