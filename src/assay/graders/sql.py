"""The is-sql grader: the output is SQL that a real parser accepts, in a chosen dialect.

Parsed with sqlglot (pure Python, about 30 dialects). Each statement must parse and be a
statement — a query, DML, DDL or a utility command — so prose such as "hello world", which a
lenient expression parser would read as a column alias, is not SQL. With `allowed_tables` /
`allowed_columns` every table and column a statement touches must match one of the patterns
`{operation}::{database}::{table}` / `{operation}::{table}::{column}` (RE2, whole-string), where the
operation is select, insert, update or delete.
"""

from __future__ import annotations

import functools
from typing import Any, Literal, Self

from pydantic import Field, model_validator

from assay.graders._base import Grader, GradingContext, Measurement
from assay.graders._details import detail, truncate
from assay.graders.text import compile_re2

__all__ = ["IsSql", "SqlDialect"]

SqlDialect = Literal[
    "mysql", "postgres", "sqlite", "bigquery", "snowflake", "tsql", "redshift", "hive",
    "athena", "spark", "duckdb", "oracle", "trino", "presto", "clickhouse", "databricks",
    "teradata",
]  # fmt: skip
_OPERATIONS = {"Select": "select", "Insert": "insert", "Update": "update", "Delete": "delete"}


@functools.cache
def _statement_types() -> tuple[type[Any], ...]:
    from sqlglot import exp

    return (
        exp.Query, exp.DML, exp.DDL, exp.Drop, exp.Alter, exp.Show, exp.Command, exp.Use,
        exp.Set, exp.Describe, exp.Transaction, exp.Commit, exp.Rollback, exp.TruncateTable,
        exp.Grant, exp.Pragma,
    )  # fmt: skip


def _touches(statement: Any) -> tuple[list[str], list[str]]:
    """The statement's table uses (`op::database::table`, database `null` when unnamed) and
    column uses (`op::table::column`), in node-sql-parser's notation that promptfoo uses."""
    from sqlglot import exp

    operation = _OPERATIONS.get(type(statement).__name__, "select")
    found = list(statement.find_all(exp.Table))
    names = sorted({t.name for t in found})
    tables = sorted({f"{operation}::{t.db or 'null'}::{t.name}" for t in found})
    columns = [
        f"{operation}::{c.table or (names[0] if len(names) == 1 else 'null')}::{c.name}"
        for c in statement.find_all(exp.Column)
    ]
    if any(True for _ in statement.find_all(exp.Star)):
        columns += [f"{operation}::{t}::(.*)" for t in names]
    return tables, list(dict.fromkeys(columns))


class IsSql(Grader):
    """The output is one or more valid SQL statements (score 1 or 0)."""

    @classmethod
    def warm_up(cls) -> None:
        """Import sqlglot and its dialects (a tenth of a second)."""
        _statement_types()

    type: Literal["is-sql"]
    dialect: SqlDialect = "mysql"
    """The SQL dialect the statements must parse in (promptfoo's default is MySQL)."""
    allowed_tables: list[str] | None = None
    """If set, RE2 patterns of `operation::database::table` every table use must match
    (`database` is `null` when the statement names none)."""
    allowed_columns: list[str] | None = None
    """If set, RE2 patterns of `operation::table::column` every column use must match
    (`table` is `null` when a column names no table and the statement reads several; `SELECT *`
    is the column `(.*)`)."""
    strip_code_fence: bool = Field(default=False)
    """Read the SQL from the first fenced code block when the output has one (contains-sql)."""

    @model_validator(mode="after")
    def _patterns(self) -> Self:
        for pattern in [*(self.allowed_tables or []), *(self.allowed_columns or [])]:
            compile_re2(pattern)
        return self

    async def measure(self, ctx: GradingContext) -> Measurement:
        from sqlglot import parse
        from sqlglot.errors import ErrorLevel, ParseError

        text = _fenced(ctx.output) if self.strip_code_fence else ctx.output
        try:
            statements = [
                s for s in parse(text, read=self.dialect, error_level=ErrorLevel.RAISE) if s
            ]
        except ParseError as exc:
            return self._fail(ctx, f"not valid {self.dialect} SQL: {str(exc).splitlines()[0]}")
        if not statements:
            return self._fail(ctx, "the output is empty, not SQL")
        for statement in statements:
            if not isinstance(statement, _statement_types()) or (
                type(statement).__name__ == "Select" and not statement.expressions
            ):
                return self._fail(ctx, f"'{truncate(statement.sql(), 60)}' is not a SQL statement")
        denied = self._denied(statements)
        if denied:
            return self._fail(ctx, f"not allowed: {', '.join(denied[:5])}")
        return Measurement(
            score=1.0,
            hits=[f"{len(statements)} valid {self.dialect} statement(s)"],
            details=[detail("is-sql", True, expected=f"{self.dialect} SQL", actual=ctx.output)],
        )

    def _denied(self, statements: list[Any]) -> list[str]:
        denied: list[str] = []
        for statement in statements:
            tables, columns = _touches(statement)
            for listed, uses in ((self.allowed_tables, tables), (self.allowed_columns, columns)):
                if listed is not None:
                    patterns = [compile_re2(p) for p in listed]
                    denied += [u for u in uses if not any(p.find(u, full=True) for p in patterns)]
        return list(dict.fromkeys(denied))

    def _fail(self, ctx: GradingContext, why: str) -> Measurement:
        return Measurement(
            score=0.0,
            misses=[why],
            details=[
                detail(
                    "is-sql", False, expected=f"{self.dialect} SQL", actual=ctx.output, message=why
                )
            ],
        )


def _fenced(text: str) -> str:
    """The first ``` fenced block's body (any language tag), or the text itself."""
    start = text.find("```")
    if start == -1:
        return text
    body_start = text.find("\n", start)
    end = text.find("```", body_start + 1) if body_start != -1 else -1
    return text[body_start + 1 : end] if end != -1 else text
