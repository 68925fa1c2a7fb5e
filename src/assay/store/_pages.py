"""Paged, sorted and filtered reads of stored runs and case results, for the HTTP API.

A page is found in two steps: the ordered, filtered and offset list of row ids comes from an
index alone (each sort index of migration 0003 ends in `seq`, which breaks ties, and every
index holds the row id), then only that page's stored JSON is read. Deep pages of a 100,000-case run
thus skip index entries, never rows of JSON. Count and page share one read transaction, so
a run that is still writing gives a total that matches its page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import ColumnElement, Connection, Select, func, select

from assay.results import RunStatus, Verdict
from assay.store._tables import CASE_LEVEL, case_results, case_tags, grader_results, runs

__all__ = ["ResultFilter", "ResultPage", "ResultSort", "RunFacets", "RunFilter"]

ResultSort = Literal["seq", "case_id", "score", "duration_ms"]
"""What a page of case results is ordered by; `seq` is the order the results were stored."""


@dataclass(frozen=True, slots=True)
class RunFilter:
    """Which runs a listing holds (every field narrows it; None: any)."""

    suite: str | None = None
    target: str | None = None
    status: RunStatus | None = None
    since: str | None = None
    """`started_at` at or after this ISO 8601 text."""
    until: str | None = None
    """`started_at` before this ISO 8601 text."""
    passed: bool | None = None
    """The run verdict recorded when the run finished (a running run has none)."""


@dataclass(frozen=True, slots=True)
class ResultFilter:
    """Which case results of a run a page holds (every field narrows it; None: any)."""

    verdicts: tuple[Verdict, ...] | None = None
    """Case verdicts to keep."""
    tag: str | None = None
    """Only cases carrying this tag."""
    grader: str | None = None
    """Only cases with a (case-level) grader result of this name."""
    grader_verdicts: tuple[Verdict, ...] | None = None
    """Only cases with a grader result of one of these verdicts (of `grader`, when given)."""
    q: str | None = None
    """Only cases whose id contains this text, ignoring ASCII case."""


@dataclass(frozen=True, slots=True)
class ResultPage:
    """One page of a run's case results and how many match in all."""

    total: int
    items: list[str] = field(default_factory=list)
    """Each case result as its stored JSON text: valid `CaseResult` JSON, to be sent on
    without parsing it again."""


@dataclass(frozen=True, slots=True)
class RunFacets:
    """What a run's case results can be filtered by, with counts (for filter menus)."""

    verdicts: dict[str, int]
    """Cases per case verdict."""
    tags: dict[str, int]
    """Cases per tag, by tag."""
    graders: dict[str, dict[str, int]]
    """Per grader name, its case-level results per verdict."""


def run_conditions(where: RunFilter) -> list[ColumnElement[bool]]:
    """The WHERE terms of a run listing."""
    terms: list[ColumnElement[bool]] = []
    if where.suite is not None:
        terms.append(runs.c.suite == where.suite)
    if where.target is not None:
        terms.append(runs.c.target == where.target)
    if where.status is not None:
        terms.append(runs.c.status == where.status)
    if where.since is not None:
        terms.append(runs.c.started_at >= where.since)
    if where.until is not None:
        terms.append(runs.c.started_at < where.until)
    if where.passed is not None:
        terms.append(runs.c.passed == where.passed)
    return terms


def count_runs(conn: Connection, where: RunFilter) -> int:
    """How many runs match `where`."""
    stmt = select(func.count()).select_from(runs).where(*run_conditions(where))
    return int(conn.execute(stmt).scalar_one())


