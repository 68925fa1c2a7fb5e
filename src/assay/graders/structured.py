"""Structured-output graders: is-json (SPEC §4). json-schema and field-accuracy join later."""

from __future__ import annotations

import json
from typing import Literal

from assay.graders._base import Grader, GradingContext, Measurement
from assay.graders._details import detail

__all__ = ["IsJson"]


def _reject_constant(name: str) -> None:
    """Python's json reads NaN and Infinity; JSON (RFC 8259) has no such literals."""
    raise ValueError(f"{name} is not a JSON value")


class IsJson(Grader):
    """The output parses as JSON (score 1 or 0; the Detail says where parsing failed)."""

    type: Literal["is-json"]

    async def measure(self, ctx: GradingContext) -> Measurement:
        try:
            json.loads(ctx.output, parse_constant=_reject_constant)
        except json.JSONDecodeError as exc:
            where = f"line {exc.lineno} column {exc.colno}: {exc.msg}"
            return self._invalid(ctx, where)
        except ValueError as exc:
            return self._invalid(ctx, str(exc))
        return Measurement(
            score=1.0,
            hits=["output is valid JSON"],
            details=[detail("is-json", True, expected="valid JSON", actual=ctx.output)],
        )

    @staticmethod
    def _invalid(ctx: GradingContext, where: str) -> Measurement:
        return Measurement(
            score=0.0,
            misses=[f"output is not valid JSON ({where})"],
            details=[
                detail("is-json", False, expected="valid JSON", actual=ctx.output, message=where)
            ],
        )
