"""Structured-output graders: is-json, json-schema and field-accuracy (SPEC §4).

All three parse the output with the same strict JSON reader (RFC 8259: no `NaN`, no
`Infinity`), so an output is JSON for one of them exactly when it is JSON for the others.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Annotated, Literal, Self

from pydantic import Field, field_validator, model_validator

from assay._strict_model import StrictModel
from assay.errors import GraderError
from assay.graders._base import Grader, GradingContext, Measurement, TestFacts
from assay.graders._details import detail, truncate
from assay.graders._json_schema import check_schema, schema_violations
from assay.graders.text import _same_json
from assay.results import JSON, Detail

if TYPE_CHECKING:
    from jsonpath_rfc9535 import JSONPathQuery

__all__ = ["FieldAccuracy", "FieldSpec", "IsJson", "JsonSchema", "parse_json"]

_MESSAGE_LIMIT = 200
"""Validator messages quote the failing instance, which may be a whole 1 MB output."""


def _reject_constant(name: str) -> None:
    """Python's json reads NaN and Infinity; JSON (RFC 8259) has no such literals."""
    raise ValueError(f"{name} is not a JSON value")


_STRICT_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
"""Built once: `json.loads` with any option builds a new decoder on every call."""


_VALUE_STARTS = frozenset('{["-0123456789tfnNI')
"""The characters a JSON value (or Python's NaN / Infinity, refused after parsing) starts with."""


def parse_json(text: str) -> tuple[JSON, str | None]:
    """The text as strict JSON and None, or None and where parsing failed.

    Text that cannot start a value (most outputs checked with a negated `is-json`) gets the
    decoder's own "Expecting value" message without raising and catching its exception."""
    start = len(text) - len(text.lstrip(" \t\n\r"))  # JSON's whitespace
    if start == len(text) or text[start] not in _VALUE_STARTS:
        line = text.count("\n", 0, start) + 1
        column = start - text.rfind("\n", 0, start)
        return None, f"line {line} column {column}: Expecting value"
    try:
        return _STRICT_DECODER.decode(text), None
    except json.JSONDecodeError as exc:
        return None, f"line {exc.lineno} column {exc.colno}: {exc.msg}"
    except ValueError as exc:
        return None, str(exc)


class IsJson(Grader):
    """The output parses as JSON (score 1 or 0; the Detail says where parsing failed)."""

    type: Literal["is-json"]

    async def measure(self, ctx: GradingContext) -> Measurement:
        _, where = parse_json(ctx.output)
        if where is not None:
            return self._invalid(ctx, where)
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


class JsonSchema(Grader):
    """The output is JSON valid against a JSON Schema (draft 2020-12); score 1 or 0."""

    type: Literal["json-schema"]
    schema_: Annotated[dict[str, JSON], Field(alias="schema")]
    """The JSON Schema (draft 2020-12) the output must satisfy; checked when the suite loads."""

    @field_validator("schema_")
    @classmethod
    def _valid_schema(cls, schema: dict[str, JSON]) -> dict[str, JSON]:
        check_schema(schema)
        return schema

    async def measure(self, ctx: GradingContext) -> Measurement:
        parsed, where = parse_json(ctx.output)
        if where is not None:
            return Measurement(
                score=0.0,
                misses=[f"output is not JSON ({where}), so it cannot match the schema"],
                details=[
                    detail(
                        "json_schema",
                        False,
                        expected="JSON matching the schema",
                        actual=ctx.output,
                        message=f"output is not JSON ({where})",
                    )
                ],
            )
        from referencing.exceptions import Unresolvable

        try:
            violations = schema_violations(parsed, self.schema_)
        except Unresolvable as exc:
            raise GraderError(
                f"the schema has a $ref that cannot be resolved ({exc}); remote schemas are never "
                "fetched: put referenced schemas under `$defs` and use '#/$defs/<name>'"
            ) from None
        if not violations:
            return Measurement(
                score=1.0,
                hits=["output matches the schema"],
                details=[
                    detail(
                        "json_schema", True, expected="JSON matching the schema", actual=ctx.output
                    )
                ],
            )
        path, reason = violations[0]
        more = f" (+{len(violations) - 1} more)" if len(violations) > 1 else ""
        return Measurement(
            score=0.0,
            misses=[f"output does not match the schema: {truncate(f'{path}: {reason}', 60)}{more}"],
            reasoning=f"{len(violations)} schema violation{'s' if len(violations) > 1 else ''}",
            details=[
                detail(f"json_schema.{p}", False, message=truncate(m, _MESSAGE_LIMIT))
                for p, m in violations
            ],
        )


