"""The terminal summary of a run (rich): distribution, both dimensions, the cases that matter."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from assay.results import (
    CaseResult,
    ExpectedOutcomeResult,
    GraderResult,
    RegressionResult,
    RegressionStatus,
    RunResult,
    RunSummary,
    Verdict,
)
from assay.scoring import case_fallbacks

__all__ = ["VERDICT_STYLE", "listed_verdicts", "render_run"]

VERDICT_STYLE: dict[Verdict, str] = {
    "pass": "green",
    "borderline": "yellow",
    "fail": "red",
    "error": "magenta",
}

ALL_CASES_UP_TO = 50
"""Runs with at most this many cases list every case; larger runs list only non-passing ones."""

REGRESSED_LISTED = 5
"""Regressed cases named on the regression line, the largest score drops first."""

_REGRESSION_MARK: dict[RegressionStatus, tuple[str, str]] = {
    "new": ("—", "cyan"),
    "clean": ("✓", "green"),
    "warning": ("!", "yellow"),
    "critical": ("✗", "red"),
}


def listed_verdicts(summary: RunSummary) -> tuple[Verdict, ...] | None:
    """The verdicts `render_run` lists for a run with this summary (None: every case), so a
    caller fetches only those from the store, and nothing at all when the tuple is empty."""
    if summary.total <= ALL_CASES_UP_TO:
        return None
    counts: dict[Verdict, int] = {
        "borderline": summary.borderline_count,
        "fail": summary.failed_count,
        "error": summary.error_count,
    }
    return tuple(verdict for verdict, count in counts.items() if count)


def _score(score: float | None) -> str:
    return "—" if score is None else f"{score:.2f}"


def _why(case: CaseResult) -> str:
    if case.error is not None:
        return f"{case.error.type}: {case.error.message}"
    misses = [
        f"{g.name}: {m}" for g in case.grader_results if g.verdict == "fail" for m in g.misses
    ]
    if not misses:
        misses = [
            f"{g.name} scored {_score(g.score)}" for g in case.grader_results if g.verdict == "fail"
        ]
    return "; ".join(misses[:3]) + (f" (+{len(misses) - 3} more)" if len(misses) > 3 else "")


def _fallback_note(case: CaseResult) -> str:
    """Which graders' judged checks fell back, for the case table."""
    found = case_fallbacks(case)
    if not found:
        return ""
    named = dict.fromkeys(f"{f.grader}" + (f" ({f.where})" if f.where else "") for f in found)
    return "judge fell back: " + ", ".join(named)


def _in_suite_order(
    cases: Iterable[CaseResult], order: Iterable[str] | None, keep: int
) -> tuple[list[CaseResult], int]:
    """The first `keep` cases in suite order (cases the order does not name last, as they
    came) and how many more there were. Only `keep` cases are held, however many stream by,
    and `order` is read only when there is a case to place."""
    stream = iter(cases)
    first = next(stream, None)
    if first is None:
        return [], 0
    position = {case_id: i for i, case_id in enumerate(order or ())}
    unknown = len(position)
    counter = itertools.count()
    keyed = (
        (position.get(c.case_id, unknown), next(counter), c)
        for c in itertools.chain((first,), stream)
    )
    total = 0

    def counted() -> Iterable[tuple[int, int, CaseResult]]:
        nonlocal total
        for item in keyed:
            total += 1
            yield item

    kept = heapq.nsmallest(keep, counted(), key=lambda item: (item[0], item[1]))
    return [case for _, _, case in kept], total - len(kept)


def _case_table(
    cases: Iterable[CaseResult], total: int, order: Iterable[str] | None
) -> Table | None:
    table = Table(title="Cases", title_justify="left", expand=False)
    table.add_column("case", overflow="fold")
    table.add_column("verdict")
    table.add_column("score", justify="right")
    table.add_column("threshold", justify="right")
    table.add_column("why", overflow="fold", max_width=70)
    listed = (c for c in cases if total <= ALL_CASES_UP_TO or c.verdict != "pass")
    shown, hidden = _in_suite_order(listed, order, ALL_CASES_UP_TO)
    for case in shown:
        style = VERDICT_STYLE[case.verdict]
        why = "" if case.verdict == "pass" else _why(case)
        note = _fallback_note(case)
        table.add_row(
            Text(case.case_id),
            Text(case.verdict, style=style),
            _score(case.score),
            f"{case.threshold:.2f}",
            Text("; ".join(filter(None, (why, note)))),
        )
    if hidden:
        table.caption = f"… and {hidden} more non-passing cases"
    return table if shown else None


def _any_required(results: list[GraderResult]) -> bool:
    return any(r.required or _any_required(r.children) for r in results)


