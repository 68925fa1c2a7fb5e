"""String graders: equals, the contains family, starts-with, ends-with, regex (SPEC §4)."""

from __future__ import annotations

import functools
import json
import re
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from assay.errors import GraderError
from assay.graders._base import Grader, GradingContext, Measurement, TestFacts
from assay.graders._details import detail, truncate
from assay.results import JSON

__all__ = [
    "MAX_PATTERN_LENGTH",
    "CompiledPattern",
    "Contains",
    "ContainsAll",
    "ContainsAny",
    "EndsWith",
    "Equals",
    "IContains",
    "Regex",
    "StartsWith",
    "missing_reference",
]

MAX_PATTERN_LENGTH = 500

_WHITESPACE = re.compile(r"\s+")


def _expected_text(value: str | None, ctx: GradingContext, grader: str) -> str:
    """The grader's `value`, or the test's `expected_output` when `value` is omitted."""
    if value is not None:
        return value
    if ctx.expected_output is None:
        raise GraderError(f"{grader} needs `value` or the test's `expected_output`")
    if isinstance(ctx.expected_output, str):
        return ctx.expected_output
    return json.dumps(ctx.expected_output, ensure_ascii=False)


def missing_reference(grader: Grader, test: TestFacts) -> str | None:
    """The problem of a grader whose `value` defaults to the test's expected_output."""
    if getattr(grader, "value", None) is None and test.expected_output is None:
        return (
            f"{grader.type} has no `value` and test '{test.test_id}' has no `expected_output`; "
            "give one of them"
        )
    return None


def _base_form(verb: str) -> str:
    """'starts with' -> 'start with': the verb after "does not" (its first word loses the -s)."""
    first, _, rest = verb.partition(" ")
    return f"{first.removesuffix('s')} {rest}".rstrip()


def _same_json(a: JSON, b: JSON) -> bool:
    """JSON equality: like ==, except that true/false never equal the numbers 1/0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


class _StringCheck(Grader):
    """Shared options of the single-value string checks."""

    value: str | None = None
    """Text to look for; defaults to the test's `expected_output`."""
    case_sensitive: bool = True
    """Compare exactly; false folds case on both sides."""

    def _fold(self, text: str) -> str:
        return text if self.case_sensitive else text.casefold()

    def problem_with_test(self, test: TestFacts) -> str | None:
        """The value defaults to the test's expected_output: one of them must be given."""
        return missing_reference(self, test)

    def _binary(self, passed: bool, expected: str, ctx: GradingContext, verb: str) -> Measurement:
        shown = truncate(expected, 60)
        return Measurement(
            score=1.0 if passed else 0.0,
            hits=[f"{verb} '{shown}'"] if passed else [],
            misses=[] if passed else [f"does not {_base_form(verb)} '{shown}'"],
            details=[detail(self.type, passed, expected=expected, actual=ctx.output)],
        )


class Equals(_StringCheck):
    """The output equals the value exactly (or, for a JSON expected output, structurally)."""

    type: Literal["equals"]
    ignore_whitespace: bool = False
    """Collapse runs of whitespace and strip both ends before comparing."""

    async def measure(self, ctx: GradingContext) -> Measurement:
        if self.value is None and not isinstance(ctx.expected_output, str | None):
            return self._json_equals(ctx)
        expected = _expected_text(self.value, ctx, self.type)
        actual = ctx.output
        if self.ignore_whitespace:
            expected = _WHITESPACE.sub(" ", expected).strip()
            actual = _WHITESPACE.sub(" ", actual).strip()
        passed = self._fold(actual) == self._fold(expected)
        return self._binary(passed, expected, ctx, "equals")

    def _json_equals(self, ctx: GradingContext) -> Measurement:
        try:
            parsed = json.loads(ctx.output)
        except json.JSONDecodeError as exc:
            return Measurement(
                score=0.0,
                misses=[f"output is not JSON: {exc.msg}"],
                details=[
                    detail("equals.json", False, expected=ctx.expected_output, actual=ctx.output)
                ],
            )
        passed = _same_json(parsed, ctx.expected_output)
        return self._binary(passed, json.dumps(ctx.expected_output), ctx, "equals")


class Contains(_StringCheck):
    """The output contains the value."""

    type: Literal["contains"]

    async def measure(self, ctx: GradingContext) -> Measurement:
        expected = _expected_text(self.value, ctx, self.type)
        return self._binary(
            self._fold(expected) in self._fold(ctx.output), expected, ctx, "contains"
        )


class IContains(Contains):
    """The output contains the value, ignoring case."""

    type: Literal["icontains"]  # type: ignore[assignment]
    case_sensitive: bool = False
    """Always false for icontains."""

    @field_validator("case_sensitive")
    @classmethod
    def _never_case_sensitive(cls, value: bool) -> bool:
        if value:
            raise ValueError(
                "icontains always ignores case; use contains for a case-sensitive check"
            )
        return value


class StartsWith(_StringCheck):
    """The output starts with the value."""

    type: Literal["starts-with"]

    async def measure(self, ctx: GradingContext) -> Measurement:
        expected = _expected_text(self.value, ctx, self.type)
        passed = self._fold(ctx.output).startswith(self._fold(expected))
        return self._binary(passed, expected, ctx, "starts with")


class EndsWith(_StringCheck):
    """The output ends with the value."""

    type: Literal["ends-with"]

    async def measure(self, ctx: GradingContext) -> Measurement:
        expected = _expected_text(self.value, ctx, self.type)
        passed = self._fold(ctx.output).endswith(self._fold(expected))
        return self._binary(passed, expected, ctx, "ends with")


