"""The Markdown report of a run: for a pull-request comment and `$GITHUB_STEP_SUMMARY`.

Summary tables first (distribution, both §1.5 dimensions and the regression against their
thresholds, spend, duration), then every case that did not pass with its grader results and,
per grader, its failed Details in a collapsible `<details>` section. Every value that came from
a model or a suite goes through `assay.report._escape`, so no output can break the page.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from assay._content import readable
from assay.report._escape import fence, html_text, md_cell, md_code, md_text, shorten
from assay.report._failures import (
    case_error,
    case_graders,
    failed_details,
    failed_outcomes,
    score_text,
)
from assay.report._passages import passages_text
from assay.results import (
    CaseResult,
    GraderResult,
    RegressionResult,
    RegressionStatus,
    RunResult,
    TokenUsage,
    Verdict,
)

if TYPE_CHECKING:
    from assay.comparison import ReviewSummary

__all__ = [
    "CASES_LISTED",
    "CHARACTERS_LISTED",
    "MARKDOWN_VERDICTS",
    "markdown_chunks",
    "render_markdown",
]

MARKDOWN_VERDICTS: tuple[Verdict, ...] = ("borderline", "fail", "error")
"""The verdicts the report lists case by case: fetch only these from the store."""

CASES_LISTED = 50
"""Cases listed per run at most; past it one line counts the rest."""

CHARACTERS_LISTED = 60_000
"""Cases stop being listed when the next one would take a run's section past this many
characters: a pull-request comment holds at most 65,536."""

REGRESSED_LISTED = 10
"""Regressed cases named under the regression row, the largest drops first."""

IO_SHOWN = 1000
"""Characters of a case's input and output shown; the JSON report keeps them whole."""

MESSAGE_SHOWN = 300
"""Characters of a grader's misses or error shown in its table row."""

_MARK: dict[Verdict, str] = {"pass": "✅", "borderline": "🟡", "fail": "❌", "error": "💥"}
_REGRESSION_MARK: dict[RegressionStatus, str] = {
    "new": "➖",
    "clean": "✅",
    "warning": "⚠️",
    "critical": "❌",
}


def _pct(value: float) -> str:
    return f"{value:.1f}%"


def _points(fraction: float) -> str:
    return f"{fraction * 100:.1f}"


def _status_line(run: RunResult) -> str:
    if run.status != "completed":
        return f"⏸️ {run.status.upper()}"
    return "✅ PASSED" if run.passed else "❌ FAILED"


def _header(run: RunResult) -> Iterator[str]:
    yield f"## {_status_line(run)}: {md_text(run.suite)} → {md_text(run.target)}\n\n"
    started = run.started_at[:19].replace("T", " ")
    version = f" · assay {md_text(run.assay_version)}" if run.assay_version else ""
    yield (
        f"Run {md_code(run.id)} · {run.status} · started {started} UTC · "
        f"{run.duration_ms / 1000:.2f} s{version}\n\n"
    )
    s = run.summary
    warnings = []
    if s.error_count:
        noun = "error" if s.error_count == 1 else "errors"
        warnings.append(f"💥 **{s.error_count} {noun}: results incomplete**")
    if s.judge_fallback_count:
        checks = "judged check" if s.judge_fallback_count == 1 else "judged checks"
        warnings.append(
            f"⚠️ **{s.judge_fallback_count} {checks} fell back** (the judge could not answer; "
            "another method decided)"
        )
    if warnings:
        yield " · ".join(warnings) + "\n\n"


def _distribution(run: RunResult) -> Iterator[str]:
    s = run.summary
    yield "| Verdict | Cases | Share |\n|:--|--:|--:|\n"
    rows: tuple[tuple[Verdict, int, float], ...] = (
        ("pass", s.passed_count, s.passed_pct),
        ("borderline", s.borderline_count, s.borderline_pct),
        ("fail", s.failed_count, s.failed_pct),
        ("error", s.error_count, s.error_pct),
    )
    for verdict, count, pct in rows:
        yield f"| {_MARK[verdict]} {verdict} | {count} | {_pct(pct)} |\n"
    yield f"| **total** | **{s.total}** | |\n\n"


def _passed(ok: bool) -> str:
    return "✅ passed" if ok else "❌ failed"


def _dimensions(run: RunResult) -> Iterator[str]:
    s, cfg = run.summary, run.config
    yield "| Dimension | Measured | Needs | Result |\n|:--|--:|--:|:--|\n"
    yield (
        f"| metrics: mean case score | {_pct(s.weighted_metrics_score_pct)} | "
        f"≥ {cfg.metrics_pass_threshold * 100:.0f}% | {_passed(s.metrics_passed)} |\n"
    )
    yield (
        f"| cases: pass rate | {_pct(s.cases_pass_rate_pct)} | "
        f"≥ {cfg.cases_pass_threshold * 100:.0f}% | {_passed(s.cases_passed)} |\n"
    )
    if run.regression is not None:
        yield _regression_row(run.regression)
    yield "\n"
    if run.regression is not None:
        yield from _regressed_cases(run.regression)


