"""The format grader: up to seven independent shape checks folded into one score (SPEC §4).

Score = passed sub-checks / enabled sub-checks. Each sub-check reports one Detail named
`format.<sub-check>`, except the term lists, which report one Detail per term
(`format.required_fields.<term>`) so a report names exactly which term is missing or present.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Literal, Self

from pydantic import Field, field_validator, model_validator

from assay._strict_model import StrictModel
from assay.errors import GraderError
from assay.graders._base import Grader, GradingContext, Measurement, TestFacts
from assay.graders._details import detail, truncate
from assay.graders._json_schema import check_schema, infer_schema, schema_violations
from assay.graders.structured import parse_json
from assay.graders.text import compile_re2
from assay.results import JSON, Detail

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

__all__ = ["Format", "FormatChecks", "LengthCheck", "markdown_problems"]

_TERM_IN_CHECK_NAME = 40


class LengthCheck(StrictModel):
    """Options of `format.length`: output length within a fraction of the expected length."""

    tolerance: Annotated[float, Field(ge=0.0)] = 0.2
    """Allowed relative difference, as a fraction: 0.2 passes lengths within ±20%."""
    unit: Literal["characters", "words"] = "characters"
    """Count Unicode characters (language-neutral) or whitespace-separated words."""

    @field_validator("tolerance")
    @classmethod
    def _fraction(cls, value: float) -> float:
        if value > 1.0:
            raise ValueError(
                f"tolerance {value:g} is not a fraction; write 0.2 for ±20% (at most 1.0)"
            )
        return value

    def count(self, text: str) -> int:
        """Length of `text` in this check's unit, ignoring surrounding whitespace."""
        return len(text.split()) if self.unit == "words" else len(text.strip())


def _terms(terms: list[str]) -> list[str]:
    if any(not t for t in terms):
        raise ValueError("terms must not be empty strings (an empty term matches everything)")
    repeated = sorted({t for t in terms if terms.count(t) > 1})
    if repeated:
        raise ValueError(f"term {repeated[0]!r} is listed twice")
    return terms


class FormatChecks(StrictModel):
    """The sub-checks of `format`; each is optional and at least one must be enabled."""

    length: LengthCheck | None = None
    """Output length vs the test's expected_output length, e.g. `{tolerance: 0.2}`."""
    json_validity: bool = False
    """The output parses as JSON."""
    json_schema: bool | dict[str, JSON] = False
    """The output is JSON matching a schema: `true` infers it from the test's expected_output,
    a mapping is the schema itself (JSON Schema draft 2020-12)."""
    markdown_structure: bool = False
    """Headings never skip a level going deeper; all bullet lists share one marker and all
    ordered lists one delimiter."""
    required_fields: Annotated[list[str], Field(min_length=1)] | None = None
    """Terms that must all appear in the output (substring match)."""
    forbidden_content: Annotated[list[str], Field(min_length=1)] | None = None
    """Terms none of which may appear in the output (substring match)."""
    regex_match: str | None = None
    """An RE2 pattern (at most 500 characters) the output must match somewhere."""

    @field_validator("required_fields", "forbidden_content")
    @classmethod
    def _valid_terms(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else _terms(value)

    @field_validator("json_schema")
    @classmethod
    def _valid_schema(cls, value: bool | dict[str, JSON]) -> bool | dict[str, JSON]:
        if isinstance(value, dict):
            check_schema(value)
        return value

    @field_validator("regex_match")
    @classmethod
    def _compiles(cls, pattern: str | None) -> str | None:
        if pattern is not None:
            compile_re2(pattern)
        return pattern

    @model_validator(mode="after")
    def _at_least_one(self) -> Self:
        if not self.enabled():
            raise ValueError(
                "enable at least one check: length, json_validity, json_schema, "
                "markdown_structure, required_fields, forbidden_content or regex_match"
            )
        return self

    def enabled(self) -> list[str]:
        """Names of the enabled sub-checks, in the order they are run and reported."""
        on = {
            "length": self.length is not None,
            "json_validity": self.json_validity,
            "json_schema": self.json_schema is not False,
            "markdown_structure": self.markdown_structure,
            "required_fields": self.required_fields is not None,
            "forbidden_content": self.forbidden_content is not None,
            "regex_match": self.regex_match is not None,
        }
        return [name for name, is_on in on.items() if is_on]


@dataclass(slots=True)
class _Outcome:
    """One sub-check's verdict, its hit or miss sentence and its Details."""

    passed: bool
    sentence: str
    details: list[Detail]


def _expected_text(expected: JSON) -> str:
    """The expected output as text: a JSON value is measured by its JSON text."""
    return expected if isinstance(expected, str) else json.dumps(expected, ensure_ascii=False)


def _expected_json(expected: JSON) -> JSON:
    """The expected output as a JSON value; a string is parsed. ValueError when it is not JSON."""
    if not isinstance(expected, str):
        return expected
    try:
        return json.loads(expected)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"the test's expected_output is not JSON (line {exc.lineno} column {exc.colno}: "
            f"{exc.msg})"
        ) from None


