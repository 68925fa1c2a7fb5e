"""Human reviews of case results (issue 28).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-27

`reviews` holds a person's verdict (`pass`/`fail`), note, reviewer and time per case of a run;
the machine verdict stays in `case_results`. Deleting a run deletes its reviews.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "reviews",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("case_id", sa.Text(), nullable=False),
        sa.Column("verdict", sa.String(8), nullable=False),
        sa.Column("note", sa.Text(), nullable=False, server_default=""),
        sa.Column("reviewer", sa.Text(), nullable=False, server_default=""),
        sa.Column("reviewed_at", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.id"],
            name=op.f("fk_reviews_run_id_runs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("run_id", "case_id", name=op.f("pk_reviews")),
    )


def downgrade() -> None:
    op.drop_table("reviews")