def _regression_row(regression: RegressionResult) -> str:
    mark = f"{_REGRESSION_MARK[regression.status]} {regression.status}"
    if regression.baseline_run_id is None:
        return f"| regression ({regression.strategy}) | no baseline yet | | {mark} |\n"
    base, head = regression.base_score or 0.0, regression.head_score or 0.0
    delta = regression.score_delta or 0.0
    return (
        f"| regression vs {md_code(regression.baseline_run_id, table=True)} "
        f"({regression.strategy}) | {delta * 100:+.1f} pt "
        f"({_points(base)}% → {_points(head)}%) | "
        f"drop < {_points(regression.critical_threshold)} pt "
        f"(warning past {_points(regression.tolerance)} pt) | {mark} |\n"
    )


def _regressed_cases(regression: RegressionResult) -> Iterator[str]:
    counts = [f"{n} {status}" for status, n in regression.case_counts.items() if n]
    if counts:
        yield f"Cases against the baseline: {', '.join(counts)}.\n\n"
    regressed = [c for c in regression.cases if c.status == "regressed"]
    # Worst first; a case that lost its score (an error) ranks above any scored drop.
    regressed.sort(key=lambda c: -2.0 if c.score_delta is None else c.score_delta)
    if not regressed:
        return
    yield "| Regressed case | Baseline | This run | Δ score |\n|:--|:--|:--|--:|\n"
    for case in regressed[:REGRESSED_LISTED]:
        delta = "—" if case.score_delta is None else f"{case.score_delta:+.2f}"
        yield (
            f"| {md_cell(case.case_id)} | {case.base_verdict or '—'} "
            f"{score_text(case.base_score)} | {case.head_verdict or '—'} "
            f"{score_text(case.head_score)} | {delta} |\n"
        )
    if len(regressed) > REGRESSED_LISTED:
        yield f"| + {len(regressed) - REGRESSED_LISTED} more | | | |\n"
    yield "\n"


def _tokens(usage: TokenUsage | None) -> str:
    if usage is None:
        return "—"
    return f"{usage.total:,} ({usage.input:,} in, {usage.output:,} out)"


def _cost(cost: float | None) -> str:
    return "—" if cost is None else f"${cost:.4f}"


def _reviewed(reviews: ReviewSummary | None) -> Iterator[str]:
    """People's verdicts beside the machine's: reviewed counts and the reviewed pass rate."""
    if reviews is None or not reviews.reviewed:
        return
    rate = reviews.reviewed_pass_rate
    shown = "—" if rate is None else _pct(rate * 100)
    yield (
        f"**Human review:** {reviews.reviewed} of {reviews.cases} cases reviewed, "
        f"{reviews.human_passed} passed by people, the machine agreed on {reviews.agreed}; "
        f"reviewed pass rate {shown} (reviewed cases by the person's verdict).\n\n"
    )


def _spend(run: RunResult) -> Iterator[str]:
    s = run.summary
    judge = "judge"
    if s.judge_calls:
        failed = f", {s.judge_error_rate:.1%} failed" if s.judge_error_rate else ""
        fell = f", {s.judge_fallback_count} fell back" if s.judge_fallback_count else ""
        judge = f"judge ({s.judge_calls} calls{failed}{fell})"
    known = (run.token_usage, run.cost_usd, s.judge_token_usage, s.judge_cost_usd)
    if all(value is None for value in known) and not s.judge_calls:
        yield "No tokens or cost were reported.\n\n"
        return
    yield "| Spend | Tokens | Cost |\n|:--|--:|--:|\n"
    yield f"| target | {_tokens(run.token_usage)} | {_cost(run.cost_usd)} |\n"
    yield f"| {judge} | {_tokens(s.judge_token_usage)} | {_cost(s.judge_cost_usd)} |\n\n"


def _case_heading(case: CaseResult) -> str:
    bands = f"threshold {case.threshold:.2f}"
    if case.score_ci95 is not None:
        bands += f", 95% CI {case.score_ci95[0]:.2f}–{case.score_ci95[1]:.2f}"
    return (
        f"#### {_MARK[case.verdict]} {md_code(case.case_id)}: {case.verdict}, "
        f"score {score_text(case.score)} ({bands})\n\n"
    )


def _io(case: CaseResult) -> Iterator[str]:
    parts = []
    if case.input is not None:
        text = case.input if isinstance(case.input, str) else _json(readable(case.input))
        parts.append(("input", text))
    if case.output is not None:
        parts.append(("output", case.output))
    if case.context:
        parts.append(("retrieved context", passages_text(case.context)))
    if not parts:
        return
    shown = [name for name, _ in parts]
    names = ", ".join(shown[:-1]) + " and " + shown[-1] if len(shown) > 1 else shown[0]
    yield f"<details><summary>{names}</summary>\n\n"
    for name, text in parts:
        yield f"**{name}**\n\n{fence(shorten(text, IO_SHOWN))}\n\n"
    yield "</details>\n\n"


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def _grader_note(result: GraderResult) -> str:
    notes = [f"fell back: {result.fallback}"] if result.fallback is not None else []
    if result.error is not None:
        error = f"{result.error.type}: {result.error.message}"
        if not (result.fallback or "").endswith(error):  # outcomes → score already ends with it
            notes.append(error)
    else:
        notes.extend(result.misses)
    return "; ".join(notes)