# --- field-accuracy -----------------------------------------------------------------------------


@functools.lru_cache(maxsize=512)
def _query(path: str) -> JSONPathQuery:
    import jsonpath_rfc9535

    return jsonpath_rfc9535.compile(path)


class _Missing:
    """Marks a path that selects nothing (JSON `null` is a value, so None cannot mark it)."""


_MISSING = _Missing()


@functools.lru_cache(maxsize=512)
def _keys(path: str) -> tuple[str | int, ...] | None:
    """The names and indexes of a singular path (`$.a[0].b`), or None for one that may select
    several nodes. Walking them directly costs a tenth of running the query engine."""
    from jsonpath_rfc9535.selectors import IndexSelector, NameSelector

    query = _query(path)
    if not query.singular_query():
        return None
    keys: list[str | int] = []
    for segment in query.segments:
        (selector,) = segment.selectors  # a singular query has one selector per segment
        if isinstance(selector, NameSelector):
            keys.append(selector.name)
        elif isinstance(selector, IndexSelector):
            keys.append(selector.index)
        else:
            return None
    return tuple(keys)


def _select(path: str, document: JSON) -> JSON | _Missing:
    """The value at `path`: one node's value, the list of values of several, or _MISSING."""
    keys = _keys(path)
    if keys is not None:
        node = document
        for key in keys:
            if isinstance(key, str):
                if not isinstance(node, dict) or key not in node:
                    return _MISSING
            elif not isinstance(node, list) or not -len(node) <= key < len(node):
                return _MISSING
            node = node[key]
        return node
    values = _query(path).find(document).values()
    if not values:
        return _MISSING
    return values[0] if len(values) == 1 else values


def _plain(value: JSON) -> JSON:
    """Python dates (from API callers, or YAML's unquoted dates) become their ISO 8601 text."""
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _number(value: JSON) -> float | None:
    """A finite number, from a JSON number or a numeric string ("19.99"); None otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (ValueError, OverflowError):  # "abc"; an integer beyond the float range
        return None
    return number if math.isfinite(number) else None


def _instant(value: JSON, formats: Sequence[str]) -> date | None:
    """A date or datetime read with the first format that fits, then as ISO 8601; else None."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    for fmt in formats:
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    for iso in (date.fromisoformat, datetime.fromisoformat):  # a date only, else a date and time
        try:
            return iso(text)
        except ValueError:
            continue
    return None


_SAMPLE_INSTANT = datetime(2001, 2, 3, 4, 5, 6, 789, tzinfo=UTC)


