"""Case tags and the indexes behind the API's paged, sorted and filtered case table.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24

`GET /api/runs/{id}/results` pages through up to 100,000 cases sorted by score, duration or
case id, or filtered by verdict or tag. Each index ends in `seq`, so the index alone gives
the page's order (ties in stored order) and the page is found without sorting the run.
Runs stored before this revision keep their tags in `case_results.data` only; their
`case_tags` rows are filled from it here.
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_FLUSH_ROWS = 5_000  # bounds memory while old tags are copied

_INDEXES = {
    "ix_case_results_run_id_score_seq": ["run_id", "score", "seq"],
    "ix_case_results_run_id_duration_ms_seq": ["run_id", "duration_ms", "seq"],
    "ix_case_results_run_id_verdict_seq": ["run_id", "verdict", "seq"],
}


def upgrade() -> None:
    for name, columns in _INDEXES.items():
        op.create_index(name, "case_results", columns)
    op.create_table(
        "case_tags",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("case_id", sa.Text(), nullable=False),
        sa.Column("tag", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_case_tags_run_id_runs", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", "tag", "case_id", name="pk_case_tags"),
    )
    _backfill()


def _backfill() -> None:
    """Fill `case_tags` from the tags older runs stored in their results' JSON."""
    conn = op.get_bind()
    cases = sa.table("case_results", sa.column("id"), sa.column("run_id"), sa.column("data"))
    tags = sa.table("case_tags", sa.column("run_id"), sa.column("case_id"), sa.column("tag"))
    rows: list[dict[str, Any]] = []
    stmt = sa.select(cases.c.run_id, cases.c.data).order_by(cases.c.id)
    for run_id, data in conn.execute(stmt, execution_options={"yield_per": 500}):
        case = json.loads(data)
        # A set: the key allows a tag once per case, and a hand-edited file may repeat one.
        for tag in sorted(set(case.get("tags") or [])):
            rows.append({"run_id": run_id, "case_id": case["case_id"], "tag": tag})
        if len(rows) >= _FLUSH_ROWS:
            conn.execute(sa.insert(tags), rows)
            rows.clear()
    if rows:
        conn.execute(sa.insert(tags), rows)


def downgrade() -> None:
    op.drop_table("case_tags")
    for name in _INDEXES:
        op.drop_index(name, table_name="case_results")