def _graders(case: CaseResult) -> Iterator[str]:
    graders = list(case_graders(case))
    if not graders:
        return
    yield "| Grader | Type | Score | Verdict | Misses |\n|:--|:--|--:|:--|:--|\n"
    for label, result in graders:
        yield (
            f"| {md_cell(label)} | {md_cell(result.type)} | {score_text(result.score)} | "
            f"{_MARK[result.verdict]} {result.verdict} | "
            f"{md_cell(shorten(_grader_note(result), MESSAGE_SHOWN))} |\n"
        )
    yield "\n"
    for label, result in graders:
        yield from _grader_details(label, result)


def _grader_details(label: str, result: GraderResult) -> Iterator[str]:
    """A collapsible section per grader with failed Details or a judge's reasoning."""
    failed = failed_details(result)
    reasoning = result.reasoning if result.verdict != "pass" else ""
    if not failed.total and not reasoning:
        return
    count = f": {failed.total} failed check{'s' if failed.total != 1 else ''}"
    yield (
        f"<details><summary>{_MARK[result.verdict]} <code>{html_text(label)}</code>"
        f"{count if failed.total else ''}</summary>\n\n"
    )
    if reasoning:
        yield f"{md_text(shorten(reasoning, IO_SHOWN))}\n\n"
    if failed.total:
        yield "| Check | Expected | Actual | Message |\n|:--|:--|:--|:--|\n"
        for d in failed.shown:
            yield (
                f"| {md_cell(d.check)} | {md_cell(d.expected or '')} | "
                f"{md_cell(d.actual or '')} | {md_cell(d.message)} |\n"
            )
        if failed.more:
            yield f"| + {failed.more} more | | | |\n"
        yield "\n"
    yield "</details>\n\n"


def _outcomes(case: CaseResult) -> Iterator[str]:
    unmet = list(failed_outcomes(case))
    if not unmet:
        return
    yield "Expected outcomes not met:\n\n"
    for where, outcome in unmet:
        prefix = f"{where}: " if where else ""
        why = f" — {md_text(outcome.justification)}" if outcome.justification else ""
        yield f"- ❌ {prefix}{md_text(outcome.outcome)}{why}\n"
    yield "\n"


def _samples(case: CaseResult) -> Iterator[str]:
    if not case.samples:
        return
    listed = ", ".join(f"#{s.index} {_MARK[s.verdict]} {score_text(s.score)}" for s in case.samples)
    yield f"Samples ({len(case.samples)}): {listed}\n\n"


def _case(case: CaseResult) -> Iterator[str]:
    yield _case_heading(case)
    error = case_error(case) if case.verdict == "error" else None
    if error is not None:
        yield f"**Error** {md_code(error.type)}: {md_text(shorten(error.message, IO_SHOWN))}\n\n"
    yield from _samples(case)
    yield from _io(case)
    yield from _graders(case)
    yield from _outcomes(case)


def markdown_chunks(
    run: RunResult,
    cases: Iterable[CaseResult],
    *,
    max_cases: int = CASES_LISTED,
    max_chars: int = CHARACTERS_LISTED,
    reviews: ReviewSummary | None = None,
) -> Iterator[str]:
    """The report of one run, piece by piece, so a caller can stream it to a file.

    Args:
        run: The run (its summary, config and regression; `results` is not read).
        cases: Its case results in stored order; passing ones are skipped, so a caller may
            pass only `MARKDOWN_VERDICTS` from the store.
        max_cases: Cases listed before one line counts the rest.
        max_chars: Cases stop being listed when the next would take the section past this
            (the first is always listed).
        reviews: How people reviewed the run's cases (SPEC §6), shown beside the machine's
            figures; None when nobody reviewed any.
    """
    head = "".join(
        [*_header(run), *_distribution(run), *_dimensions(run), *_reviewed(reviews), *_spend(run)]
    )
    yield head
    s = run.summary
    not_passed = s.borderline_count + s.failed_count + s.error_count
    if not not_passed:
        return
    title = f"### Cases that did not pass ({not_passed} of {s.total})\n\n"
    yield title
    size = len(head) + len(title)
    listed = 0
    for case in cases:
        if case.verdict == "pass":
            continue
        if listed == max_cases:
            break
        text = "".join(_case(case))
        if listed and size + len(text) > max_chars:
            break
        yield text
        size += len(text)
        listed += 1
    if not_passed > listed:
        yield (
            f"… and {not_passed - listed} more. Every case is in the JUnit and JSON reports: "
            f"`assay report {run.id} --format junit`.\n\n"
        )


def render_markdown(
    run: RunResult,
    cases: Iterable[CaseResult],
    *,
    max_cases: int = CASES_LISTED,
    max_chars: int = CHARACTERS_LISTED,
) -> str:
    """The report of one run as one string (see `markdown_chunks`)."""
    return "".join(markdown_chunks(run, cases, max_cases=max_cases, max_chars=max_chars))