def _grader_rows(
    table: Table, results: list[GraderResult], prefix: str, depth: int, required: bool
) -> None:
    """One row per grader result (a `required` cell when the table has that column); a
    composite's members follow it, indented."""
    for result in results:
        misses = list(result.misses)
        error = None if result.error is None else f"{result.error.type}: {result.error.message}"
        if error is not None and not (result.fallback or "").endswith(error):
            misses.insert(0, error)  # an expected outcomes fallback already ends with it
        if result.fallback is not None:
            misses.insert(0, f"fell back: {result.fallback}")
        cells: list[Text | str] = [
            Text("  " * depth + prefix + result.name),
            Text(result.type, style="dim"),
            _score(result.score),
            Text(result.verdict, style=VERDICT_STYLE[result.verdict]),
            f"{result.weight:g}",
            Text("; ".join(misses)),
        ]
        if required:
            cells.insert(5, "yes" if result.required else "")
        table.add_row(*cells)
        _grader_rows(table, result.children, "", depth + 1, required)


def _outcome_lines(outcomes: list[ExpectedOutcomeResult], prefix: str) -> list[Text]:
    return [
        Text("    ")
        .append("✓" if o.passed else "✗", style="green" if o.passed else "red")
        .append(f" {prefix}expected: {o.outcome}")
        for o in outcomes
    ]


def _print_breakdown(console: Console, case: CaseResult) -> None:
    """A case's grader results (a row each) and its expected outcomes (✓/✗ a line each).

    Model and grader text goes in as `Text`, never as markup: a miss quoting "[bold]" prints
    as written.
    """
    console.print(
        Text("  ")
        .append(case.case_id, style="bold")
        .append("  ")
        .append(case.verdict, style=VERDICT_STYLE[case.verdict])
        .append(f"  {_score(case.score)}")
    )
    groups = [("", case.grader_results)]
    simulated = bool(case.turns) and case.turns[-1].stop_reason is not None
    label = "turn {} stop_when: " if simulated else "turn {}: "  # a stop check, not a grade
    groups += [(label.format(t.index), t.grader_results) for t in case.turns]
    required = any(_any_required(results) for _, results in groups)
    columns = ["grader", "type", "score", "verdict", "weight"]
    columns += ["required", "misses"] if required else ["misses"]
    table = Table(box=None, show_header=True, header_style="dim", pad_edge=False)
    for column in columns:
        right = column in ("score", "weight")
        table.add_column(column, justify="right" if right else "left", overflow="fold")
    for prefix, results in groups:
        _grader_rows(table, results, prefix, 0, required)
    if table.row_count:
        console.print(Padding(table, (0, 0, 0, 4), expand=False))
    lines = _outcome_lines(case.expected_outcome_results, "")
    for turn in case.turns:
        lines += _outcome_lines(turn.expected_outcome_results, f"turn {turn.index} ")
    ended = case.turns[-1] if case.turns else None
    if ended is not None and ended.stop_reason is not None:
        detail = f" ({ended.stop_detail})" if ended.stop_detail else ""
        lines.append(
            Text(f"    conversation ended after {len(case.turns)} turns: ", style="dim")
            .append(ended.stop_reason)
            .append(detail)
        )
    for line in lines:
        console.print(line)
    if not table.row_count and not lines:
        reason = "" if case.error is None else f": {case.error.type}: {case.error.message}"
        console.print(Text(f"    no grader results{reason}", style="dim"))


def _points(fraction: float) -> str:
    return f"{fraction * 100:.1f}"


def _regression_lines(regression: RegressionResult) -> list[Text]:
    """The run against its baseline: status and score change, case counts, worst cases."""
    label, style = _REGRESSION_MARK[regression.status]
    line = (
        Text("  regression ")
        .append(label, style=style)
        .append(f" {regression.status}", style=f"bold {style}")
    )
    if regression.baseline_run_id is None:
        where = {
            "last_passing": "no earlier passing run of this suite and target",
            "pinned": "no baseline pinned for this suite (assay baseline pin RUN_ID)",
            "run": "no baseline run",
        }[regression.strategy]
        return [line.append(f": {where}")]
    base, head = regression.base_score or 0.0, regression.head_score or 0.0
    delta = regression.score_delta or 0.0
    line.append(
        f": mean score {delta * 100:+.1f} pt ({_points(base)}% → {_points(head)}%) "
        f"vs {regression.baseline_run_id} ({regression.strategy})"
    )
    counts = [f"{n} {status}" for status, n in regression.case_counts.items() if n]
    bounds = (
        f"warning past {_points(regression.tolerance)} pt, "
        f"critical from {_points(regression.critical_threshold)} pt"
    )
    lines = [line, Text("    " + "; ".join(filter(None, (", ".join(counts), bounds))), style="dim")]
    regressed = [c for c in regression.cases if c.status == "regressed"]
    # Worst first; a case that lost its score (an error) ranks above any scored drop.
    regressed.sort(key=lambda c: -2.0 if c.score_delta is None else c.score_delta)
    if regressed:
        named = ", ".join(
            f"{c.case_id} ({c.base_verdict} {_score(c.base_score)} → "
            f"{c.head_verdict} {_score(c.head_score)})"
            for c in regressed[:REGRESSED_LISTED]
        )
        more = len(regressed) - REGRESSED_LISTED
        lines.append(
            Text(f"    regressed: {named}" + (f" (+{more} more)" if more > 0 else ""), style="red")
        )
    return lines