class FieldSpec(StrictModel):
    """One field of `field-accuracy`: where it is, how to compare it, and what it should be."""

    path: str
    """RFC 9535 JSONPath of the field, e.g. `$.total` or `$.items[0].sku`."""
    match: Literal["exact", "numeric_tolerance", "date"] = "exact"
    """`exact` (JSON equality), `numeric_tolerance` (numbers within `tolerance`) or `date`
    (the same date or instant, whatever the notation)."""
    tolerance: Annotated[float, Field(ge=0.0)] = 0.01
    """numeric_tolerance only: the allowed difference; a fraction of the expected value when
    `relative` is true (0.05 = ±5%)."""
    relative: bool = False
    """numeric_tolerance only: read `tolerance` as a fraction of the expected value."""
    formats: Annotated[list[str], Field(min_length=1)] | None = None
    """date only: strptime formats tried in order on both sides (ISO 8601 is always tried last),
    e.g. `["%d/%m/%Y"]`."""
    expected: JSON = None
    """The expected value; when omitted, the same path in the test's JSON `expected_output`."""
    weight: Annotated[float, Field(ge=0.0)] = 1.0
    """Weight in `weighted_average`; 0 reports the field without scoring it."""

    @field_validator("path")
    @classmethod
    def _valid_path(cls, path: str) -> str:
        from jsonpath_rfc9535 import JSONPathError

        try:
            _query(path)
        except JSONPathError as exc:
            raise ValueError(
                f"invalid JSONPath '{path}': {exc}; write e.g. '$.total' or '$.items[0].price'"
            ) from None
        return path

    @field_validator("expected", mode="before")
    @classmethod
    def _dates_as_text(cls, value: JSON) -> JSON:
        return _plain(value)

    @field_validator("formats")
    @classmethod
    def _valid_formats(cls, formats: list[str] | None) -> list[str] | None:
        for fmt in formats or ():
            if "%" not in fmt:
                raise ValueError(
                    f"date format {fmt!r} has no strptime directive; write e.g. '%Y-%m-%d'"
                )
            try:  # a format that cannot read back what it writes is misspelt
                datetime.strptime(_SAMPLE_INSTANT.strftime(fmt), fmt)
            except ValueError as exc:
                raise ValueError(f"date format {fmt!r} is not a strptime format: {exc}") from None
        return formats

    @model_validator(mode="after")
    def _options_fit_the_match(self) -> Self:
        given = self.model_fields_set
        for option, kind in (
            ("tolerance", "numeric_tolerance"),
            ("relative", "numeric_tolerance"),
            ("formats", "date"),
        ):
            if option in given and self.match != kind:
                raise ValueError(
                    f"`{option}` applies only to `match: {kind}` (field '{self.path}' uses "
                    f"`match: {self.match}`)"
                )
        if self.relative and self.tolerance > 1.0:
            raise ValueError(
                f"relative tolerance {self.tolerance:g} is not a fraction; write 0.05 for ±5%"
            )
        if "expected" in given:
            problem = self.expected_problem(self.expected)
            if problem:
                raise ValueError(f"field '{self.path}': `expected` {problem}")
        return self

    def expected_problem(self, value: JSON) -> str | None:
        """Why `value` cannot be this field's expected value, or None."""
        if self.match != "exact" and isinstance(value, list):
            if not value:
                return "is an empty list"
            return next(filter(None, map(self.expected_problem, value)), None)
        if self.match == "numeric_tolerance" and _number(value) is None:
            return f"{truncate(value, 40)} is not a number"
        if self.match == "date" and _instant(value, self.formats or ()) is None:
            return f"{truncate(value, 40)} is not a date in the given formats or ISO 8601"
        return None

    def compare(self, expected: JSON, actual: JSON) -> str | None:
        """Why `actual` does not match `expected`, or None when it does."""
        if self.match == "exact":
            return None if _same_json(expected, actual) else "differs from the expected value"
        if isinstance(expected, list) or isinstance(actual, list):
            # a list value, or a path selecting several nodes: compared item by item
            want = expected if isinstance(expected, list) else [expected]
            got = actual if isinstance(actual, list) else [actual]
            if len(want) != len(got):
                return f"has {len(got)} value{'s' * (len(got) != 1)}, expected {len(want)}"
            for i, (e, a) in enumerate(zip(want, got, strict=True)):
                reason = self.compare(e, a)
                if reason:
                    return f"item {i} {reason}"
            return None
        if self.match == "numeric_tolerance":
            return self._numeric(expected, actual)
        return self._date(expected, actual)

    def _numeric(self, expected: JSON, actual: JSON) -> str | None:
        want, got = _number(expected), _number(actual)
        if want is None:
            raise GraderError(f"field '{self.path}': expected value is not a number")
        if got is None:
            return "is not a number"
        off = abs(got - want)
        bound = self.tolerance * abs(want) if self.relative else self.tolerance
        if off <= bound or math.isclose(off, bound, rel_tol=1e-9):
            return None
        if self.relative and want == 0:
            return f"is off by {off:g} from 0 (a relative tolerance allows no difference from 0)"
        if self.relative:
            return f"is off by {off / abs(want):.1%} (tolerance ±{self.tolerance:.1%})"
        return f"is off by {off:g} (tolerance ±{self.tolerance:g})"

    def _date(self, expected: JSON, actual: JSON) -> str | None:
        want, got = _instant(expected, self.formats or ()), _instant(actual, self.formats or ())
        if want is None:
            raise GraderError(f"field '{self.path}': expected value is not a date")
        if got is None:
            return "is not a date in the given formats or ISO 8601"
        if not isinstance(want, datetime) or not isinstance(got, datetime):
            # a date without a time on either side: only the calendar date is compared
            want_day = want.date() if isinstance(want, datetime) else want
            got_day = got.date() if isinstance(got, datetime) else got
            return None if want_day == got_day else "is a different date"
        if (want.tzinfo is None) != (got.tzinfo is None):
            return "has a UTC offset where the expected value has none (or the reverse)"
        return None if want == got else "is a different instant"


