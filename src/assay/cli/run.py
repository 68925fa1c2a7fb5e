"""`assay run`: run suites against their targets, store the runs, report, exit 0/1."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import shlex
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Literal

import click

if TYPE_CHECKING:
    import subprocess

    from rich.console import Console

    from assay.results import RunResult, RunSummary
    from assay.runner import RayOptions, RunPlan
    from assay.store import Store

__all__ = ["command"]


@click.command("run")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--threshold",
    type=click.FloatRange(0.0, 1.0),
    help="Case pass threshold (0–1); wins over every config file and every test.",
)
@click.option(
    "--borderline",
    callback=lambda ctx, param, value: _borderline(value),
    metavar="BOUND|off",
    help="Lower bound (0–1) of the borderline band, or `off`; wins over every config file and "
    "every test, like --threshold.",
)
@click.option("--concurrency", type=click.IntRange(1, 4096), help="Target calls run at once.")
@click.option(
    "--judge-concurrency",
    type=click.IntRange(1, 4096),
    help="Judge calls run at once (over the suite's execution.judge_concurrency).",
)
@click.option(
    "--target",
    "targets",
    multiple=True,
    help="Run against this named target instead of the suite's; repeat for a matrix.",
)
@click.option("--repeat", type=click.IntRange(1, 1000), help="Samples per case.")
@click.option("--tag", "tags", multiple=True, help="Run only cases with this tag (repeatable).")
@click.option("--exclude-tag", "exclude_tags", multiple=True, help="Skip cases with this tag.")
@click.option("--case", "cases", multiple=True, help="Run only cases whose id matches this glob.")
@click.option(
    "--resume",
    "resume",
    metavar="RUN_ID",
    help="Complete an interrupted run from its suite file, which must be unchanged (give the "
    "file when it is not the path the run recorded).",
)
@click.option(
    "--takeover",
    is_flag=True,
    help="With --resume: complete a run still marked running whose process assay cannot look "
    "up (it ran on another host, or before assay recorded it); a killed process on this host "
    "needs no --takeover. Never while another process runs it.",
)
@click.option(
    "--keep-workspaces",
    type=click.Choice(["never", "on_failure", "always"]),
    help="Keep case workspaces (the suite's `workspace:`) after their case: on_failure keeps "
    "those of cases that did not pass, to look into; over the suite's workspace.keep.",
)
@click.option("--db", help="Store runs here (a SQLite path or database URL).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the response cache.")
@click.option(
    "--cache-mode",
    type=click.Choice(["use", "record", "replay"]),
    default="use",
    show_default=True,
    help="use: read and fill; record: always call and refresh; replay: fail on a miss.",
)
@click.option(
    "--judge-model",
    metavar="MODEL",
    help="Judge model of every judged grader (over suite, project and ASSAY_JUDGE_MODEL).",
)
@click.option(
    "--judge-base-url",
    metavar="URL",
    help="Judge endpoint, e.g. http://localhost:11434/v1 (over ASSAY_JUDGE_BASE_URL).",
)
@click.option(
    "--baseline",
    metavar="last_passing|pinned|RUN_ID",
    help="Measure each run against this baseline (over the suite's `regression:` block); "
    "a critical score drop fails the run.",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Where cases run: this process, or the workers of a Ray cluster (needs assay[ray]; "
    "see docs/ray.md).",
)
@click.option(
    "--ray-address",
    metavar="HOST:PORT",
    help="The Ray cluster's head (with --executor ray); default: RAY_ADDRESS, else a local "
    "Ray for this run.",
)
@click.option(
    "--ray-workers",
    type=click.IntRange(1, 4096),
    help="Ray worker actors, one CPU each (with --executor ray); default: one per cluster CPU.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the run result (SPEC §8) as JSON.")
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Under the case table, list every case's grader results and expected outcomes.",
)
@click.option(
    "--report",
    "reports",
    multiple=True,
    metavar="FORMAT:PATH",
    help="Also write a report of the runs (md, junit, json, html or a plugin's format), e.g. "
    "junit:assay.xml; repeatable.",
)
def command(
    paths: tuple[str, ...],
    threshold: float | None,
    borderline: float | Literal["off"] | None,
    concurrency: int | None,
    judge_concurrency: int | None,
    targets: tuple[str, ...],
    repeat: int | None,
    tags: tuple[str, ...],
    exclude_tags: tuple[str, ...],
    cases: tuple[str, ...],
    resume: str | None,
    takeover: bool,
    keep_workspaces: Literal["never", "on_failure", "always"] | None,
    db: str | None,
    no_cache: bool,
    cache_mode: str,
    judge_model: str | None,
    judge_base_url: str | None,
    baseline: str | None,
    executor: str,
    ray_address: str | None,
    ray_workers: int | None,
    as_json: bool,
    verbose: bool,
    reports: tuple[str, ...],
) -> int:
    """Run eval suites (files, or directories searched for *.eval.yaml) and report the results.

    Exit code 0 when every run passes, 1 when any fails (a critical regression against its
    baseline included), 2 for a configuration error, 130 when interrupted (finished cases are
    kept; complete the run with --resume RUN_ID).
    """
    from assay.cli._process import freeze_heap, long_lived_heap, long_lived_imports

    writer = _start_writer_early(resume)
    with long_lived_imports():
        from rich.console import Console

        from assay.api import open_cache, prepare_resume, run_plan
        from assay.cache import CacheMode
        from assay.cli._output import print_warnings, stdout_console
        from assay.cli._progress import RunProgress
        from assay.cli._reports import parse_reports, write_reports
        from assay.config import discover_suite_files, load_project, load_suite
        from assay.runner import RunOptions, check_baseline, new_run_id, plan_run
        from assay.store import DeferredStore

    _check_options(paths, resume, baseline, threshold, borderline, takeover)
    resume_suite, paths = (paths[0] if paths else None, ()) if resume else (None, paths)
    ray = _ray_options(executor, ray_address, ray_workers)
    report_requests = parse_reports(reports)
    project = load_project()
    print_warnings(project.warnings)
    suites = [load_suite(path) for path in discover_suite_files(paths)]
    for loaded in suites:
        print_warnings(loaded.warnings)
    base = RunOptions(
        threshold=threshold,
        borderline=borderline,
        concurrency=concurrency,
        judge_concurrency=judge_concurrency,
        repeat=repeat,
        tags=tags,
        exclude_tags=exclude_tags,
        cases=cases,
        judge_model=judge_model,
        judge_base_url=judge_base_url,
        baseline=baseline,
        keep_workspaces=keep_workspaces,
    )
    plans = [  # every suite × target is planned, so every error shows before any run
        plan_run(loaded, project, dataclasses.replace(base, target=target))
        for loaded in suites
        for target in (targets or (None,))
    ]
    out, err = stdout_console(), Console(stderr=True, highlight=False)
    cache = open_cache(CacheMode.OFF if no_cache else CacheMode(cache_mode))
    # The run creates, fills and finishes itself through `writer`: it never opens the store
    # here unless it reads runs too (a baseline, a report).
    store = DeferredStore(db, fallback=project.store, writer_process=writer)
    runs: list[RunResult] = []
    orders: list[Iterable[str]] = []  # each run's case ids in suite order, for its table
    try:
        for plan in plans:  # an unknown baseline stops every run, not only its own
            check_baseline(plan, store)
        again = _resume_options(db, no_cache, cache_mode, executor, ray_address, ray_workers)
        if resume:
            plan, state = prepare_resume(
                store,
                resume,
                suite=resume_suite,
                project=project,
                judge_base_url=judge_base_url,
                takeover=takeover,
            )
            done, counts = _stored_counts(state.run.summary)
            with (
                _say_how_to_resume(err, store, state.run.id, len(plan.cases), again),
                RunProgress(err, plan.suite_name, len(plan.cases), done, counts) as progress,
                long_lived_heap(),
            ):
                run = asyncio.run(
                    run_plan(
                        plan,
                        store,
                        on_case=progress.advance,
                        cache=cache,
                        resume=state,
                        ray=ray,
                        on_set_up=freeze_heap,
                    )
                )
            runs.append(run)
            orders.append(_suite_order(plan))
        for plan in plans:
            run_id = new_run_id()
            with (
                _say_how_to_resume(err, store, run_id, len(plan.cases), again),
                RunProgress(err, plan.suite_name, len(plan.cases)) as progress,
                long_lived_heap(),
            ):
                run = asyncio.run(
                    run_plan(
                        plan,
                        store,
                        on_case=progress.advance,
                        cache=cache,
                        ray=ray,
                        run_id=run_id,
                        on_set_up=freeze_heap,
                    )
                )
            runs.append(run)
            orders.append(_suite_order(plan))
        _report(
            runs,
            store,
            out,
            as_json=as_json,
            verbose=verbose,
            orders=orders,
            resumed=runs[0].id if resume else None,
        )
        if not write_reports(report_requests, runs, store):
            return 2  # the runs are stored; the message says how to write the report again
    finally:
        store.close()
        if cache is not None:
            cache.close()
    return 0 if all(r.passed for r in runs) else 1


def _start_writer_early(resume: str | None) -> subprocess.Popen[bytes] | None:
    """The store's writer process, started before the run's imports and suites so that its
    own start-up (Python, SQLAlchemy, ~0.3 s of CPU) runs on another core meanwhile.

    None with one CPU (it would take turns with the run instead) and for `--resume`, which
    reads the stored run in this process anyway. The command waits for it when it ends.
    """
    if resume or (os.cpu_count() or 1) < 2:
        return None
    from assay.store._writer_process import end_unused_writer, start_writer_process

    writer = start_writer_process()
    click.get_current_context().call_on_close(lambda: end_unused_writer(writer))
    return writer


def _check_options(
    paths: tuple[str, ...],
    resume: str | None,
    baseline: str | None,
    threshold: float | None,
    borderline: float | Literal["off"] | None,
    takeover: bool,
) -> None:
    """Refuse option combinations that cannot work together."""
    from assay.errors import UsageError

    if resume and len(paths) > 1:
        raise UsageError("--resume RUN_ID takes at most one suite file: the run's own")
    if takeover and not resume:
        raise UsageError("--takeover goes with --resume RUN_ID")
    if not resume and not paths:
        raise UsageError("give suite files or directories to run, or --resume RUN_ID")
    if resume and baseline:
        raise UsageError(
            "--resume RUN_ID takes no --baseline: a resumed run keeps the baseline it started with"
        )
    if isinstance(borderline, float) and threshold is not None and borderline > threshold:
        raise UsageError(
            f"--borderline {borderline} is above --threshold {threshold}: the borderline band "
            "lies below the pass threshold"
        )


def _resume_options(
    db: str | None,
    no_cache: bool,
    cache_mode: str,
    executor: str,
    ray_address: str | None,
    ray_workers: int | None,
) -> list[str]:
    """The options of this command that `--resume` needs again to find the run and run it
    the same way (the rest comes from the run's snapshot)."""
    again: list[str] = []
    if db:
        again += ["--db", db]
    if no_cache:
        again.append("--no-cache")
    elif cache_mode != "use":
        again += ["--cache-mode", cache_mode]
    if executor != "local":
        again += ["--executor", executor]
    if ray_address:
        again += ["--ray-address", ray_address]
    if ray_workers:
        again += ["--ray-workers", str(ray_workers)]
    return again


def _stored_counts(summary: RunSummary) -> tuple[int, dict[str, int]]:
    """The cases a resumed run had stored, and their verdicts, for its progress line."""
    counts = {
        "pass": summary.passed_count,
        "borderline": summary.borderline_count,
        "fail": summary.failed_count,
        "error": summary.error_count,
    }
    return summary.total, counts


@contextlib.contextmanager
def _say_how_to_resume(
    err: Console, store: Store, run_id: str, cases: int, again: list[str]
) -> Iterator[None]:
    """On Ctrl-C, say which run stopped, what it kept and the command that completes it,
    then exit 130 (SPEC §7); a store failure's resume command gets the same options."""
    from assay.cli._main import EXIT_INTERRUPTED
    from assay.errors import UserError
    from assay.store import StoreUnavailableError

    try:
        yield
    except StoreUnavailableError as exc:
        # The runner names the bare command; the options that find this run belong in it too.
        bare = f"assay run --resume {run_id}"
        if not again or bare not in str(exc):
            raise
        command = shlex.join(["assay", "run", "--resume", run_id, *again])
        raise StoreUnavailableError(str(exc).replace(bare, command, 1)) from None
    except KeyboardInterrupt:
        kept = "its finished cases"
        try:
            kept = f"{store.get_run(run_id).summary.total} of {cases} cases"
        except UserError:  # stopped before the run was created
            err.print("interrupted before the run started; nothing was stored", markup=False)
            raise SystemExit(EXIT_INTERRUPTED) from None
        except Exception:  # noqa: S110 — an unreadable store still gets the resume command
            pass
        command = shlex.join(["assay", "run", "--resume", run_id, *again])
        err.print(
            f"interrupted: run {run_id} kept {kept}.\nResume it with: {command}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        raise SystemExit(EXIT_INTERRUPTED) from None


def _suite_order(plan: RunPlan) -> Iterator[str]:
    """The plan's case ids in suite order, read only if the summary lists a case."""
    return (test.id for test in plan.loaded.suite.tests)


def _report(
    runs: list[RunResult],
    store: Store,
    out: Console,
    *,
    as_json: bool,
    verbose: bool,
    orders: list[Iterable[str]],
    resumed: str | None = None,
) -> None:
    """Print the runs: the §8 JSON document(s), or the terminal summary of each (`resumed`:
    the id of the run this command resumed, if any)."""
    from assay.report import json_chunks, json_chunks_many, listed_verdicts, render_run

    if as_json:  # streamed from the store: one case result in memory at a time
        stdout = sys.stdout

        def documents(run: RunResult) -> Iterator[str]:
            """The run's results as compact JSON in this version's form: a resumed run's
            earlier results, which another version may have stored, go through the model."""
            if run.id == resumed:
                return (r.model_dump_json() for r in store.iter_case_results(run.id))
            return store.iter_case_results_json(run.id)

        if len(runs) == 1:
            chunks = json_chunks(runs[0], documents(runs[0]))
        else:
            chunks = json_chunks_many((r, documents(r)) for r in runs)
        for chunk in chunks:
            stdout.write(chunk)
        stdout.write("\n")
        stdout.flush()
        return
    for run, order in zip(runs, orders, strict=True):
        listed = listed_verdicts(run.summary)
        cases = () if listed == () else store.iter_case_results(run.id, verdicts=listed)
        breakdown = store.iter_case_results(run.id) if verbose else None
        render_run(out, run, cases, breakdown=breakdown, order=order)
        out.print(f"  stored in {store.describe()}", style="dim")


def _ray_options(executor: str, address: str | None, workers: int | None) -> RayOptions | None:
    """`--executor ray` and its options; None for the local executor."""
    from assay.errors import UsageError
    from assay.runner import RayOptions

    if executor != "ray":
        if address or workers:
            raise UsageError("--ray-address and --ray-workers need --executor ray")
        return None
    return RayOptions(address=address, workers=workers)


def _borderline(value: str | None) -> float | Literal["off"] | None:
    """`--borderline`: a bound from 0 to 1, or `off` (no borderline band)."""
    if value is None:
        return None
    if value == "off":
        return "off"
    try:
        bound = float(value)
    except ValueError:
        bound = -1.0
    if not 0.0 <= bound <= 1.0:
        raise click.BadParameter(f"give a number from 0 to 1, or off (got {value!r})")
    return bound
