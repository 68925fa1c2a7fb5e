"""Resuming a run `assay.evaluate` was given a target function and grader functions: the resume
plans them again from the same functions (never from the stored run) and completes the run."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import assay
from assay import EvalConfig
from assay.api import evaluate_async, resume_run
from assay.results import JSON
from assay.store import SQLiteStore
from tests.conftest import write

N = 20


async def slow_shout(case: dict[str, JSON]) -> str:
    await asyncio.sleep(0.01)  # slow enough that the run is cancelled with cases left
    return str(case["input"]).upper()


def shout(case: dict[str, JSON]) -> str:
    return str(case["input"]).upper()


def starts_loud(context: dict[str, JSON]) -> dict[str, JSON]:
    output = str(context["output"])
    return {"score": 1.0, "hits": ["all caps"]} if output.isupper() else {"score": 0.0}


def _interrupted_run(tmp_path: Path, head: str = "name: s\n") -> tuple[Path, Path, str]:
    """A suite file and a store holding a run of it cancelled after 3 of its N cases."""
    tests = "".join(f"  - {{id: c{i:02d}, input: q{i}}}\n" for i in range(N))
    suite = write(tmp_path / "s.eval.yaml", head + "tests:\n" + tests)
    db = tmp_path / "runs.db"

    async def cancelled() -> None:
        enough = asyncio.Event()
        seen: list[str] = []

        def on_case(result: assay.CaseResult) -> None:
            seen.append(result.case_id)
            if len(seen) >= 3:
                enough.set()

        config = EvalConfig(store=str(db), concurrency=1)
        task = asyncio.create_task(
            evaluate_async(
                suite, target=slow_shout, graders=[starts_loud], config=config, on_case=on_case
            )
        )
        await enough.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled())
    with SQLiteStore(db) as store:
        (run,) = store.list_runs()
        assert run.status == "interrupted"
        assert 3 <= len(list(store.iter_case_results(run.id))) < N
    return suite, db, run.id


def test_a_run_given_functions_resumes_with_the_same_functions(tmp_path: Path) -> None:
    # The suite file has no graders of its own: those given in Python make it valid.
    suite, db, run_id = _interrupted_run(tmp_path)
    with SQLiteStore(db) as store:
        done = asyncio.run(
            resume_run(store, run_id, suite=suite, target=slow_shout, graders=[starts_loud])
        )
        results = list(store.iter_case_results(run_id))
    assert (done.id, done.status) == (run_id, "completed")
    assert sorted(r.case_id for r in results) == [f"c{i:02d}" for i in range(N)]
    assert {(r.verdict, r.score) for r in results} == {("pass", 1.0)}
    graded = {g.name for r in results for g in r.grader_results}
    assert graded == {"starts_loud"}
    assert done.summary.total == done.summary.passed_count == N


def test_a_resume_without_the_functions_the_run_was_given_is_refused(tmp_path: Path) -> None:
    head = "name: s\nassertions: [{type: contains, value: Q}]\n"
    suite, db, run_id = _interrupted_run(tmp_path, head)

    def other(context: dict[str, JSON]) -> float:
        return 1.0

    with SQLiteStore(db) as store:
        with pytest.raises(assay.UsageError) as refused:
            asyncio.run(resume_run(store, run_id, suite=suite, target=slow_shout))
        assert str(refused.value) == (
            f"cannot resume run '{run_id}': the suite (s.eval.yaml) differs from the one the "
            "run started with (at assertions). The run was also given graders in Python "
            f"({__name__}:starts_loud): resume it from Python with the same ones, "
            "assay.api.resume_run(store, run_id, suite=..., graders=[...]). A resumed run only "
            "runs the suite as it is on disk: restore it as it was, or start a new run "
            "(assay run s.eval.yaml)"
        )
        with pytest.raises(assay.UsageError, match=r"differs .*at assertions\[1\]\.function"):
            asyncio.run(resume_run(store, run_id, suite=suite, target=slow_shout, graders=[other]))
        with pytest.raises(
            assay.UsageError, match=r"the suite .* differs .*\(at target\.function\)"
        ):
            asyncio.run(resume_run(store, run_id, suite=suite, target=shout, graders=[starts_loud]))
        assert store.get_run(run_id).status == "interrupted"  # nothing claimed it