class FieldAccuracy(Grader):
    """Compares fields of the JSON output, picked by JSONPath, with their expected values."""

    type: Literal["field-accuracy"]
    fields: Annotated[list[FieldSpec], Field(min_length=1)]
    """The fields to compare, each `{path, match, tolerance, relative, formats, expected,
    weight}`."""
    aggregation: Literal["weighted_average", "all_or_nothing"] = "weighted_average"
    """`weighted_average`: score = weight of matching fields / total weight;
    `all_or_nothing`: 1 when every scored field matches, else 0."""
    missing_expected: Literal["error", "pass"] = "error"
    """A field whose path matches nothing in a test's expected_output: `error`, a load error
    naming the test; `pass`, the field matches in that test ("no expected value": AgentV's
    reading, so one grader serves tests whose references differ in which fields they have)."""

    @field_validator("fields")
    @classmethod
    def _distinct_and_weighted(cls, fields: list[FieldSpec]) -> list[FieldSpec]:
        seen: dict[str, str] = {}
        for f in fields:
            canonical = str(_query(f.path))
            if canonical in seen:
                raise ValueError(f"field '{f.path}' is listed twice (also as '{seen[canonical]}')")
            seen[canonical] = f.path
        if not any(f.weight > 0 for f in fields):
            raise ValueError("every field has weight 0; give at least one field a weight > 0")
        return fields

    def problem_with_test(self, test: TestFacts) -> str | None:
        """Why this grader cannot grade test `test_id`, or None; called when the suite loads."""
        test_id, expected_output = test.test_id, test.expected_output
        try:
            self._expected_values(expected_output, test_id)
        except GraderError as exc:
            return str(exc)
        return None

    def _expected_values(self, expected_output: JSON, test_id: str) -> list[JSON | _Missing]:
        """Each field's expected value: its own `expected`, or its path in expected_output
        (`_MISSING` there when `missing_expected: pass`)."""
        document: JSON | _Missing = _MISSING
        values: list[JSON | _Missing] = []
        for f in self.fields:
            if "expected" in f.model_fields_set:
                values.append(f.expected)
                continue
            if isinstance(document, _Missing):
                document = self._document(expected_output, f.path, test_id)
            found = _select(f.path, document)
            if isinstance(found, _Missing) and self.missing_expected == "pass":
                values.append(found)
                continue
            if isinstance(found, _Missing):
                raise GraderError(
                    f"field-accuracy field '{f.path}' matches nothing in the expected_output of "
                    f"test '{test_id}'; fix the path or give the field an `expected` value"
                )
            value = _plain(found)
            problem = f.expected_problem(value)
            if problem:
                raise GraderError(
                    f"field-accuracy field '{f.path}': the expected_output of test '{test_id}' "
                    f"holds {problem}"
                )
            values.append(value)
        return values

    @staticmethod
    def _document(expected_output: JSON, path: str, test_id: str) -> JSON:
        if expected_output is None:
            raise GraderError(
                f"field-accuracy field '{path}' has no `expected` value and test '{test_id}' has "
                "no expected_output; add a JSON expected_output or an `expected` to the field"
            )
        if not isinstance(expected_output, str):
            return expected_output
        document, where = parse_json(expected_output)
        if where is not None:
            raise GraderError(
                f"field-accuracy reads field '{path}' from the expected_output of test "
                f"'{test_id}', which is not JSON ({where})"
            )
        return document

    async def measure(self, ctx: GradingContext) -> Measurement:
        expected = self._expected_values(ctx.expected_output, ctx.case_id)
        output, where = parse_json(ctx.output)
        outcomes: list[tuple[FieldSpec, bool]] = []
        hits: list[str] = []
        misses: list[str] = [] if where is None else [f"output is not valid JSON ({where})"]
        details: list[Detail] = []
        for f, want in zip(self.fields, expected, strict=True):
            got = _MISSING if where is not None else _select(f.path, output)
            if isinstance(want, _Missing):
                hits.append(f"{f.path}: no expected value")
                outcomes.append((f, True))
                details.append(detail(f"field.{f.path}", True, message="no expected value"))
                continue
            if where is not None:
                reason: str | None = f"output is not JSON ({where})"
            elif isinstance(got, _Missing):
                reason = "is missing from the output"
                misses.append(f"{f.path} {reason}")
            else:
                reason = f.compare(want, got)
                if reason:
                    misses.append(f"{f.path} {reason}")
                else:
                    hits.append(f"{f.path} matches")
            outcomes.append((f, reason is None))
            details.append(
                detail(
                    f"field.{f.path}",
                    reason is None,
                    expected="null" if want is None else want,
                    actual=None if isinstance(got, _Missing) else "null" if got is None else got,
                    message=reason or "",
                )
            )
        scored = [(f, ok) for f, ok in outcomes if f.weight > 0]
        matched = sum(ok for _, ok in scored)
        if self.aggregation == "all_or_nothing":
            score = 1.0 if matched == len(scored) else 0.0
        else:
            score = sum(f.weight for f, ok in scored if ok) / sum(f.weight for f, _ in scored)
        return Measurement(
            score=score,
            hits=hits,
            misses=misses,
            reasoning=f"{matched} of {len(scored)} fields match",
            details=details,
        )
