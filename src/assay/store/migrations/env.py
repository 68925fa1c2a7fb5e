"""Alembic environment of the run store: migrations run on the connection `migrate` passes.

There is no `alembic.ini`: assay applies migrations itself when a store is opened
(`assay.store._migrate`), on the store's own engine, SQLite or PostgreSQL alike.
"""

from __future__ import annotations

from alembic import context

from assay.store._tables import metadata

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters tables by copying
)
with context.begin_transaction():
    context.run_migrations()
