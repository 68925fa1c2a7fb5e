"""The run store schema as SQLAlchemy Core tables, the one place that defines it.

Every store (SQLite today, PostgreSQL with the migration work) and the Alembic migrations
target this `metadata`, so it stays portable: generic SQLAlchemy types only, and explicit
constraint names through a naming convention so a migration can refer to them on any backend.

Timestamps are kept as the ISO-8601 strings of the run result (SPEC §8) rather than as
`DateTime`, so a stored run reads back exactly as it was written; the runner writes them in
UTC, which makes their text order chronological.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
)

__all__ = [
    "CASE_LEVEL",
    "baselines",
    "case_results",
    "case_tags",
    "expected_outcome_results",
    "grader_results",
    "metadata",
    "reviews",
    "runs",
    "samples",
]

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

CASE_LEVEL = -1
"""`sample_index` of a case's own grader and outcome rows (samples count from 0)."""

metadata = MetaData(naming_convention=NAMING_CONVENTION)
"""All tables of the run store; `metadata.create_all` and Alembic both start here."""

runs = Table(
    "runs",
    metadata,
    Column("id", Text, primary_key=True),
    Column("suite", Text, nullable=False),
    Column("target", Text, nullable=False),
    Column("status", String(16), nullable=False),
    Column("started_at", Text, nullable=False),
    Column("finished_at", Text, nullable=True),
    Column("config", JSON, nullable=False),
    Column("summary", JSON, nullable=False),
    # JSON text written by `encode_snapshot`, which embeds the suite document without re-parsing it.
    Column("snapshot", Text, nullable=False),
    Column("duration_ms", Float, nullable=False),
    # none_as_null: a run without token usage is SQL NULL, not the JSON text 'null'.
    Column("token_usage", JSON(none_as_null=True), nullable=True),
    Column("cost_usd", Float, nullable=True),
    Column("assay_version", Text, nullable=False),
    Column("scheduling", JSON(none_as_null=True), nullable=True),
    # The run verdict at finish (§1.5 and no critical regression), for `last_passing` lookups.
    Column("passed", Boolean, nullable=True),
    Column("regression", JSON(none_as_null=True), nullable=True),
    # The process running the run (`RunOwner.encode`), so a resume can tell a killed run from
    # a live one; NULL when finished and for runs stored before migration 0005.
    Column("owner", Text, nullable=True),
    Index(None, "suite", "started_at"),
    Index(None, "started_at"),
)
"""One row per run: the run result without its case results, plus the config snapshot."""

case_results = Table(
    "case_results",
    metadata,
    # BIGINT on servers; SQLite only autoincrements a column declared INTEGER PRIMARY KEY.
    Column(
        "id",
        BigInteger().with_variant(Integer, "sqlite"),
        primary_key=True,
        autoincrement=True,
    ),
    Column(
        "run_id",
        Text,
        ForeignKey("runs.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("seq", Integer, nullable=False),
    Column("case_id", Text, nullable=False),
    Column("verdict", String(16), nullable=False),
    Column("score", Float, nullable=True),
    Column("duration_ms", Float, nullable=False, server_default="0"),
    # The whole CaseResult as JSON text, written and read by pydantic's JSON code directly:
    # no per-row round trip through Python objects (the store's hottest path).
    Column("data", Text, nullable=False),
    UniqueConstraint("run_id", "case_id"),
    Index(None, "run_id", "seq", unique=True),
    # The API's case table pages through a run sorted by these, or filtered by verdict; with
    # `seq` last the index alone orders the page and breaks ties (migration 0003).
    Index(None, "run_id", "score", "seq"),
    Index(None, "run_id", "duration_ms", "seq"),
    Index(None, "run_id", "verdict", "seq"),
)
"""One row per graded case; `data` is the full `CaseResult`, `seq` its position in the run.

`case_id`, `verdict`, `score` and `duration_ms` are copied out of `data` so listings and
comparisons can filter, sort and diff without parsing JSON.
"""


def _case_key() -> tuple[Column[str], Column[str]]:
    return (
        Column("run_id", Text, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        Column("case_id", Text, nullable=False),
    )


samples = Table(
    "samples",
    metadata,
    *_case_key(),
    Column("sample_index", Integer, nullable=False),
    Column("verdict", String(16), nullable=False),
    Column("score", Float, nullable=True),
    Column("duration_ms", Float, nullable=False),
    PrimaryKeyConstraint("run_id", "case_id", "sample_index"),
)
"""One row per repeat of a case (`repeat: n`); the full sample stays in `case_results.data`."""

case_tags = Table(
    "case_tags",
    metadata,
    *_case_key(),
    Column("tag", Text, nullable=False),
    # Tag first: "the cases of this run tagged X" is one index range.
    PrimaryKeyConstraint("run_id", "tag", "case_id"),
)
"""One row per tag of a case, so results can be filtered by tag in SQL (migration 0003)."""

grader_results = Table(
    "grader_results",
    metadata,
    *_case_key(),
    # -1 for the case's own graders, else the sample index: part of the key, so never NULL.
    Column("sample_index", Integer, nullable=False),
    Column("position", Integer, nullable=False),
    Column("name", Text, nullable=False),
    Column("type", Text, nullable=False),
    Column("verdict", String(16), nullable=False),
    Column("score", Float, nullable=True),
    Column("weight", Float, nullable=False),
    Column("required", Boolean, nullable=False),
    Column("judge_model", Text, nullable=True),
    PrimaryKeyConstraint("run_id", "case_id", "sample_index", "position"),
    Index(None, "run_id", "name", "verdict", "sample_index", "case_id"),  # covering (0004)
)
"""One row per top-level grader result, so results can be filtered by grader and verdict in SQL.

Nested results (composite children, turns) and Details stay in `case_results.data` only."""

expected_outcome_results = Table(
    "expected_outcome_results",
    metadata,
    *_case_key(),
    Column("sample_index", Integer, nullable=False),
    Column("position", Integer, nullable=False),
    Column("outcome", Text, nullable=False),
    Column("passed", Boolean, nullable=False),
    Column("justification", Text, nullable=False),
    PrimaryKeyConstraint("run_id", "case_id", "sample_index", "position"),
)
"""One row per judged expected-outcome statement of a case (or of each of its samples)."""

baselines = Table(
    "baselines",
    metadata,
    Column("suite", Text, primary_key=True),
    # Deleting the pinned run unpins it rather than leaving a dangling baseline.
    Column("run_id", Text, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("pinned_at", Text, nullable=False),
)
"""The pinned baseline run of each suite (`assay baseline pin`)."""

reviews = Table(
    "reviews",
    metadata,
    *_case_key(),
    Column("verdict", String(8), nullable=False),
    Column("note", Text, nullable=False, server_default=""),
    Column("reviewer", Text, nullable=False, server_default=""),
    Column("reviewed_at", Text, nullable=False),
    PrimaryKeyConstraint("run_id", "case_id"),
)
"""A person's verdict on a case (`assay review`, `PUT .../review`; migration 0006): one per
case, replaced by a later review; deleting the run deletes its reviews."""
