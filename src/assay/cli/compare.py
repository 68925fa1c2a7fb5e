"""`assay compare`: diff two runs (stored, pinned or exported), show what changed, exit 1 on a
regression."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from assay.comparison import Comparison, PairwiseResult
    from assay.results import JSON, RunResult
    from assay.store import Store

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
@click.option(
    "--pairwise",
    is_flag=True,
    help="Also ask the judge which output is better, for every case both runs answered: "
    "twice, positions swapped (2 judge calls per case); reports the head's win rate.",
)
@click.option(
    "--judge-model",
    metavar="MODEL",
    help="With --pairwise: the judge model (over the head run's judge, assay.yaml and "
    "ASSAY_JUDGE_MODEL).",
)
@click.option(
    "--judge-base-url",
    metavar="URL",
    help="With --pairwise: the judge endpoint, e.g. http://localhost:11434/v1 (over "
    "ASSAY_JUDGE_BASE_URL).",
)
@click.option(
    "--judge-concurrency",
    type=click.IntRange(1, 4096),
    help="With --pairwise: judge calls run at once (default: the head run's, else 8).",
)
@click.option(
    "--no-cache", is_flag=True, help="With --pairwise: neither read nor write the response cache."
)
@click.option(
    "--cache-mode",
    type=click.Choice(["use", "record", "replay"]),
    default="use",
    show_default=True,
    help="With --pairwise: use: read and fill; record: always call and refresh; replay: fail "
    "on a miss.",
)
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
    pairwise: bool,
    judge_model: str | None,
    judge_base_url: str | None,
    judge_concurrency: int | None,
    no_cache: bool,
    cache_mode: str,
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

    With --pairwise the judge also compares the two outputs of every case both runs answered,
    once in each order; a preference that survives the swap is a win or a loss for HEAD, any
    other answer a tie. The report adds HEAD's win rate (ties count half) with its Wilson 95%
    interval and how often the judge's answer followed the position. It never changes the
    exit code. The judge is the head run's (else assay.yaml's) unless --judge-model or
    ASSAY_JUDGE_MODEL name another; the run's own endpoint is only used when given again.
    """

    from assay.api import compare_stored, is_file_ref
    from assay.cli._output import stdout_console
    from assay.comparison import CompareThresholds
    from assay.config import project_store
    from assay.report import render_comparison
    from assay.store import open_store

    if as_json and as_markdown:
        raise click.UsageError("give --json or --markdown, not both")
    if not pairwise:
        given = {
            "--judge-model": judge_model,
            "--judge-base-url": judge_base_url,
            "--judge-concurrency": judge_concurrency,
            "--no-cache": no_cache or None,
            "--cache-mode": None if cache_mode == "use" else cache_mode,
        }
        named = [flag for flag, value in given.items() if value is not None]
        if named:
            raise click.UsageError(f"{', '.join(named)} only apply with --pairwise")
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
        if pairwise:
            from assay.api import read_export
            from assay.comparison import PairwiseComparison

            snapshot = (
                read_export(Path(head))[1] if is_file_ref(head) else _snapshot(store, head_run)
            )
            judged = _judge(
                store,
                base_run,
                head_run,
                snapshot,
                judge_model=judge_model,
                judge_base_url=judge_base_url,
                judge_concurrency=judge_concurrency,
                cache_mode="off" if no_cache else cache_mode,
            )
            _warn_about_pairwise(judged)
            result = PairwiseComparison.model_construct(**dict(result), pairwise=judged)
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


def _snapshot(store: Store | None, run: RunResult) -> dict[str, JSON]:
    assert store is not None  # a run not read from a file is a stored one
    return store.get_snapshot(run.id)


def _judge(
    store: Store | None,
    base: RunResult,
    head: RunResult,
    snapshot: dict[str, JSON],
    *,
    judge_model: str | None,
    judge_base_url: str | None,
    judge_concurrency: int | None,
    cache_mode: str,
) -> PairwiseResult:
    """The pairwise judging of the two runs, with the judge the options and configs name."""
    from assay.api import (
        case_metadata,
        judge_pairwise,
        open_cache,
        pairwise_judge,
        run_judge_concurrency,
    )
    from assay.cache import CacheMode
    from assay.config import load_project

    spec = pairwise_judge(
        snapshot.get("judge"),
        project=load_project().config.judge,
        judge_model=judge_model,
        judge_base_url=judge_base_url,
        run_id=head.id,
    )
    metadata = case_metadata(snapshot) if spec.resolved_provider == "fake" else None
    cache = open_cache(CacheMode(cache_mode))
    try:
        return judge_pairwise(
            store,
            base,
            head,
            spec,
            concurrency=judge_concurrency or run_judge_concurrency(snapshot),
            cache=cache,
            metadata=metadata,
        )
    finally:
        if cache is not None:
            cache.close()


def _warn_about_pairwise(judged: PairwiseResult) -> None:
    """Cases the judge could not compare, on stderr (the JSON has each case's `error`)."""
    if not judged.paired_cases:
        click.echo("warning: pairwise: no case has an output in both runs", err=True)
    if judged.errors:
        first = next(c for c in judged.cases if c.error is not None)
        click.echo(
            f"warning: pairwise: {judged.errors} of {judged.paired_cases} paired cases could "
            f"not be judged (case {first.case_id}: {first.error})",
            err=True,
        )


def _warn_about(result: Comparison) -> None:
    """Comparisons that are allowed but probably not what the user meant (on stderr, so
    `--json` output stays one document; the JSON carries them as `warnings`)."""
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