class _ManyValues(Grader):
    """Shared options of the multi-value checks."""

    value: Annotated[list[str], Field(min_length=1)]
    """Texts to look for."""
    case_sensitive: bool = True
    """Compare exactly; false folds case on both sides."""

    def _found(self, ctx: GradingContext) -> list[bool]:
        haystack = ctx.output if self.case_sensitive else ctx.output.casefold()
        return [(v if self.case_sensitive else v.casefold()) in haystack for v in self.value]

    def _measure(self, ctx: GradingContext, passed: bool) -> Measurement:
        found = self._found(ctx)
        return Measurement(
            score=1.0 if passed else 0.0,
            hits=[
                f"contains '{truncate(v, 60)}'"
                for v, ok in zip(self.value, found, strict=True)
                if ok
            ],
            misses=[
                f"does not contain '{truncate(v, 60)}'"
                for v, ok in zip(self.value, found, strict=True)
                if not ok
            ],
            details=[
                detail(f"{self.type}.value[{i}]", ok, expected=v, actual=ctx.output)
                for i, (v, ok) in enumerate(zip(self.value, found, strict=True))
            ],
        )


class ContainsAny(_ManyValues):
    """The output contains at least one of the values (score 1 or 0)."""

    type: Literal["contains-any"]

    async def measure(self, ctx: GradingContext) -> Measurement:
        return self._measure(ctx, any(self._found(ctx)))


class ContainsAll(_ManyValues):
    """The output contains every one of the values (score 1 or 0; a Detail per value)."""

    type: Literal["contains-all"]

    async def measure(self, ctx: GradingContext) -> Measurement:
        return self._measure(ctx, all(self._found(ctx)))


class Regex(Grader):
    """The output matches an RE2 pattern (linear time: no backtracking, no hangs)."""

    type: Literal["regex"]
    value: str
    """RE2 pattern; at most 500 characters; no backreferences or lookaround."""
    case_sensitive: bool = True
    """False matches ignoring case."""
    full_match: bool = False
    """Require the whole output to match instead of a match anywhere."""

    @field_validator("value")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        compile_re2(pattern)
        return pattern

    async def measure(self, ctx: GradingContext) -> Measurement:
        compiled = compile_re2(self.value, case_sensitive=self.case_sensitive)
        match = compiled.find(ctx.output, full=self.full_match)
        passed = match is not None
        shown = truncate(self.value, 60)
        return Measurement(
            score=1.0 if passed else 0.0,
            hits=[f"matches /{shown}/"] if passed else [],
            misses=[] if passed else [f"does not match /{shown}/"],
            details=[
                detail(
                    "regex",
                    passed,
                    expected=self.value,
                    actual=match if match is not None else ctx.output,
                )
            ],
        )


class CompiledPattern:
    """An RE2 pattern, matched against the UTF-8 bytes of a text.

    re2's `str` interface re-maps every match offset between bytes and characters in Python
    (~3 µs a match, a tenth of a deterministic grading run); matching the encoded text and
    decoding only the matched bytes gives the same answer for the price of one `encode`.
    """

    __slots__ = ("_compiled", "_match", "_search", "_whole")

    def __init__(self, compiled: Any) -> None:
        self._compiled = compiled
        # The wrapper's own `search` (a generator, a match object, `group`) costs as much as
        # RE2's match under it: 12 of 25 µs a match in a run, whose other work keeps the CPU's
        # caches cold. The pybind `RE2` object under it is called directly when it is there,
        # as the wrapper calls it for bytes (`_Regexp._match`); else the wrapper is used.
        regexp = getattr(compiled, "_regexp", None)
        anchor = getattr(type(regexp), "Anchor", None)
        self._match: Any = getattr(regexp, "Match", None) if anchor is not None else None
        self._search = getattr(anchor, "UNANCHORED", None)
        self._whole = getattr(anchor, "ANCHOR_BOTH", None)
        if self._search is None or self._whole is None:
            self._match = None

    def find(self, text: str, *, full: bool = False) -> str | None:
        """The text of the first match (of the whole text with `full`), or None."""
        encoded = text.encode()
        if self._match is not None:
            start, end = self._match(
                self._whole if full else self._search, encoded, 0, len(encoded)
            )[0]
            if start == -1:  # the wrapper's `_NULL_SPAN`: no match
                return None
            return encoded[start:end].decode(errors="replace")
        match = self._compiled.fullmatch(encoded) if full else self._compiled.search(encoded)
        if match is None:
            return None
        # `\C` may match part of a character: show it replaced rather than fail the grade.
        return match.group(0).decode(errors="replace")  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=256)
def compile_re2(pattern: str, *, case_sensitive: bool = True) -> CompiledPattern:
    """Compile a pattern with RE2, raising ValueError with a fix-it message when it cannot.

    Called when the suite loads, so a bad pattern never reaches a run; cached because the
    same pattern is matched against every case.
    """
    import re2

    if len(pattern) > MAX_PATTERN_LENGTH:
        raise ValueError(
            f"regex is {len(pattern)} characters long; the limit is {MAX_PATTERN_LENGTH}. "
            "Split it into several regex graders."
        )
    options = re2.Options()
    options.case_sensitive = case_sensitive
    options.log_errors = False  # the error is ours to report, not RE2's to print on stderr
    try:
        # A bytes pattern in RE2's default UTF-8 mode: it matches characters, not bytes.
        return CompiledPattern(re2.compile(pattern.encode(), options))
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc
        raise ValueError(
            f"regex {pattern!r} is not valid RE2 ({reason}). RE2 has no backreferences or "
            "lookaround; rewrite the pattern without them."
        ) from None
