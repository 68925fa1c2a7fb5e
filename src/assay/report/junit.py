"""The JUnit XML report: one `<testsuite>` per run, one `<testcase>` per case (per sample when
the case was repeated), for CI systems that show test results (GitHub, GitLab, Jenkins).

`fail` and `borderline` verdicts are `<failure>`s carrying the score, the threshold, the misses
and the failed Details; `error` verdicts are `<error>`s. Cases are streamed: the writer reads
them twice (once to count, as `<testsuite>` states its counts up front, once to write), so its
memory does not grow with the run.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TextIO

from assay.report._escape import shorten, xml_text
from assay.report._failures import (
    Graded,
    case_error,
    case_graders,
    failed_details,
    failed_outcomes,
    score_text,
)
from assay.report._passages import passages_text
from assay.results import CaseResult, RunResult

__all__ = ["CaseSource", "render_junit", "write_junit"]

CaseSource = Callable[[], Iterable[CaseResult]]
"""Yields a run's case results, in stored order, each time it is called."""

MESSAGE_SHOWN = 500
"""Characters of the one-line `message` attribute; the element's text holds everything."""

_INDENT = "  "


@dataclass
class _Tally:
    tests: int = 0
    failures: int = 0
    errors: int = 0

    def add(self, other: _Tally) -> None:
        self.tests += other.tests
        self.failures += other.failures
        self.errors += other.errors


def _items(case: CaseResult) -> Iterator[tuple[str, Graded]]:
    """A case's testcases: the case itself, or each of its samples when it was repeated."""
    if not case.samples:
        yield case.case_id, case
        return
    for sample in case.samples:
        yield f"{case.case_id}[sample {sample.index}]", sample


def _count(cases: Iterable[CaseResult]) -> _Tally:
    tally = _Tally()
    for case in cases:
        for _, item in _items(case):
            tally.tests += 1
            tally.failures += item.verdict in ("fail", "borderline")
            tally.errors += item.verdict == "error"
    return tally


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.3f}"


def _bands(case: CaseResult) -> str:
    borderline = "" if case.borderline is None else f", borderline from {case.borderline:.2f}"
    return f"threshold {case.threshold:.2f}{borderline}"


def _indented(text: str, prefix: str) -> str:
    """Continuation lines of a multi-line value indented under its first line."""
    return text.replace("\r\n", "\n").replace("\n", "\n" + prefix)


def _body(item: Graded, case: CaseResult) -> str:
    """Everything a reader needs to see why the case did not pass, as plain text."""
    lines = [f"{item.verdict}: score {score_text(item.score)} ({_bands(case)})"]
    if item is not case:
        lines.append(
            f"one of {len(case.samples)} samples; the case: {case.verdict}, "
            f"score {score_text(case.score)}"
        )
    error = case_error(item)
    if error is not None:
        lines.append(f"error: {error.type}: {_indented(error.message, '  ')}")
    graders = list(case_graders(item))
    if graders:
        lines.append("graders:")
    for label, result in graders:
        required = ", required" if result.required else ""
        lines.append(
            f"  {result.verdict} {label} ({result.type}): score {score_text(result.score)}, "
            f"weight {result.weight:g}{required}"
        )
        if result.fallback is not None:
            lines.append(f"    fell back: {_indented(result.fallback, ' ' * 6)}")
        if result.error is not None:
            error_text = _indented(result.error.message, " " * 6)
            lines.append(f"    error: {result.error.type}: {error_text}")
        lines.extend(f"    miss: {_indented(miss, ' ' * 6)}" for miss in result.misses)
        if result.verdict != "pass" and result.reasoning:
            lines.append(f"    reasoning: {_indented(result.reasoning, ' ' * 6)}")
        failed = failed_details(result)
        for d in failed.shown:
            values = ", ".join(
                f"{name} {value}"
                for name, value in (("expected", d.expected), ("actual", d.actual))
                if value is not None
            )
            text = " — ".join(part for part in (values, d.message) if part)
            lines.append(f"    ✗ {d.check}" + (f": {_indented(text, ' ' * 6)}" if text else ""))
        if failed.more:
            lines.append(f"    + {failed.more} more failed checks")
    unmet = list(failed_outcomes(item))
    if unmet:
        lines.append("expected outcomes not met:")
    for where, outcome in unmet:
        why = f" — {_indented(outcome.justification, ' ' * 4)}" if outcome.justification else ""
        lines.append(f"  ✗ {where + ': ' if where else ''}{outcome.outcome}{why}")
    return xml_text("\n".join(lines))


def _message(item: Graded, case: CaseResult) -> str:
    error = case_error(item) if item.verdict == "error" else None
    if error is not None:
        return xml_text(shorten(error.message, MESSAGE_SHOWN))
    misses = [
        f"{label}: {miss}"
        for label, result in case_graders(item)
        if result.verdict != "pass"
        for miss in result.misses
    ]
    misses += [f"expected outcome not met: {o.outcome}" for _, o in failed_outcomes(item)]
    text = f"score {score_text(item.score)} ({_bands(case)})"
    if misses:
        text += "; " + "; ".join(misses)
    return xml_text(shorten(text, MESSAGE_SHOWN))


