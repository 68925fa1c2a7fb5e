"""Terminal rendering of a run comparison (`assay compare`): gates, statistics, changed cases."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.report import _numbers as fmt

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from assay.comparison import CaseComparison, CaseStatus, Comparison, GateState
    from assay.results import RunResult

__all__ = ["LISTED_PER_STATUS", "render_comparison"]

LISTED_PER_STATUS = 20
"""Changed cases listed per status; the rest are counted ("+ N more regressed")."""

_STATUS_STYLE: dict[CaseStatus, str] = {
    "regressed": "red",
    "improved": "green",
    "unchanged": "dim",
    "new": "cyan",
    "removed": "yellow",
}
_GATE_MARK: dict[GateState, tuple[str, str]] = {
    "ok": ("✓", "green"),
    "regression": ("✗", "bold red"),
    "not_significant": ("~ not significant", "yellow"),
    "skipped": ("—", "dim"),
}


def render_comparison(
    console: Console, result: Comparison, base: RunResult, head: RunResult
) -> None:
    """Print the comparison: the runs, the gates table, statistics, changed cases, verdict."""
    from rich.table import Table
    from rich.text import Text

    from assay.comparison import PairwiseComparison
    from assay.report._pairwise import pairwise_lines

    s, t = result.summary, result.thresholds
    for role, run in (("base", base), ("head", head)):
        console.print(
            Text(f"{role}  ", style="bold").append(
                f"{run.id}  {run.suite} → {run.target}  {run.started_at}  ({run.status})"
            )
        )
    table = Table(expand=False)
    table.add_column("")
    for name in ("base", "head", "change"):
        table.add_column(name, justify="right")
    table.add_column("allowed")
    table.add_column("gate")

    def mark(state: GateState) -> Text:
        label, style = _GATE_MARK[state]
        return Text(label, style=style)

    table.add_row(
        "pass rate",
        fmt.percent(s.base_pass_rate),
        fmt.percent(s.head_pass_rate),
        fmt.points(s.pass_rate_delta),
        f"drop ≤ {t.max_pass_rate_drop * 100:.1f} pt",
        mark(s.gates["pass_rate"]),
    )
    table.add_row(
        "average score",
        fmt.percent(s.base_avg_score),
        fmt.percent(s.head_avg_score),
        fmt.points(s.avg_score_delta),
        f"drop ≤ {t.max_avg_score_drop * 100:.1f} pt",
        mark(s.gates["avg_score"]),
    )
    table.add_row(
        "mean latency",
        fmt.latency(s.base_mean_latency_ms),
        fmt.latency(s.head_mean_latency_ms),
        "—" if s.latency_increase_pct is None else f"{s.latency_increase_pct:+.1f}%",
        f"rise ≤ {t.max_latency_increase_pct:.1f}%",
        mark(s.gates["latency"]),
    )
    table.add_row("cases", f"{s.base_cases:,}", f"{s.head_cases:,}", "", "", "")
    console.print(table)
    for line in _statistics_lines(result):
        console.print(line)
    if isinstance(result, PairwiseComparison):
        for number, text in enumerate(pairwise_lines(result.pairwise)):
            label = "pairwise    " if number == 0 else " " * 12
            console.print(Text(label, style="bold").append(text))
    counts = "  ".join(f"{n:,} {status}" for status, n in s.case_counts.items())
    console.print(
        Text("cases       ", style="bold")
        .append(counts)
        .append(f"  (a score change > {t.case_score_delta * 100:.1f} pt counts)", style="dim")
    )
    changes = _changes_table(result.cases)
    if changes is not None:
        console.print(changes)
    for note in s.notes:
        console.print(Text(f"note: {note}", style="yellow"))
    if s.regression_detected:
        console.print(Text("REGRESSION DETECTED", style="bold red"))
        for reason in s.reasons:
            console.print(Text(f"  - {reason}"))
    else:
        console.print(Text("no regression", style="bold green"))


def _statistics_lines(result: Comparison) -> tuple[Text, Text]:
    from rich.text import Text

    from assay.comparison import SIGNIFICANCE_LEVEL

    st = result.statistics
    line = Text("statistics  ", style="bold")
    if st.mean_delta_ci95 is None or st.mean_delta is None:
        line.append("no case scored in both runs: no score interval")
    else:
        lo, hi = st.mean_delta_ci95
        noise = "excludes 0" if lo > 0 or hi < 0 else "includes 0: could be noise"
        line.append(
            f"mean score change {fmt.points(st.mean_delta)}, 95% CI "
            f"[{lo * 100:+.1f}, {hi * 100:+.1f}] pt over {st.paired_cases:,} paired cases "
            f"({noise})"
        )
    flips = f"{st.pass_to_not_pass} pass→not-pass, {st.not_pass_to_pass} not-pass→pass"
    verdict = "significant" if st.mcnemar_p < SIGNIFICANCE_LEVEL else "could be noise"
    return line, Text(f"            McNemar p = {st.mcnemar_p:.4g} ({flips}: {verdict})")


def _changes_table(cases: list[CaseComparison]) -> Table | None:
    from rich.table import Table
    from rich.text import Text

    table = Table(title="Changed cases", title_justify="left", expand=False)
    table.add_column("status")
    table.add_column("case", overflow="fold")
    table.add_column("base", justify="right")
    table.add_column("head", justify="right")
    table.add_column("Δ score", justify="right")
    rows = 0
    for status in ("regressed", "improved", "new", "removed"):
        matching = [c for c in cases if c.status == status]
        for case in matching[:LISTED_PER_STATUS]:
            table.add_row(
                Text(status, style=_STATUS_STYLE[case.status]),
                Text(case.case_id),
                _verdict(case.base_verdict, case.base_score),
                _verdict(case.head_verdict, case.head_score),
                "—" if case.score_delta is None else f"{case.score_delta:+.2f}",
            )
            rows += 1
        if len(matching) > LISTED_PER_STATUS:
            more = f"+ {len(matching) - LISTED_PER_STATUS:,} more {status}"
            table.add_row(Text(more, style="dim"), "", "", "", "")
    return table if rows else None


def _verdict(verdict: str | None, score: float | None) -> str:
    return "—" if verdict is None else f"{verdict} {fmt.score(score)}"
