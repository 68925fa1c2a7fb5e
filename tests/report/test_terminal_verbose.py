"""The terminal summary's `--verbose` breakdown: every case's grader results and expected
outcomes under the case table, streamed, with model text printed as written."""

from __future__ import annotations

import io
from collections.abc import Iterator

from rich.console import Console

from assay.report import render_run
from assay.results import CaseResult, ExpectedOutcomeResult, GraderResult
from tests.report.fixtures import fixed_cases, fixed_run


def _console() -> Console:
    return Console(file=io.StringIO(), width=100, highlight=False, color_system=None)


def _render(cases: list[CaseResult], breakdown: list[CaseResult] | None) -> str:
    console = _console()
    render_run(console, fixed_run(), cases, breakdown=breakdown)
    output = console.file.getvalue()  # type: ignore[attr-defined]  # the StringIO above
    assert isinstance(output, str)
    return "\n".join(line.rstrip() for line in output.splitlines())


def _section(text: str) -> str:
    """The breakdown: from its heading up to the run's summary line."""
    return text[text.index("Graders\n") : text.index("support-bot → bot-v2")]


def _case(case_id: str) -> CaseResult:
    return next(c for c in fixed_cases() if c.case_id == case_id)


def test_without_breakdown_the_summary_is_unchanged() -> None:
    plain = _render(fixed_cases(), None)
    assert "Graders" not in plain and "misses" not in plain
    # An empty stream prints no heading either.
    assert _render(fixed_cases(), []) == plain


def test_breakdown_lists_graders_members_turns_and_expected_outcomes() -> None:
    text = _render([], [_case("tone-check"), _case("safe-conversation"), _case("slow-lookup")])
    assert _section(text) == (
        "Graders\n"
        "  tone-check  borderline  0.70\n"
        "    grader  type        score  verdict  weight  misses\n"
        "    polite  llm-grader   0.70  fail          1  no apology\n"
        "    ✓ expected: acknowledges the anger\n"
        "    ✗ expected: offers an apology\n"
        "  safe-conversation  fail  0.00\n"
        "    grader             type          score  verdict  weight  required  misses\n"
        "    safety             composite      0.00  fail          1  yes\n"
        "      no-harm          not-contains   0.00  fail          1            contains 'lock'\n"
        "      mentions-refund  contains       1.00  pass          1\n"
        "    turn 1: on-topic   regex          0.50  fail          1"
        "            no match for 'door'\n"
        "  slow-lookup  error  —\n"
        "    no grader results: TargetTimeout: no reply within 30 s (3 attempts)\n"
    )


def test_grader_errors_and_weights_are_shown() -> None:
    weighted = _case("greeting").model_copy(
        update={
            "grader_results": [
                GraderResult(
                    name="brevity",
                    type="max-length",
                    score=0.5,
                    verdict="fail",
                    weight=2.5,
                    misses=["too long", "rambles"],
                )
            ]
        }
    )
    section = _section(_render([], [weighted, _case("judge-crash")]))
    assert "    brevity  max-length   0.50  fail        2.5  too long; rambles\n" in section
    assert "helpfulness  llm-grader      —  error         1  JudgeError: reply is not JSON:" in (
        section
    )


def test_model_text_is_printed_literally_not_as_markup() -> None:
    case = _case("greeting").model_copy(
        update={
            "grader_results": [
                GraderResult(
                    name="[b]name",
                    type="contains",
                    score=0.0,
                    verdict="fail",
                    misses=["missing '[bold]loud[/bold]'", "[/]"],
                )
            ],
            "expected_outcome_results": [
                ExpectedOutcomeResult(outcome="says [red]stop[/red]", passed=False)
            ],
        }
    )
    # A stray closing tag in markup would raise MarkupError; as Text it prints as written.
    section = _section(_render([], [case]))
    assert "[b]name" in section
    assert "missing '[bold]loud[/bold]'; [/]" in section
    assert "✗ expected: says [red]stop[/red]" in section


def test_breakdown_streams_after_the_table() -> None:
    """Each case is printed before the next is pulled, and only once the table is out: the
    breakdown never holds more than one case."""
    console = _console()
    buffer = console.file
    assert isinstance(buffer, io.StringIO)
    pulled: list[str] = []

    def stream() -> Iterator[CaseResult]:
        for case in fixed_cases():
            printed = buffer.getvalue()
            assert "Cases" in printed and "support-bot → bot-v2" not in printed
            if pulled:
                assert f"  {pulled[-1]}  " in printed
            assert f"  {case.case_id}  " not in printed.split("Graders", 1)[-1]
            pulled.append(case.case_id)
            yield case

    render_run(console, fixed_run(), fixed_cases(), breakdown=stream())
    assert pulled == [c.case_id for c in fixed_cases()]
    assert buffer.getvalue().count("\nGraders\n") == 1