def _testcase(classname: str, name: str, item: Graded, case: CaseResult) -> ET.Element:
    element = ET.Element(
        "testcase",
        {"name": xml_text(name), "classname": classname, "time": _seconds(item.duration_ms)},
    )
    if item.verdict == "pass":
        return element
    if item.verdict == "error":
        error = case_error(item)
        kind = xml_text(error.type) if error is not None else "error"
        problem = ET.SubElement(element, "error", {"type": kind})
    else:
        problem = ET.SubElement(element, "failure", {"type": item.verdict})
    problem.set("message", _message(item, case))
    problem.text = _body(item, case)
    out = item.output
    if item is case and case.context:  # the retrieved passages, for a failure's context
        retrieved = "retrieved context:\n" + passages_text(case.context)
        out = retrieved if out is None else f"{out}\n\n{retrieved}"
    if out is not None:
        ET.SubElement(element, "system-out").text = xml_text(out)
    return element


def _properties(run: RunResult) -> ET.Element:
    s, cfg = run.summary, run.config
    values: list[tuple[str, object]] = [
        ("run_id", run.id),
        ("suite", run.suite),
        ("target", run.target),
        ("status", run.status),
        ("passed", run.passed),
        ("weighted_metrics_score_pct", s.weighted_metrics_score_pct),
        ("metrics_pass_threshold", cfg.metrics_pass_threshold),
        ("cases_pass_rate_pct", s.cases_pass_rate_pct),
        ("cases_pass_threshold", cfg.cases_pass_threshold),
        ("threshold", cfg.threshold),
        ("error_count", s.error_count),
        ("judge_fallback_count", s.judge_fallback_count),
    ]
    if run.regression is not None:
        values.append(("regression", run.regression.status))
        if run.regression.baseline_run_id is not None:
            values.append(("regression_baseline", run.regression.baseline_run_id))
    properties = ET.Element("properties")
    for name, value in values:
        text = str(value).lower() if isinstance(value, bool) else str(value)
        ET.SubElement(properties, "property", {"name": f"assay.{name}", "value": xml_text(text)})
    return properties


def _open_tag(element: ET.Element) -> str:
    """`<tag attr="…">` with ElementTree's escaping, for an element whose children are
    written one at a time after it."""
    closed = ET.tostring(element, encoding="unicode", short_empty_elements=False)
    return closed[: -len(f"</{element.tag}>")]


def _write_element(out: TextIO, element: ET.Element, level: int) -> None:
    ET.indent(element, space=_INDENT, level=level)
    out.write(_INDENT * level + ET.tostring(element, encoding="unicode") + "\n")


def write_junit(out: TextIO, runs: Sequence[tuple[RunResult, CaseSource]]) -> None:
    """Write one JUnit document holding every run, a `<testsuite>` each.

    Args:
        out: Where to write (a file opened for text, or stdout).
        runs: Each run with a source of its case results; every source is called twice.
    """
    tallies = [_count(source()) for _, source in runs]
    total = _Tally()
    for tally in tallies:
        total.add(tally)
    root = ET.Element(
        "testsuites",
        {
            "name": "assay",
            "tests": str(total.tests),
            "failures": str(total.failures),
            "errors": str(total.errors),
            "time": _seconds(sum(run.duration_ms for run, _ in runs)),
        },
    )
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(_open_tag(root) + "\n")
    for (run, source), tally in zip(runs, tallies, strict=True):
        name = xml_text(f"{run.suite}.{run.target}")
        suite = ET.Element(
            "testsuite",
            {
                "name": name,
                "tests": str(tally.tests),
                "failures": str(tally.failures),
                "errors": str(tally.errors),
                "skipped": "0",
                "time": _seconds(run.duration_ms),
                "timestamp": run.started_at,
                "id": run.id,
            },
        )
        out.write(_INDENT + _open_tag(suite) + "\n")
        _write_element(out, _properties(run), 2)
        for case in source():
            for case_name, item in _items(case):
                _write_element(out, _testcase(name, case_name, item, case), 2)
        out.write(f"{_INDENT}</testsuite>\n")
    out.write("</testsuites>\n")


def render_junit(runs: Sequence[tuple[RunResult, Iterable[CaseResult]]]) -> str:
    """The JUnit document of runs whose case results are at hand, as one string."""
    held = [(run, list(cases)) for run, cases in runs]
    buffer = io.StringIO()
    write_junit(buffer, [(run, _source(cases)) for run, cases in held])
    return buffer.getvalue()


def _source(cases: list[CaseResult]) -> CaseSource:
    return lambda: cases
