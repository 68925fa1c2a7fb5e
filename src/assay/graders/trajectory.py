"""The tool-trajectory grader: the tool calls the target made against the ones expected (SPEC §4).

An expected call matches an actual call when the tool names are equal, the arguments agree
under its `args_match`, and the call took at most its `max_duration_ms`. The modes say which
set of matches counts:

| mode | order | calls beyond the expected | expected calls not made |
|---|---|---|---|
| exact | position by position | forbidden | forbidden |
| any_order | ignored | forbidden | forbidden |
| in_order | kept (gaps allowed) | allowed | missing |
| superset | ignored | allowed | missing |
| subset | ignored | forbidden | allowed |

Unordered modes use a maximum bipartite matching and `in_order` a longest common subsequence,
so an early loose expectation never takes the call a later strict one needed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Literal, Self

from pydantic import Field, TypeAdapter, model_validator

from assay._strict_model import StrictModel
from assay.errors import GraderError
from assay.graders._base import Grader, GradingContext, Measurement, TestFacts
from assay.graders._details import detail, truncate
from assay.graders.text import _same_json
from assay.results import JSON, Detail, ToolCall

__all__ = ["ExpectedCall", "ToolTrajectory"]

ArgsMatch = Literal["exact", "subset", "ignore"]
Mode = Literal["exact", "in_order", "any_order", "subset", "superset"]

_STRICT_MODES = frozenset({"exact", "any_order"})
"""Modes whose pass rule is "exactly these calls": any deviation fails the grader."""
_EXTRAS_ALLOWED = frozenset({"in_order", "superset"})
_SHOWN_VALUE = 30
_MESSAGE_LIMIT = 200


class ExpectedCall(StrictModel):
    """A call the trajectory should contain: a test's `expected_tool_calls` entry (`tool`,
    `args`) plus the per-call matching options of the grader."""

    tool: Annotated[str, Field(min_length=1)]
    """Tool name, compared exactly."""
    args: dict[str, JSON] | None = None
    """Expected arguments; omitted means any arguments (as in `expected_tool_calls`)."""
    args_match: ArgsMatch | None = None
    """How `args` compare: `exact` (the default when `args` is given: the same keys and values),
    `subset` (the expected keys must be present with equal values, recursively in nested
    objects; other keys may be added) or `ignore` (the default without `args`)."""
    max_duration_ms: Annotated[float, Field(gt=0.0)] | None = None
    """The matching call must report a `duration_ms` of at most this many milliseconds."""

    @model_validator(mode="after")
    def _args_and_match_agree(self) -> Self:
        if self.args is None and self.args_match in ("exact", "subset"):
            raise ValueError(
                f"args_match: {self.args_match} compares `args`, and this call gives none; add "
                "`args` (`args: {}` with args_match: exact requires a call without arguments) "
                "or remove args_match"
            )
        if self.args is not None and self.args_match == "ignore":
            raise ValueError(
                "args_match: ignore never looks at `args`; remove `args` or choose args_match "
                "exact or subset"
            )
        return self

    @property
    def matching(self) -> ArgsMatch:
        """The effective `args_match`."""
        if self.args_match is not None:
            return self.args_match
        return "ignore" if self.args is None else "exact"

    def shown(self) -> str:
        """`lookup {"id": 7}` (exact), `lookup {"id": 7, …}` (subset), `lookup (any args)`."""
        if self.args is None or self.matching == "ignore":
            return f"{self.tool} (any args)"
        text = json.dumps(self.args, ensure_ascii=False)
        if self.matching == "subset":
            text = f"{text[:-1]}, …}}" if self.args else "{…}"
        return f"{self.tool} {text}"


_EXPECTED_CALLS: TypeAdapter[list[ExpectedCall]] = TypeAdapter(list[ExpectedCall])


def _shown(call: ToolCall) -> str:
    return f"{call.tool} {json.dumps(call.args, ensure_ascii=False)}"


def _value(value: JSON) -> str:
    """As JSON, so the string "7" and the number 7 never look alike."""
    return truncate(json.dumps(value, ensure_ascii=False), _SHOWN_VALUE)


def _arg_problems(
    expected: dict[str, JSON], actual: dict[str, JSON], *, subset: bool, path: str = "args"
) -> list[str]:
    """Each way `actual` differs from `expected`, named by its path (`args.filter.status`).

    Values compare as JSON (`true` never equals `1`); nested objects are compared key by key
    with the same rule, and lists element by element (exactly, also in subset mode).
    """
    problems: list[str] = []
    for key, want in expected.items():
        where = f"{path}.{key}"
        if key not in actual:
            problems.append(f"{where}: missing")
            continue
        got = actual[key]
        if isinstance(want, dict) and isinstance(got, dict):
            problems += _arg_problems(want, got, subset=subset, path=where)
        elif not _same_json(want, got):
            problems.append(f"{where}: expected {_value(want)}, got {_value(got)}")
    if not subset:
        problems += [f"{path}.{key}: not expected" for key in actual if key not in expected]
    return problems


def _args_fit(expected: dict[str, JSON], actual: dict[str, JSON], *, subset: bool) -> bool:
    """`_arg_problems(...) == []`, without building the messages: the matching asks this for
    every (expected, actual) pair, n × m times."""
    if not subset and len(actual) != len(expected):
        return False
    for key, want in expected.items():
        if key not in actual:
            return False
        got = actual[key]
        if isinstance(want, dict) and isinstance(got, dict):
            if not _args_fit(want, got, subset=subset):
                return False
        elif not _same_json(want, got):
            return False
    return True


def _fits(expected: ExpectedCall, actual: ToolCall) -> bool:
    """Whether `actual` (a call of the same tool) has the expected arguments."""
    if expected.args is None or expected.matching == "ignore":
        return True
    return _args_fit(expected.args, actual.args, subset=expected.matching == "subset")


def _problems(expected: ExpectedCall, actual: ToolCall) -> list[str]:
    """Why `actual` is not `expected` when the tools are the same (empty when it is)."""
    if expected.args is None or expected.matching == "ignore":
        return []
    return _arg_problems(expected.args, actual.args, subset=expected.matching == "subset")


def _too_slow(expected: ExpectedCall, actual: ToolCall) -> bool:
    limit = expected.max_duration_ms
    return limit is not None and actual.duration_ms is not None and actual.duration_ms > limit


def _max_matching(ok: list[list[bool]], m: int) -> dict[int, int]:
    """A maximum matching expected → actual (Kuhn's augmenting paths); earlier calls pair first."""
    owner: list[int | None] = [None] * m

    def augment(i: int, seen: list[bool]) -> bool:
        for j in range(m):
            if ok[i][j] and not seen[j]:
                seen[j] = True
                current = owner[j]
                if current is None or augment(current, seen):
                    owner[j] = i
                    return True
        return False

    for i in range(len(ok)):
        augment(i, [False] * m)
    return {i: j for j, i in enumerate(owner) if i is not None}


def _ordered_matching(ok: list[list[bool]], m: int) -> dict[int, int]:
    """The largest order-preserving matching (a longest common subsequence)."""
    n = len(ok)
    best = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            take = best[i + 1][j + 1] + 1 if ok[i][j] else 0
            best[i][j] = max(take, best[i + 1][j], best[i][j + 1])
    pairs: dict[int, int] = {}
    i = j = 0
    while i < n and j < m:
        if ok[i][j] and best[i][j] == best[i + 1][j + 1] + 1:
            pairs[i] = j
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


class ToolTrajectory(Grader):
    """The tool calls the target made, against the expected ones; score = matched / expected."""

    type: Literal["tool-trajectory"]
    mode: Mode = "in_order"
    """`exact`, `in_order`, `any_order`, `subset` or `superset` (see the grader docs)."""
    expected: list[ExpectedCall] | None = None
    """The expected calls; defaults to the test's `expected_tool_calls`."""

    def problem_with_test(self, test: TestFacts) -> str | None:
        """`expected` defaults to the test's expected_tool_calls: one of them must be given."""
        if self.expected is None and not test.has_expected_tool_calls:
            return (
                f"{self.type} has no `expected` calls and test '{test.test_id}' has no "
                "`expected_tool_calls`; give one of them"
            )
        return None

    @model_validator(mode="after")
    def _meaningful(self) -> Self:
        if self.expected == [] and self.mode in _EXTRAS_ALLOWED:
            raise ValueError(
                f"an empty `expected` list checks nothing in mode {self.mode}; to require that "
                "no tool is called use mode exact, or list the calls you expect"
            )
        if self.min_score is not None and self.mode in _STRICT_MODES:
            raise ValueError(
                f"mode {self.mode} passes only when the calls are exactly the expected ones, "
                "so min_score has no effect; remove min_score, or use mode in_order or superset "
                "for partial credit"
            )
        return self

    def _expected(self, ctx: GradingContext) -> list[ExpectedCall]:
        if self.expected is not None:
            return self.expected
        if not ctx.expected_tool_calls:
            raise GraderError(
                f"{self.type} has no `expected` calls and the test has no `expected_tool_calls`"
            )
        return _EXPECTED_CALLS.validate_python(list(ctx.expected_tool_calls))

    async def measure(self, ctx: GradingContext) -> Measurement:
        expected = self._expected(ctx)
        actual = ctx.tool_calls
        n, m = len(expected), len(actual)
        same_tool = [[e.tool == a.tool for a in actual] for e in expected]
        for i, e in enumerate(expected):
            if e.max_duration_ms is None:
                continue
            for j, a in enumerate(actual):
                if same_tool[i][j] and a.duration_ms is None:
                    raise GraderError(
                        f"expected call [{i}] {e.tool} has max_duration_ms, and the target did "
                        f"not report the duration of its call [{j}] {a.tool}; use a target that "
                        "reports tool-call durations or remove max_duration_ms"
                    )
        ok = [
            [same_tool[i][j] and not _too_slow(e, a) and _fits(e, a) for j, a in enumerate(actual)]
            for i, e in enumerate(expected)
        ]
        if self.mode == "exact":
            pairs = {i: i for i in range(min(n, m)) if ok[i][i]}
        elif self.mode == "in_order":
            pairs = _ordered_matching(ok, m)
        else:
            pairs = _max_matching(ok, m)
        return _Report(self.mode, expected, actual, pairs, same_tool).measurement()


class _Report:
    """Turns a matching into the score, the Details, hits and misses."""

    def __init__(
        self,
        mode: Mode,
        expected: Sequence[ExpectedCall],
        actual: Sequence[ToolCall],
        pairs: dict[int, int],
        same_tool: list[list[bool]],
    ) -> None:
        self.mode, self.expected, self.actual, self.pairs = mode, expected, actual, pairs
        self.same_tool = same_tool
        self.details: list[Detail] = []
        self.hits: list[str] = []
        self.misses: list[str] = []
        self.explained: set[int] = set(pairs.values())
        """Actual calls already accounted for (matched, or named as the expected call's culprit)."""

    def measurement(self) -> Measurement:
        for i, e in enumerate(self.expected):
            if i in self.pairs:
                j = self.pairs[i]
                self.hits.append(f"called {truncate(e.shown(), 60)}")
                self._add(i, e, True, self.actual[j], f"matched actual call [{j}]")
            else:
                self._unmatched(i, e)
        extras = [j for j in range(len(self.actual)) if j not in self.explained]
        if self.mode not in _EXTRAS_ALLOWED:
            for j in extras:
                call = self.actual[j]
                why = (
                    "not among the expected calls"
                    if self.mode == "subset"
                    else f"a call beyond the expected ones (mode {self.mode} allows none)"
                )
                self.misses.append(f"extra call [{j}] {call.tool}")
                self.details.append(
                    detail(
                        f"tool_trajectory.extra[{j}].{call.tool}",
                        False,
                        actual=_shown(call),
                        message=why,
                    )
                )
        n, m, matched = len(self.expected), len(self.actual), len(self.pairs)
        if self.mode == "subset":
            score = matched / m if m else 1.0
            reasoning = f"mode subset: {matched} of {m} calls made were expected"
        else:
            reasoning = f"mode {self.mode}: {matched} of {n} expected calls matched"
            if self.mode in _STRICT_MODES:
                score = matched / max(n, m) if n or m else 1.0
                reasoning += f", {m} made"
            else:
                score = matched / n if n else 1.0
                if extras:
                    reasoning += f"; {len(extras)} other call(s) allowed"
        deviates = matched < n or matched < m
        return Measurement(
            score=score,
            hits=self.hits,
            misses=self.misses,
            reasoning=reasoning,
            details=self.details,
            verdict="fail" if self.mode in _STRICT_MODES and deviates else None,
        )

    def _add(self, i: int, e: ExpectedCall, passed: bool, call: ToolCall | None, why: str) -> None:
        self.details.append(
            detail(
                f"tool_trajectory.call[{i}].{e.tool}",
                passed,
                expected=e.shown(),
                actual=None if call is None else _shown(call),
                message=truncate(why, _MESSAGE_LIMIT),
            )
        )

    def _unmatched(self, i: int, e: ExpectedCall) -> None:
        """Name why expected call `i` has no match, against the closest actual call."""
        if self.mode == "exact":
            j: int | None = i if i < len(self.actual) else None
            if j is not None and not self.same_tool[i][j]:
                call = self.actual[j]
                self.explained.add(j)
                self.misses.append(f"call [{i}] is {call.tool}, expected {e.tool}")
                self._add(i, e, False, call, f"call [{i}] is {call.tool}, expected {e.tool}")
                return
        else:
            leftovers = [
                j
                for j in range(len(self.actual))
                if self.same_tool[i][j] and j not in self.explained
            ]
            # a call with the right args explains the miss better (too slow, out of order)
            leftovers.sort(key=lambda j: (bool(_problems(e, self.actual[j])), j))
            j = leftovers[0] if leftovers else None
        if j is None:
            if self.mode == "subset":
                self._add(i, e, True, None, "not called (allowed in mode subset)")
                return
            self.misses.append(f"{e.tool} was not called")
            self._add(i, e, False, None, f"{e.tool} was not called")
            return
        call = self.actual[j]
        self.explained.add(j)
        problems = _problems(e, call)
        if problems:
            listed = "; ".join(problems)
            self.misses.append(truncate(f"{e.tool} called with other args ({listed})", 120))
            self._add(i, e, False, call, f"call [{j}] args differ: {listed}")
        elif _too_slow(e, call):
            took = f"took {call.duration_ms:g} ms, over max_duration_ms {e.max_duration_ms:g}"
            self.misses.append(f"{e.tool} {took}")
            self._add(i, e, False, call, f"call [{j}] {took}")
        else:
            self.misses.append(f"{e.tool} called out of order")
            self._add(i, e, False, call, f"call [{j}] is {e.tool}, but not in the expected order")
