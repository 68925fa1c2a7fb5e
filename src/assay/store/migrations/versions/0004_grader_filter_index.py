"""A covering index for the case table's grader filter.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23

`GET /api/runs/{id}/results?grader=G&grader_verdict=...` selects the cases whose case-level
result of grader G has one of the verdicts. With `sample_index` and `case_id` in the index the
selection is read from the index alone instead of one table row per grader result: on a
100,000-case run the selection itself went from 48 to 24 ms, a "not passed: G" page from 194 to
159 ms and the run's facets from 91 to 37 ms (docs/benchmarks.md). It replaces the narrower
`(run_id, name, verdict)` index, so each stored grader result still updates one index.
"""

from __future__ import annotations

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_OLD = ("ix_grader_results_run_id_name_verdict", ["run_id", "name", "verdict"])
_NEW = (
    "ix_grader_results_run_id_name_verdict_sample_index_case_id",
    ["run_id", "name", "verdict", "sample_index", "case_id"],
)


def upgrade() -> None:
    op.create_index(_NEW[0], "grader_results", _NEW[1])
    op.drop_index(_OLD[0], table_name="grader_results")


def downgrade() -> None:
    op.create_index(_OLD[0], "grader_results", _OLD[1])
    op.drop_index(_NEW[0], table_name="grader_results")