def _result_conditions(run_id: str, where: ResultFilter) -> list[ColumnElement[bool]]:
    cr = case_results.c
    terms: list[ColumnElement[bool]] = [cr.run_id == run_id]
    if where.verdicts is not None:
        terms.append(cr.verdict.in_(where.verdicts))
    if where.tag is not None:
        tagged = select(case_tags.c.case_id).where(
            case_tags.c.run_id == run_id, case_tags.c.tag == where.tag
        )
        terms.append(cr.case_id.in_(tagged))
    if where.grader is not None or where.grader_verdicts is not None:
        graded = select(grader_results.c.case_id).where(
            grader_results.c.run_id == run_id, grader_results.c.sample_index == CASE_LEVEL
        )
        if where.grader is not None:
            graded = graded.where(grader_results.c.name == where.grader)
        if where.grader_verdicts is not None:
            graded = graded.where(grader_results.c.verdict.in_(where.grader_verdicts))
        terms.append(cr.case_id.in_(graded))
    if where.q:
        terms.append(func.lower(cr.case_id).contains(where.q.lower(), autoescape=True))
    return terms


def _ordered(stmt: Select[Any], sort: ResultSort, descending: bool) -> Select[Any]:
    """`stmt` ordered by `sort`, ties in stored order; descending is exactly the reverse.

    A case without a score (an error) counts as the lowest score on every backend (SQLite's
    own NULL order, which its index follows; PostgreSQL is told).
    """
    seq = case_results.c.seq
    if sort == "seq":
        return stmt.order_by(seq.desc() if descending else seq.asc())
    key = case_results.c[sort]
    if sort == "case_id":  # unique within a run: no tie to break
        return stmt.order_by(key.desc() if descending else key.asc())
    if descending:
        return stmt.order_by(key.desc().nulls_last(), seq.desc())
    return stmt.order_by(key.asc().nulls_first(), seq.asc())


def page_results(
    conn: Connection,
    run_id: str,
    where: ResultFilter,
    *,
    sort: ResultSort,
    descending: bool,
    offset: int,
    limit: int,
) -> ResultPage:
    """One page of the case results of the (resolved) run `run_id`."""
    terms = _result_conditions(run_id, where)
    total = int(
        conn.execute(select(func.count()).select_from(case_results).where(*terms)).scalar_one()
    )
    if offset >= total:
        return ResultPage(total)
    # The row id, not `seq`: every index holds it, so the skipped entries are never rows.
    ordered = _ordered(select(case_results.c.id).where(*terms), sort, descending)
    ids: list[int] = list(conn.execute(ordered.offset(offset).limit(limit)).scalars())
    if not ids:
        return ResultPage(total)
    rows = conn.execute(
        select(case_results.c.id, case_results.c.data).where(case_results.c.id.in_(ids))
    ).all()
    data = {row_id: text for row_id, text in rows}
    return ResultPage(total, [data[row_id] for row_id in ids])


def case_result_json(conn: Connection, run_id: str, case_id: str) -> str | None:
    """The stored JSON of one case result of the (resolved) run, or None when absent."""
    stmt = select(case_results.c.data).where(
        case_results.c.run_id == run_id, case_results.c.case_id == case_id
    )
    found: str | None = conn.execute(stmt).scalar_one_or_none()
    return found


def run_facets(conn: Connection, run_id: str) -> RunFacets:
    """Counts of the (resolved) run's case verdicts, tags and grader verdicts."""
    verdicts = conn.execute(
        select(case_results.c.verdict, func.count())
        .where(case_results.c.run_id == run_id)
        .group_by(case_results.c.verdict)
        .order_by(case_results.c.verdict)
    ).all()
    tags = conn.execute(
        select(case_tags.c.tag, func.count())
        .where(case_tags.c.run_id == run_id)
        .group_by(case_tags.c.tag)
        .order_by(case_tags.c.tag)
    ).all()
    g = grader_results.c
    graders: dict[str, dict[str, int]] = {}
    for name, verdict, count in conn.execute(
        select(g.name, g.verdict, func.count())
        .where(g.run_id == run_id, g.sample_index == CASE_LEVEL)
        .group_by(g.name, g.verdict)
        .order_by(g.name, g.verdict)
    ):
        graders.setdefault(name, {})[verdict] = int(count)
    return RunFacets(
        verdicts={verdict: int(count) for verdict, count in verdicts},
        tags={tag: int(count) for tag, count in tags},
        graders=graders,
    )
