"""Queryable result tables (samples, grader results, expected outcomes), baselines, run verdicts.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23

Runs stored before this revision keep their results in `case_results.data` only; their rows in
the new tables are filled from it here, so filters by grader see old runs too.
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_CASE_SAMPLE = -1
_FLUSH_ROWS = 5_000  # bounds memory while old results are copied


def _case_key() -> list[sa.Column[str]]:
    return [
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("case_id", sa.Text(), nullable=False),
    ]


def _run_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["run_id"], ["runs.id"], name=f"fk_{table}_run_id_runs", ondelete="CASCADE"
    )


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("passed", sa.Boolean(), nullable=True))
        batch.add_column(sa.Column("regression", sa.JSON(none_as_null=True), nullable=True))
    op.create_index("ix_runs_started_at", "runs", ["started_at"])
    with op.batch_alter_table("case_results") as batch:
        batch.add_column(sa.Column("duration_ms", sa.Float(), nullable=False, server_default="0"))
    op.create_table(
        "samples",
        *_case_key(),
        sa.Column("sample_index", sa.Integer(), nullable=False),
        sa.Column("verdict", sa.String(length=16), nullable=False),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column("duration_ms", sa.Float(), nullable=False),
        _run_fk("samples"),
        sa.PrimaryKeyConstraint("run_id", "case_id", "sample_index", name="pk_samples"),
    )
    op.create_table(
        "grader_results",
        *_case_key(),
        sa.Column("sample_index", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("verdict", sa.String(length=16), nullable=False),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column("weight", sa.Float(), nullable=False),
        sa.Column("required", sa.Boolean(), nullable=False),
        sa.Column("judge_model", sa.Text(), nullable=True),
        _run_fk("grader_results"),
        sa.PrimaryKeyConstraint(
            "run_id", "case_id", "sample_index", "position", name="pk_grader_results"
        ),
    )
    op.create_index(
        "ix_grader_results_run_id_name_verdict", "grader_results", ["run_id", "name", "verdict"]
    )
    op.create_table(
        "expected_outcome_results",
        *_case_key(),
        sa.Column("sample_index", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.Text(), nullable=False),
        sa.Column("passed", sa.Boolean(), nullable=False),
        sa.Column("justification", sa.Text(), nullable=False),
        _run_fk("expected_outcome_results"),
        sa.PrimaryKeyConstraint(
            "run_id", "case_id", "sample_index", "position", name="pk_expected_outcome_results"
        ),
    )
    op.create_table(
        "baselines",
        sa.Column("suite", sa.Text(), nullable=False),
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("pinned_at", sa.Text(), nullable=False),
        _run_fk("baselines"),
        sa.PrimaryKeyConstraint("suite", name="pk_baselines"),
    )
    _backfill()


def _backfill() -> None:
    """Fill the new tables and `runs.passed` from what older runs stored as JSON."""
    conn = op.get_bind()
    runs = sa.table(
        "runs",
        sa.column("id"),
        sa.column("status"),
        sa.column("summary", sa.JSON()),
        sa.column("passed"),
    )
    for run_id, status, summary in conn.execute(
        sa.select(runs.c.id, runs.c.status, runs.c.summary)
    ):
        if status != "running":
            passed = bool((summary or {}).get("passed", False))
            conn.execute(sa.update(runs).where(runs.c.id == run_id).values(passed=passed))
    cases = sa.table(
        "case_results",
        sa.column("id"),
        sa.column("run_id"),
        sa.column("seq"),
        sa.column("data"),
        sa.column("duration_ms"),
    )
    rows: dict[str, list[dict[str, Any]]] = {
        "samples": [],
        "grader_results": [],
        "expected_outcome_results": [],
    }
    durations: list[dict[str, Any]] = []
    stmt = sa.select(cases.c.id, cases.c.run_id, cases.c.data).order_by(cases.c.id)
    for row_id, run_id, data in conn.execute(stmt, execution_options={"yield_per": 500}):
        case = json.loads(data)
        durations.append({"row_id": row_id, "duration_ms": case.get("duration_ms", 0.0)})
        _case_rows(run_id, case, rows)
        if len(durations) + sum(len(table_rows) for table_rows in rows.values()) >= _FLUSH_ROWS:
            _flush(conn, rows, durations)
    _flush(conn, rows, durations)


def _flush(
    conn: sa.Connection, rows: dict[str, list[dict[str, Any]]], durations: list[dict[str, Any]]
) -> None:
    if durations:
        cases = sa.table("case_results", sa.column("id"), sa.column("duration_ms"))
        conn.execute(
            sa.update(cases)
            .where(cases.c.id == sa.bindparam("row_id"))
            .values(duration_ms=sa.bindparam("duration_ms")),
            durations,
        )
        durations.clear()
    for name, table_rows in rows.items():
        if table_rows:
            table = sa.table(name, *(sa.column(key) for key in table_rows[0]))
            conn.execute(sa.insert(table), table_rows)
            table_rows.clear()


def _case_rows(run_id: str, case: dict[str, Any], out: dict[str, list[dict[str, Any]]]) -> None:
    case_id = case["case_id"]
    parts: list[tuple[int, dict[str, Any]]] = [(_CASE_SAMPLE, case)]
    for sample in case.get("samples") or []:
        out["samples"].append(
            {
                "run_id": run_id,
                "case_id": case_id,
                "sample_index": sample["index"],
                "verdict": sample["verdict"],
                "score": sample.get("score"),
                "duration_ms": sample.get("duration_ms", 0.0),
            }
        )
        parts.append((sample["index"], sample))
    for index, part in parts:
        for position, grader in enumerate(part.get("grader_results") or []):
            out["grader_results"].append(
                {
                    "run_id": run_id,
                    "case_id": case_id,
                    "sample_index": index,
                    "position": position,
                    "name": grader["name"],
                    "type": grader["type"],
                    "verdict": grader["verdict"],
                    "score": grader.get("score"),
                    "weight": grader.get("weight", 1.0),
                    "required": grader.get("required", False),
                    "judge_model": grader.get("judge_model"),
                }
            )
        for position, outcome in enumerate(part.get("expected_outcome_results") or []):
            out["expected_outcome_results"].append(
                {
                    "run_id": run_id,
                    "case_id": case_id,
                    "sample_index": index,
                    "position": position,
                    "outcome": outcome["outcome"],
                    "passed": outcome["passed"],
                    "justification": outcome.get("justification", ""),
                }
            )


def downgrade() -> None:
    op.drop_table("baselines")
    op.drop_table("expected_outcome_results")
    op.drop_table("grader_results")
    op.drop_table("samples")
    op.drop_index("ix_runs_started_at", table_name="runs")
    with op.batch_alter_table("case_results") as batch:
        batch.drop_column("duration_ms")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("regression")
        batch.drop_column("passed")
