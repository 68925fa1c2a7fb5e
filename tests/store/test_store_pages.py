"""Paged, sorted and filtered reads (the API's queries) on SQLite and PostgreSQL alike."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, event, select, text

from assay.errors import UsageError
from assay.results import CaseResult, GraderResult, RunResult
from assay.store import (
    ConflictError,
    NotFoundError,
    ResultFilter,
    SQLiteStore,
    SQLStore,
    open_store,
)
from assay.store._tables import case_tags

MakeRun = Callable[..., RunResult]

SCORES = [0.5, None, 0.9, 0.5, 0.1, None, 0.7]


def _case(i: int, score: float | None) -> CaseResult:
    verdict = "error" if score is None else ("pass" if score >= 0.8 else "fail")
    return CaseResult.model_validate(
        {
            "case_id": f"Case-{i}",
            "score": score,
            "verdict": verdict,
            "threshold": 0.8,
            "duration_ms": float((i * 3) % 7),
            "tags": ["even"] * (i % 2 == 0) + ["all", "all"],
            "grader_results": [
                GraderResult(name="g", type="contains", score=score, verdict=verdict)
            ]
            if score is not None
            else [],
        }
    )


@pytest.fixture
def seeded(store: SQLStore, make_run: MakeRun) -> SQLStore:
    store.create_run(make_run("run-pages"), {})
    store.add_case_results("run-pages", [_case(i, s) for i, s in enumerate(SCORES)])
    return store


def _ids(store: SQLStore, **kwargs: object) -> list[str]:
    page = store.page_case_results("run-pages", **kwargs)  # type: ignore[arg-type]
    return [json.loads(item)["case_id"] for item in page.items]


def test_pages_in_stored_order_with_the_total(seeded: SQLStore) -> None:
    page = seeded.page_case_results("run-pages", offset=2, limit=3)
    assert page.total == 7
    assert [CaseResult.model_validate_json(i).case_id for i in page.items] == [
        "Case-2",
        "Case-3",
        "Case-4",
    ]
    assert seeded.page_case_results("run-pages", offset=7).items == []
    assert _ids(seeded, descending=True, limit=2) == ["Case-6", "Case-5"]


def test_sorting_puts_missing_scores_lowest_and_breaks_ties_in_stored_order(
    seeded: SQLStore,
) -> None:
    ascending = ["Case-1", "Case-5", "Case-4", "Case-0", "Case-3", "Case-6", "Case-2"]
    assert _ids(seeded, sort="score") == ascending
    assert _ids(seeded, sort="score", descending=True) == ascending[::-1]
    pages = [_ids(seeded, sort="score", offset=o, limit=2) for o in range(0, 7, 2)]
    assert [case for page in pages for case in page] == ascending
    durations = sorted(range(7), key=lambda i: ((i * 3) % 7, i))
    assert _ids(seeded, sort="duration_ms") == [f"Case-{i}" for i in durations]
    assert _ids(seeded, sort="case_id", descending=True) == [f"Case-{i}" for i in range(6, -1, -1)]


def test_filters(seeded: SQLStore) -> None:
    assert _ids(seeded, where=ResultFilter(verdicts=("error",))) == ["Case-1", "Case-5"]
    assert _ids(seeded, where=ResultFilter(tag="even")) == ["Case-0", "Case-2", "Case-4", "Case-6"]
    assert len(_ids(seeded, where=ResultFilter(tag="all"))) == 7
    assert _ids(seeded, where=ResultFilter(grader="g", grader_verdicts=("pass",))) == ["Case-2"]
    assert len(_ids(seeded, where=ResultFilter(grader="g"))) == 5
    assert _ids(seeded, where=ResultFilter(grader="nope")) == []
    assert _ids(seeded, where=ResultFilter(q="case-6")) == ["Case-6"]
    assert _ids(seeded, where=ResultFilter(q="%")) == []
    both = seeded.page_case_results(
        "run-pages", where=ResultFilter(tag="even", verdicts=("fail",)), sort="score"
    )
    assert both.total == 3
    assert [json.loads(i)["case_id"] for i in both.items] == ["Case-4", "Case-0", "Case-6"]


def test_one_case_facets_and_unknown_names(seeded: SQLStore) -> None:
    assert seeded.get_case_result("run-p", "Case-3") == _case(3, 0.5)
    with pytest.raises(NotFoundError, match="has no result for case 'nope'"):
        seeded.get_case_result("run-pages", "nope")
    with pytest.raises(NotFoundError, match="not found"):
        seeded.page_case_results("nope-0000")
    with pytest.raises(UsageError, match="limit >= 1"):
        seeded.page_case_results("run-pages", limit=0)
    facets = seeded.get_run_facets("run-pages")
    assert facets.verdicts == {"error": 2, "fail": 4, "pass": 1}
    assert facets.tags == {"all": 7, "even": 4}
    assert facets.graders == {"g": {"fail": 4, "pass": 1}}
    assert [json.loads(c)["case_id"] for c in seeded.iter_case_results_json("run-pages")] == [
        f"Case-{i}" for i in range(7)
    ]


def test_runs_count_and_offset(store: SQLStore, make_run: MakeRun) -> None:
    for day in range(1, 6):
        store.create_run(
            make_run(f"run-{day}", suite="a" if day % 2 else "b", started_at=f"2025-01-0{day}"), {}
        )
    assert store.count_runs() == 5
    assert store.count_runs(suite="a") == 3
    assert store.count_runs(since="2025-01-02", until="2025-01-04") == 2
    assert [r.id for r in store.list_runs(limit=2, offset=1)] == ["run-4", "run-3"]
    assert [r.id for r in store.list_runs(suite="a", limit=5, offset=2)] == ["run-1"]
    with pytest.raises(UsageError, match="offset must be at least 0"):
        store.list_runs(offset=-1)


def test_the_store_says_not_found_and_conflict_apart(seeded: SQLStore, make_run: MakeRun) -> None:
    with pytest.raises(ConflictError, match="already exists"):
        seeded.create_run(make_run("run-pages"), {})
    with pytest.raises(ConflictError, match="only a completed run"):
        seeded.pin_baseline("run-pages", pinned_at="2025-01-01")
    with pytest.raises(NotFoundError):
        seeded.unpin_baseline("support-bot")
    with pytest.raises(NotFoundError):
        seeded.get_run("zz")


def test_deleting_a_run_deletes_its_tags(seeded: SQLStore) -> None:
    seeded.delete_run("run-pages", force=True)
    with seeded.engine.connect() as conn:
        assert conn.execute(select(case_tags)).all() == []


def test_tags_of_runs_stored_before_revision_0003_are_backfilled(
    db_path: Path, make_run: MakeRun
) -> None:
    with open_store(db_path) as store:
        assert isinstance(store, SQLStore)
        store.create_run(make_run("old-run"), {})
        store.add_case_results("old-run", [_case(0, 0.5), _case(1, 0.9)])
    engine = create_engine(f"sqlite:///{db_path}")
    with engine.begin() as conn:  # as assay before 0003 left it
        conn.execute(text("DROP TABLE case_tags"))
        for index in ("score_seq", "duration_ms_seq", "verdict_seq"):
            conn.execute(text(f"DROP INDEX ix_case_results_run_id_{index}"))
        conn.execute(  # and before 0004
            text("DROP INDEX ix_grader_results_run_id_name_verdict_sample_index_case_id")
        )
        conn.execute(
            text(
                "CREATE INDEX ix_grader_results_run_id_name_verdict "
                "ON grader_results (run_id, name, verdict)"
            )
        )
        conn.execute(text("ALTER TABLE runs DROP COLUMN owner"))  # and before 0005
        conn.execute(text("DROP TABLE reviews"))  # and before 0006
        conn.execute(text("UPDATE alembic_version SET version_num = '0002'"))
    engine.dispose()
    with open_store(db_path) as store:
        assert isinstance(store, SQLStore)
        assert store.get_run_facets("old-run").tags == {"all": 2, "even": 1}
        page = store.page_case_results("old-run", where=ResultFilter(tag="even"))
        assert [json.loads(i)["case_id"] for i in page.items] == ["Case-0"]
    with engine.connect() as conn:  # 0004 replaced the grader index with its covering form
        indexes = {
            row[1] for row in conn.execute(text("PRAGMA index_list('grader_results')")).all()
        }
    engine.dispose()
    assert "ix_grader_results_run_id_name_verdict_sample_index_case_id" in indexes
    assert "ix_grader_results_run_id_name_verdict" not in indexes


def _i8_case(i: int) -> CaseResult:
    """A case of a varied run: tied and missing scores, tied durations, two graders (one
    twice in some cases), tags on some cases."""
    score = None if i % 7 == 3 else round((i * 37 % 11) / 10, 1)
    verdict = "error" if score is None else "pass" if score >= 0.8 else "fail"
    tone = ["pass", "fail", "borderline", "error"][i % 4]
    graders = [
        GraderResult(name="mentions", type="contains", score=score, verdict=verdict),
        GraderResult(name="tone", type="contains", score=None, verdict=tone),
    ]
    if i % 5 == 0:  # the same grader name twice in one case: the case counts once
        graders.append(GraderResult(name="tone", type="contains", score=None, verdict="fail"))
    return CaseResult.model_validate(
        {
            "case_id": f"c-{(i * 13) % 41:03d}",
            "score": score,
            "verdict": verdict,
            "threshold": 0.8,
            "duration_ms": float(i % 4),
            "tags": ["smoke"] * (i % 3 == 0) + [f"shard-{i % 2}"],
            "grader_results": graders,
        }
    )


def _i8_expected(
    cases: list[CaseResult], where: ResultFilter, sort: str, descending: bool
) -> list[str]:
    """The case ids a page walk must give, computed in Python from the cases themselves."""
    kept = []
    for seq, case in enumerate(cases):
        graded = [
            g
            for g in case.grader_results
            if (where.grader is None or g.name == where.grader)
            and (where.grader_verdicts is None or g.verdict in where.grader_verdicts)
        ]
        if (
            (where.verdicts is None or case.verdict in where.verdicts)
            and (where.tag is None or where.tag in case.tags)
            and ((where.grader is None and where.grader_verdicts is None) or graded)
            and (where.q is None or where.q.lower() in case.case_id.lower())
        ):
            kept.append((seq, case))

    def key(item: tuple[int, CaseResult]) -> tuple[object, ...]:
        seq, case = item
        if sort == "score":
            return (case.score is not None, case.score or 0.0, seq)
        if sort == "duration_ms":
            return (case.duration_ms, seq)
        return (case.case_id,) if sort == "case_id" else (seq,)

    kept.sort(key=key, reverse=descending)
    return [case.case_id for _, case in kept]


I8_FILTERS = [
    ResultFilter(),
    ResultFilter(verdicts=("fail",)),
    ResultFilter(verdicts=("fail", "error")),
    ResultFilter(tag="smoke"),
    ResultFilter(tag="none-such"),
    ResultFilter(grader="tone", grader_verdicts=("fail",)),
    ResultFilter(grader="tone", grader_verdicts=("borderline", "fail", "error")),
    ResultFilter(grader="tone"),
    ResultFilter(grader_verdicts=("error",)),
    ResultFilter(q="C-0"),
    ResultFilter(tag="shard-1", verdicts=("fail",), grader="tone", grader_verdicts=("fail",)),
    ResultFilter(tag="smoke", q="1"),
]


@pytest.mark.parametrize("sets_from", [0, 1_000])
def test_i8_every_page_of_every_filter_and_sort_matches_the_cases(
    store: SQLStore, make_run: MakeRun, monkeypatch: pytest.MonkeyPatch, sets_from: int
) -> None:
    """Pages past the middle are read from the other end, and deep pages through row-id
    sets on SQLite (`_SETS_FROM`, lowered here so a small run takes that path); filtered
    counts come from the tag and grader tables. Every page, total and order must still be
    exactly what the cases say."""
    monkeypatch.setattr("assay.store._pages._SETS_FROM", sets_from)
    cases = [_i8_case(i) for i in range(41)]
    store.create_run(make_run("run-i8"), {})
    store.add_case_results("run-i8", cases)
    for where in I8_FILTERS:
        for sort in ("seq", "score", "duration_ms", "case_id"):
            for descending in (False, True):
                expected = _i8_expected(cases, where, sort, descending)
                for limit in (3, 50):
                    pages = [
                        store.page_case_results(
                            "run-i8",
                            where=where,
                            sort=sort,
                            descending=descending,
                            offset=offset,
                            limit=limit,
                        )
                        for offset in range(0, len(expected) + limit, limit)
                    ]
                    assert {page.total for page in pages} == {len(expected)}, (where, sort)
                    walked = [json.loads(item)["case_id"] for page in pages for item in page.items]
                    assert walked == expected, (where, sort, descending, limit)


@pytest.mark.parametrize(
    ("where", "sort"),
    [
        (ResultFilter(verdicts=("fail",)), "score"),
        (ResultFilter(tag="smoke"), "seq"),
        (ResultFilter(grader="tone", grader_verdicts=("borderline", "fail", "error")), "seq"),
        (ResultFilter(grader="tone", grader_verdicts=("fail",)), "duration_ms"),
        (ResultFilter(q="c-01"), "seq"),
    ],
)
def test_i8_a_deep_filtered_page_on_sqlite_reads_only_its_own_rows(
    sqlite_store: SQLiteStore,
    make_run: MakeRun,
    monkeypatch: pytest.MonkeyPatch,
    where: ResultFilter,
    sort: str,
) -> None:
    """Finding a deep page walks covering indexes only: the sort's index and the filter's
    row-id set. Before, SQLite read every walked case row (several KB of JSON each) to test
    the filter, which made the last filtered page of a 100,000-case run take ~200 ms."""
    monkeypatch.setattr("assay.store._pages._SETS_FROM", 0)  # any offset counts as deep
    sqlite_store.create_run(make_run("run-i8"), {})
    sqlite_store.add_case_results("run-i8", [_i8_case(i) for i in range(41)])
    statements: list[tuple[str, Any]] = []

    def record(*args: object) -> None:
        statements.append((str(args[2]), args[3]))

    event.listen(sqlite_store.engine, "before_cursor_execute", record)
    try:
        page = sqlite_store.page_case_results(
            "run-i8",
            where=where,
            sort=sort,  # type: ignore[arg-type]
            offset=1,
            limit=2,
        )
    finally:
        event.remove(sqlite_store.engine, "before_cursor_execute", record)
    assert page.items
    walk = [(sql, params) for sql, params in statements if "ORDER BY" in sql]
    assert len(walk) == 1
    with sqlite_store.engine.connect() as conn:
        plan = [
            row[3] for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {walk[0][0]}", walk[0][1])
        ]
    reads = [step for step in plan if step.startswith(("SCAN", "SEARCH"))]
    assert reads, plan
    assert all("COVERING INDEX" in step for step in reads), plan


def test_i8_a_page_past_the_middle_is_walked_from_the_other_end(
    store: SQLStore, make_run: MakeRun
) -> None:
    """The last page of N results skips no index entries (it skipped N - page before)."""
    store.create_run(make_run("run-i8"), {})
    store.add_case_results("run-i8", [_i8_case(i) for i in range(41)])
    statements: list[tuple[str, Any]] = []

    def record(*args: object) -> None:
        statements.append((str(args[2]), args[3]))

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        last = store.page_case_results("run-i8", sort="score", offset=39, limit=3)
    finally:
        event.remove(store.engine, "before_cursor_execute", record)
    assert [json.loads(item)["case_id"] for item in last.items] == _i8_expected(
        [_i8_case(i) for i in range(41)], ResultFilter(), "score", False
    )[39:]
    (walk,) = [(sql, params) for sql, params in statements if "ORDER BY" in sql]
    assert "DESC" in walk[0]
    values = list(walk[1].values() if isinstance(walk[1], dict) else walk[1])
    assert values[-2:] == [2, 0]  # LIMIT 2 OFFSET 0 in reverse, not LIMIT 3 OFFSET 39