@functools.lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    """A CommonMark block parser; inline parsing is off since only block structure is checked."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").disable(["inline", "text_join", "reference"])


_STRUCTURE_LINE = re.compile(
    r"^[ \t>]*(?:#{1,6}(?:[ \t]|$)|[-*+](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|(?:=+|-+)[ \t]*$)",
    re.MULTILINE,
)
"""A line that may open a heading or a list item, or underline a setext heading."""


def markdown_problems(text: str) -> list[str]:
    """Structure problems of a Markdown document, read from the parser's token stream.

    A heading may be followed by one of any level up to one deeper (h2 → h3, h3 → h1); the first
    heading may be any level. Every bullet list must use the marker of the first bullet list
    (`-`, `*` or `+`) and every ordered list the delimiter of the first ordered list (`.` or
    `)`). In CommonMark a changed marker starts a new list, so consistency is a document rule.
    """
    problems: list[str] = []
    candidates = _STRUCTURE_LINE.finditer(text)
    if next(candidates, None) is None or next(candidates, None) is None:
        return problems  # a problem needs two headings or two lists: skip the parser
    previous: int | None = None
    first_marker: dict[str, tuple[str, int]] = {}
    for token in _markdown().parse(text):
        line = token.map[0] + 1 if token.map else 0
        if token.type == "heading_open":
            level = int(token.tag[1])
            if previous is not None and level > previous + 1:
                problems.append(f"heading level skips from h{previous} to h{level} (line {line})")
            previous = level
        elif token.type in ("bullet_list_open", "ordered_list_open"):
            kind = "bullet" if token.type == "bullet_list_open" else "ordered"
            marker, first_line = first_marker.setdefault(kind, (token.markup, line))
            if token.markup != marker:
                problems.append(
                    f"{kind} list uses '{token.markup}' (line {line}) but the first {kind} "
                    f"list uses '{marker}' (line {first_line})"
                )
    return problems


class Format(Grader):
    """Checks the shape of the output: length, JSON, schema, Markdown, terms and a pattern."""

    @classmethod
    def warm_up(cls) -> None:
        """Build the Markdown parser (markdown-it-py: ~50 ms to import)."""
        _markdown()

    type: Literal["format"]
    checks: FormatChecks
    """The sub-checks to run; score = passed / enabled."""
    case_sensitive: bool = True
    """Whether `required_fields` and `forbidden_content` match case exactly; false folds case
    (use `(?i)` in `regex_match` for a case-insensitive pattern)."""

    def problem_with_test(self, test: TestFacts) -> str | None:
        """Why this grader cannot grade test `test_id`, or None; called when the suite loads."""
        test_id, expected_output = test.test_id, test.expected_output
        if self.checks.length is not None and expected_output is None:
            return (
                f"format check `length` compares with the expected_output, and test '{test_id}' "
                "has none; add `expected_output` or remove `length`"
            )
        if self.checks.json_schema is True:
            if expected_output is None:
                return (
                    f"format check `json_schema: true` infers the schema from the expected_output,"
                    f" and test '{test_id}' has none; add a JSON `expected_output` or give the "
                    "schema itself"
                )
            try:
                _expected_json(expected_output)
            except ValueError as exc:
                return f"format check `json_schema: true` cannot infer a schema: {exc}"
        return None

    async def measure(self, ctx: GradingContext) -> Measurement:
        parsed, where = self._parse_output(ctx.output)
        runners: dict[str, Callable[[], _Outcome]] = {
            "length": lambda: self._length(ctx),
            "json_validity": lambda: self._json_validity(ctx, where),
            "json_schema": lambda: self._json_schema(ctx, parsed, where),
            "markdown_structure": lambda: self._markdown_structure(ctx),
            "required_fields": lambda: self._terms(ctx, required=True),
            "forbidden_content": lambda: self._terms(ctx, required=False),
            "regex_match": lambda: self._regex(ctx),
        }
        enabled = self.checks.enabled()
        outcomes = [runners[name]() for name in enabled]
        passed = sum(o.passed for o in outcomes)
        return Measurement(
            score=passed / len(outcomes),
            hits=[o.sentence for o in outcomes if o.passed],
            misses=[o.sentence for o in outcomes if not o.passed],
            reasoning=f"{passed} of {len(outcomes)} format checks passed",
            details=[d for o in outcomes for d in o.details],
        )

    def _parse_output(self, output: str) -> tuple[JSON, str | None]:
        """The output as JSON and None, or None and where parsing failed; parsed once for both
        JSON checks, and only when one of them is on."""
        if not (self.checks.json_validity or self.checks.json_schema is not False):
            return None, None
        return parse_json(output)

    def _length(self, ctx: GradingContext) -> _Outcome:
        check = self.checks.length
        assert check is not None
        if ctx.expected_output is None:
            raise GraderError("format check `length` needs the test's expected_output")
        expected = check.count(_expected_text(ctx.expected_output))
        actual = check.count(ctx.output)
        unit = check.unit
        bound = f"{expected} {unit} ±{check.tolerance:.0%}"
        if expected == 0:
            passed, off = actual == 0, "the expected output is empty"
        else:
            ratio = (actual - expected) / expected
            passed = abs(ratio) <= check.tolerance + 1e-12
            off = f"{abs(ratio):.0%} {'longer' if ratio > 0 else 'shorter'} than expected"
        sentence = f"length {actual} {unit} is {'within' if passed else 'outside'} {bound}"
        message = "" if passed else off
        return _Outcome(
            passed,
            sentence,
            [
                detail(
                    "format.length",
                    passed,
                    expected=bound,
                    actual=f"{actual} {unit}",
                    message=message,
                )
            ],
        )

    @staticmethod
    def _json_validity(ctx: GradingContext, where: str | None) -> _Outcome:
        if where is not None:
            return _Outcome(
                False,
                f"output is not valid JSON ({where})",
                [
                    detail(
                        "format.json_validity",
                        False,
                        expected="valid JSON",
                        actual=ctx.output,
                        message=where,
                    )
                ],
            )
        return _Outcome(
            True,
            "output is valid JSON",
            [detail("format.json_validity", True, expected="valid JSON", actual=ctx.output)],
        )

    def _json_schema(self, ctx: GradingContext, parsed: JSON, where: str | None) -> _Outcome:
        given = self.checks.json_schema
        if isinstance(given, dict):
            schema, source = given, "the schema"
        else:
            if ctx.expected_output is None:
                raise GraderError(
                    "format check `json_schema: true` needs the test's expected_output"
                )
            try:
                schema = infer_schema(_expected_json(ctx.expected_output))
            except ValueError as exc:
                raise GraderError(f"format check `json_schema: true`: {exc}") from None
            source = "the schema inferred from expected_output"
        if where is not None:
            message = f"output is not JSON ({where})"
            return _Outcome(
                False,
                f"{message}, so it cannot match {source}",
                [
                    detail(
                        "format.json_schema",
                        False,
                        expected=source,
                        actual=ctx.output,
                        message=message,
                    )
                ],
            )
        violations = schema_violations(parsed, schema)
        if not violations:
            return _Outcome(
                True,
                f"output matches {source}",
                [detail("format.json_schema", True, expected=source, actual=ctx.output)],
            )
        path, reason = violations[0]
        more = f" (+{len(violations) - 1} more)" if len(violations) > 1 else ""
        message = f"{path}: {reason}{more}"
        return _Outcome(
            False,
            f"output does not match {source}: {truncate(message, 60)}",
            [
                detail(
                    "format.json_schema", False, expected=source, actual=ctx.output, message=message
                )
            ],
        )

    @staticmethod
    def _markdown_structure(ctx: GradingContext) -> _Outcome:
        problems = markdown_problems(ctx.output)
        expected = "no skipped heading levels, one list marker"
        if not problems:
            return _Outcome(
                True,
                "Markdown structure is consistent",
                [detail("format.markdown_structure", True, expected=expected, actual=ctx.output)],
            )
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        return _Outcome(
            False,
            f"Markdown structure: {problems[0]}{more}",
            [
                detail(
                    "format.markdown_structure",
                    False,
                    expected=expected,
                    actual=ctx.output,
                    message="; ".join(problems),
                )
            ],
        )

    def _terms(self, ctx: GradingContext, *, required: bool) -> _Outcome:
        terms = self.checks.required_fields if required else self.checks.forbidden_content
        assert terms is not None
        haystack = ctx.output if self.case_sensitive else ctx.output.casefold()
        found = [(t if self.case_sensitive else t.casefold()) in haystack for t in terms]
        name = "required_fields" if required else "forbidden_content"
        details = [
            detail(
                f"format.{name}.{truncate(term, _TERM_IN_CHECK_NAME)}",
                is_in == required,
                expected=term,
                actual=ctx.output,
                message=("present" if is_in else "absent")
                + ("" if is_in == required else f" but {'required' if required else 'forbidden'}"),
            )
            for term, is_in in zip(terms, found, strict=True)
        ]
        bad = [
            f"'{truncate(t, 60)}'"
            for t, is_in in zip(terms, found, strict=True)
            if is_in != required
        ]
        if required:
            sentence = (
                f"missing required {', '.join(bad)}" if bad else "contains every required term"
            )
        else:
            sentence = (
                f"contains forbidden {', '.join(bad)}" if bad else "contains no forbidden term"
            )
        return _Outcome(not bad, sentence, details)

    def _regex(self, ctx: GradingContext) -> _Outcome:
        pattern = self.checks.regex_match
        assert pattern is not None
        match = compile_re2(pattern).find(ctx.output)
        passed = match is not None
        shown = truncate(pattern, 60)
        return _Outcome(
            passed,
            f"matches /{shown}/" if passed else f"does not match /{shown}/",
            [
                detail(
                    "format.regex_match",
                    passed,
                    expected=pattern,
                    actual=match if match is not None else ctx.output,
                )
            ],
        )