def render_run(
    console: Console,
    run: RunResult,
    cases: Iterable[CaseResult],
    *,
    breakdown: Iterable[CaseResult] | None = None,
    order: Iterable[str] | None = None,
) -> None:
    """Print a run's summary: the case table, distribution, both dimensions, the regression
    against the baseline (when measured), the verdict.

    Args:
        console: Where to print.
        run: The run (without its results).
        cases: Its case results in stored order: those `listed_verdicts` names suffice.
        breakdown: With `--verbose`, the cases whose grader results and expected outcomes to
            list under the table (every case, streamed: a second pass over the store, so
            memory stays flat); None lists none.
        order: The suite's case ids in suite order, read only when a case is listed: the
            table follows it (None: stored order, the order the cases finished in).
    """
    s, cfg = run.summary, run.config
    table = _case_table(cases, s.total, order)
    if table is not None:
        console.print(table)
    if breakdown is not None:
        heading = False
        for case in breakdown:
            if not heading:
                console.print(Text("Graders", style="italic"))
                heading = True
            _print_breakdown(console, case)
    rows: tuple[tuple[int, str, float, Verdict], ...] = (
        (s.passed_count, "passed", s.passed_pct, "pass"),
        (s.borderline_count, "borderline", s.borderline_pct, "borderline"),
        (s.failed_count, "failed", s.failed_pct, "fail"),
        (s.error_count, "error" if s.error_count == 1 else "errors", s.error_pct, "error"),
    )
    parts = [Text(f"{n} {label} ({pct:.0f}%)", style=VERDICT_STYLE[v]) for n, label, pct, v in rows]
    console.print(Text(f"{run.suite} → {run.target}: {s.total} cases", style="bold"))
    console.print(Text("  ").append(Text("  ").join(parts)))

    def mark(ok: bool) -> Text:
        return Text("✓", style="green") if ok else Text("✗", style="red")

    console.print(
        Text("  metrics ")
        .append(mark(s.metrics_passed))
        .append(
            f" mean score {s.weighted_metrics_score_pct:.1f}% "
            f"(needs ≥ {cfg.metrics_pass_threshold * 100:.0f}%)"
        )
    )
    console.print(
        Text("  cases   ")
        .append(mark(s.cases_passed))
        .append(
            f" pass rate {s.cases_pass_rate_pct:.1f}% "
            f"(needs ≥ {cfg.cases_pass_threshold * 100:.0f}%)"
        )
    )
    extras = [f"{run.duration_ms / 1000:.2f}s"]
    if run.token_usage is not None:
        extras.append(f"target {run.token_usage.total} tokens")
    if run.cost_usd is not None:
        extras.append(f"target ${run.cost_usd:.4f}")
    if s.judge_calls:
        failed = f", {s.judge_error_rate:.0%} failed" if s.judge_error_rate else ""
        extras.append(f"{s.judge_calls} judge calls{failed}")
    if s.judge_token_usage is not None:
        extras.append(f"judge {s.judge_token_usage.total} tokens")
    if s.judge_cost_usd is not None:
        extras.append(f"judge ${s.judge_cost_usd:.4f}")
    if s.judge_fallback_count:
        console.print(_fallback_line(s.judge_fallback_count))
    if run.regression is not None:
        for line in _regression_lines(run.regression):
            console.print(line)
    console.print(f"  run {run.id}  ({', '.join(extras)})", style="dim")
    console.print(_result_line(run))


def _result_line(run: RunResult) -> Text:
    """The run's verdict, and that its results are incomplete when cases errored."""
    verdict = Text("PASSED", style="bold green") if run.passed else Text("FAILED", style="bold red")
    if run.status != "completed":
        verdict = Text(run.status.upper(), style="bold magenta")
    line = Text("  result  ").append(verdict)
    errors = run.summary.error_count
    if errors:
        noun = "error" if errors == 1 else "errors"
        line.append(f"  {errors} {noun}: results incomplete", style="magenta")
    return line


def _fallback_line(count: int) -> Text:
    checks = "judged check" if count == 1 else "judged checks"
    return Text(
        f"  judge   ! {count} {checks} fell back (the judge could not answer; another "
        "method decided): see the cases' graders",
        style="yellow",
    )
