"""`assay compare`: diff two runs (stored, pinned or exported), show what changed, exit 1 on a
regression."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from assay.comparison import Comparison

__all__ = ["command"]


@click.command("compare")
@click.argument("base")
@click.argument("head")
@click.option(
    "--max-pass-rate-drop",
    type=click.FloatRange(0.0, 1.0),
    metavar="X",
    help="Largest tolerated pass-rate drop, 0–1 (default 0.0: any drop is a regression).",
)
@click.option(
    "--max-avg-score-drop",
    type=click.FloatRange(0.0, 1.0),
    metavar="X",
    help="Largest tolerated drop of the average case score, 0–1 (default 0.05).",
)
@click.option(
    "--max-latency-increase-pct",
    type=click.FloatRange(min=0.0),
    metavar="X",
    help="Largest tolerated growth of the mean case latency, in percent (default 20).",
)
@click.option(
    "--case-score-delta",
    type=click.FloatRange(0.0, 1.0),
    metavar="X",
    help="Score change, 0–1, that makes a case regressed or improved (default 0.05).",
)
@click.option(
    "--require-significance",
    is_flag=True,
    help="Flag the pass-rate and score gates only when the change is significant "
    "(McNemar p < 0.05; the bootstrap 95% interval of the score delta below 0).",
)
@click.option(
    "--suite",
    metavar="SUITE",
    help="Resolve `latest`, `latest~N` and `baseline` within this suite.",
)
@click.option("--db", help="Read runs from here (a SQLite path or database URL).")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@click.option(
    "--markdown",
    "as_markdown",
    is_flag=True,
    help="Print the comparison as Markdown (for a pull-request comment), warnings first.",
)
def command(
    base: str,
    head: str,
    max_pass_rate_drop: float | None,
    max_avg_score_drop: float | None,
    max_latency_increase_pct: float | None,
    case_score_delta: float | None,
    require_significance: bool,
    suite: str | None,
    db: str | None,
    as_json: bool,
    as_markdown: bool,
) -> int:
    """Compare run HEAD with run BASE: changed cases, suite-level gates, statistics.

    BASE and HEAD are run ids, unique prefixes (4+ characters) of an id or of its random
    part (`3f9a` for `20261122T054312-3f9a1c`), `latest` (the newest
    stored run, of --suite if given), `latest~N` (the N-th run before it), `baseline` (the
    pinned baseline of the other run's suite, or of --suite) or an `assay runs export` file
    (a path that exists or ends in .jsonl). `assay compare latest~1 latest` compares the last
    two runs; `assay compare baseline latest` the newest run with its suite's baseline.

    Exit code 1 when a regression is detected, 0 otherwise, 2 for an unknown run, two runs
    with no case in common, or a bad option. Warnings (other suites, different shares of
    cached cases, an unfinished run) go to stderr and the JSON's `warnings`.
    """

    from assay.api import compare_stored, is_file_ref
    from assay.cli._output import stdout_console
    from assay.comparison import CompareThresholds
    from assay.config import project_store
    from assay.report import render_comparison
    from assay.store import open_store

    if as_json and as_markdown:
        raise click.UsageError("give --json or --markdown, not both")
    thresholds = CompareThresholds.overriding(
        max_pass_rate_drop=max_pass_rate_drop,
        max_avg_score_drop=max_avg_score_drop,
        max_latency_increase_pct=max_latency_increase_pct,
        case_score_delta=case_score_delta,
    )
    # Two export files compare without a store: CI artifacts need no database.
    both_files = is_file_ref(base) and is_file_ref(head)
    store = None if both_files else open_store(db, fallback=project_store())
    try:
        result, base_run, head_run = compare_stored(
            store,
            base,
            head,
            thresholds=thresholds,
            require_significance=require_significance,
            suite=suite,
            allow_files=True,
        )
        _warn_about(result)
    finally:
        if store is not None:
            store.close()
    if as_json:
        click.echo(result.model_dump_json(indent=2))
    elif as_markdown:
        from assay.report import comparison_markdown

        click.echo(comparison_markdown(result, base_run, head_run), nl=False)
    else:
        render_comparison(stdout_console(), result, base_run, head_run)
    return 1 if result.summary.regression_detected else 0


def _warn_about(result: Comparison) -> None:
    """Comparisons that are allowed but probably not what the user meant (on stderr, so
    `--json` output stays one document; the JSON carries them as `warnings`)."""
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
