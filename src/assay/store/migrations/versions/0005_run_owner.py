"""The process that runs a run, so `--resume` can claim a run whose process was killed.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-27

`runs.owner` holds the host, pid and process start time of the `assay run` that created or
resumed the run (`assay.store._owner.RunOwner`). A run left `running` by a killed process on
the same machine is then resumed without `--takeover`; a run stored before this revision has
no owner, and is taken over only when asked for, as before.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # batch: SQLite drops a column (downgrade) only by copying the table; adding one is ALTER.
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("owner", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("owner")
