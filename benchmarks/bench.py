"""Every benchmark once, with issue #10's parameters, then a table of the targets they check.

`make bench` runs this. The output is Markdown to paste into docs/benchmarks.md: the machine,
versions and date first, one table per benchmark as it finishes, then the targets table
(target, measured, limit, met / NOT MET). Exit code 0 when every target is met, 1 when one is
not, 3 when a benchmark could not run at all (its traceback goes to stderr; the others still
run). Usage:

    .venv/bin/python benchmarks/bench.py                      # everything, the issue's sizes
    .venv/bin/python benchmarks/bench.py --quick              # small sizes: a smoke run
    .venv/bin/python benchmarks/bench.py --repeats 3          # best of 3 for every figure
    .venv/bin/python benchmarks/bench.py --only runner --only judge
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import api_bench
import compare_bench
import grading_bench
import runner_bench
import startup_bench
import store_bench
from _machine import describe


@dataclass(frozen=True)
class Sizes:
    """The parameters of one harness run; the full set is the issue's."""

    label: str
    runner_cases: int
    runner_concurrency: int
    latency_ms: float
    grading_cases: int
    memory_cases: tuple[int, ...]
    compare_cases: int
    store_cases: int
    store_runs: int
    api_cases: int
    startup_repeats: int
    """Fewest repeats of the cheap measurements (the other whole runs use --repeats alone)."""
    runner_repeats: int
    """Fewest runs of each runner benchmark: its figure is the fastest, and every run's wall
    is listed. A 5,000-case run varies by ±2% from one run to the next here, as much as its
    margin to the limit."""
    compare_repeats: int
    store_repeats: int
    api_repeats: int
    bare: tuple[int, int, int, int]
    """Against the bare aiohttp client: (cases, concurrency) of the plain run, then of the
    judged `--json` run."""
    bare_repeats: int


FULL = Sizes(
    "full: issue #10's sizes",
    runner_cases=5_000,
    runner_concurrency=64,
    latency_ms=50.0,
    grading_cases=100_000,
    memory_cases=(2_000, 20_000, 100_000),
    compare_cases=100_000,
    store_cases=100_000,
    store_runs=10_000,
    api_cases=100_000,
    startup_repeats=5,
    runner_repeats=3,
    compare_repeats=3,
    store_repeats=3,
    api_repeats=5,
    bare=(1_000, 32, 5_000, 64),
    bare_repeats=3,
)
QUICK = Sizes(
    "quick: small sizes to check the harness; the verdicts below are NOT the issue's targets",
    runner_cases=200,
    runner_concurrency=16,
    latency_ms=50.0,
    grading_cases=2_000,
    memory_cases=(100, 1_000),
    compare_cases=2_000,
    store_cases=2_000,
    store_runs=100,
    api_cases=2_000,
    startup_repeats=3,
    runner_repeats=1,
    compare_repeats=1,
    store_repeats=1,
    api_repeats=1,
    bare=(100, 16, 200, 16),
    bare_repeats=1,
)


@dataclass(frozen=True)
class Target:
    """One target of an issue, checked against what was measured."""

    what: str
    issue: str
    measured: float
    op: str
    """How `measured` must relate to `limit`: "<", "≤" or "≥"."""
    limit: float
    unit: str
    how: str = ""
    """How the limit follows from the run's parameters, when it is not a constant."""

    @property
    def met(self) -> bool:
        """Whether the measured figure is within the limit."""
        if self.op == "<":
            return self.measured < self.limit
        if self.op == "≤":
            return self.measured <= self.limit
        return self.measured >= self.limit

    def row(self) -> str:
        """The target as a row of the targets table."""
        limit = f"{self.op} {_figure(self.limit, self.unit)}"
        if self.how:
            limit += f" ({self.how})"
        verdict = "met" if self.met else "**NOT MET**"
        measured = _figure(self.measured, self.unit)
        return f"| {self.what} | {self.issue} | {measured} | {limit} | {verdict} |"


def _figure(value: float, unit: str) -> str:
    if unit == "cases/s":
        return f"{value:,.0f} cases/s"
    if unit == "ms":
        return f"{value:.1f} ms"
    if unit == "×":
        return f"{value:.2f}×"
    if unit == "MB":
        return f"{value:.0f} MB"
    return f"{value:.2f} s" if value >= 0.1 else f"{value:.3f} s"


Outcome = tuple[list[str], list[Target]]
"""A benchmark's Markdown lines and the targets it checks."""


def startup(sizes: Sizes, repeats: int) -> Outcome:
    runs = max(sizes.startup_repeats, repeats)
    timings = startup_bench.measure(runs)
    target = Target("`assay --help` wall", "#10", timings[startup_bench.HELP], "<", 0.3, "s")
    return startup_bench.table(timings, runs), [target]


def _runner(sizes: Sizes, repeats: int, *, judge: bool) -> Outcome:
    n, c, latency = sizes.runner_cases, sizes.runner_concurrency, sizes.latency_ms
    k = max(sizes.runner_repeats, repeats)
    runs = sorted(
        (runner_bench.run_once(n, latency, c, judge) for _ in range(k)), key=lambda r: r.wall_s
    )
    result = runs[0]
    slack, calls = (1.25, "one judge call per case") if judge else (1.15, "no judge")
    limit = slack * result.floor_s + 0.8
    target = Target(
        f"runner, {calls}: {n:,} cases × {latency:.0f} ms at c={c}, wall",
        "#10",
        result.wall_s,
        "≤",
        limit,
        "s",
        f"{slack} × floor {result.floor_s:.2f} s + 0.8 s",
    )
    lines = runner_bench.table([result])
    if k > 1:
        lines += ["", f"The fastest of {k} runs: {', '.join(f'{r.wall_s:.2f} s' for r in runs)}."]
    return lines, [target]


def runner(sizes: Sizes, repeats: int) -> Outcome:
    return _runner(sizes, repeats, judge=False)


def judge(sizes: Sizes, repeats: int) -> Outcome:
    return _runner(sizes, repeats, judge=True)


def bare(sizes: Sizes, repeats: int) -> Outcome:
    """Issue 23 item 3: `assay run` within 1.2× of a bare aiohttp client in the same run (plain,
    and judged with `--json`), and the judged `--json` run's process tree under 120 MB."""
    k = max(sizes.bare_repeats, repeats)
    n, c, judged_n, judged_c = sizes.bare
    plain = runner_bench.against_bare(n, sizes.latency_ms, c, repeats=k)
    judged = runner_bench.against_bare(
        judged_n, sizes.latency_ms, judged_c, judge=True, repeats=k, as_json=True
    )
    targets = [
        Target(
            f"`assay run` / bare aiohttp client: {n:,} cases × {sizes.latency_ms:.0f} ms at "
            f"c={c}, wall",
            "#23",
            plain.ratio,
            "≤",
            1.2,
            "×",
        ),
        Target(
            f"`assay run --json` / bare aiohttp client: {judged_n:,} cases, one judge call "
            f"each, c={judged_c}, wall",
            "#23",
            judged.ratio,
            "≤",
            1.2,
            "×",
        ),
        Target(
            f"peak RSS of `assay run --json` with its writer process, {judged_n:,} judged cases",
            "#23",
            judged.peak_tree_rss_mb,
            "≤",
            120,
            "MB",
        ),
    ]
    lines = runner_bench.pair_table([plain, judged])
    lines += ["", f"Each figure is the fastest of {k} runs, alternated with the bare client's."]
    return lines, targets


def grading(sizes: Sizes, repeats: int) -> Outcome:
    result = grading_bench.best_of(repeats, sizes.grading_cases)
    what = f"deterministic grading with storage, {result.cases:,} cases, whole process"
    target = Target(what, "#10", result.rate, "≥", 5_000, "cases/s")
    return grading_bench.table(result), [target]


def memory(sizes: Sizes, repeats: int) -> Outcome:
    rows = runner_bench.memory(sizes.memory_cases, repeats)
    first, last = rows[0], rows[-1]
    ratio = last.peak_rss_mb / first.peak_rss_mb
    what = f"peak RSS of `assay run`, {last.cases:,} cases / {first.cases:,} cases"
    target = Target(what, "#10", ratio, "≤", 1.5, "×")
    return runner_bench.memory_table(rows), [target]


def compare(sizes: Sizes, repeats: int) -> Outcome:
    result = compare_bench.measure(sizes.compare_cases, max(sizes.compare_repeats, repeats))
    return compare_bench.table(result), []


def store(sizes: Sizes, repeats: int) -> Outcome:
    runs = max(sizes.store_repeats, repeats)
    t = store_bench.measure(sizes.store_cases, sizes.store_runs, runs)
    targets = [
        Target(
            f"`assay compare` of two stored {t.cases:,}-case runs", "#6", t.compare_s, "<", 3, "s"
        ),
        Target(f"`assay runs list` among {t.runs:,} runs", "#6", t.list_s, "<", 0.5, "s"),
    ]
    return store_bench.table(t), targets


def api(sizes: Sizes, repeats: int) -> Outcome:
    runs = max(sizes.api_repeats, repeats)
    seeded, rows = api_bench.run(sizes.api_cases, runs)
    name, slowest, _ = max(rows, key=lambda row: row[1])
    what = f"slowest API request on a {sizes.api_cases:,}-case run: {name}"
    target = Target(what, "#8", slowest, "<", 200, "ms")
    lines = [f"seeded {sizes.api_cases:,} cases in {seeded:.1f} s (not timed)", ""]
    return lines + api_bench.table(sizes.api_cases, runs, rows), [target]


BENCHMARKS: dict[str, tuple[str, Callable[[Sizes, int], Outcome]]] = {
    "startup": ("Start-up", startup),
    "runner": ("Runner against the local OpenAI-protocol server", runner),
    "judge": ("Judge-heavy run: one judge call per case", judge),
    "bare": ("`assay run` against a bare aiohttp client, same run", bare),
    "grading": ("Deterministic grading throughput, with storage", grading),
    "memory": ("Memory against the number of cases", memory),
    "compare": ("Comparing two runs in memory", compare),
    "store": ("Stored runs: `assay compare` and `assay runs list`", store),
    "api": ("HTTP API: pages of a large run", api),
}
"""In the order they run: start-up first, while nothing else of ours runs on the machine."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parser.add_argument("--repeats", type=int, default=1, metavar="K", help="best of K (1)")
    parser.add_argument(
        "--only",
        action="append",
        choices=list(BENCHMARKS),
        metavar="NAME",
        help=f"run only this benchmark (repeatable): {', '.join(BENCHMARKS)}",
    )
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    sizes = QUICK if args.quick else FULL
    chosen = [name for name in BENCHMARKS if not args.only or name in args.only]

    print("# assay benchmarks\n")
    print("\n".join(describe()))
    print(f"- mode: {sizes.label}; whole runs best of {args.repeats}\n", flush=True)
    started = time.perf_counter()
    targets: list[Target] = []
    failed: list[str] = []
    for name in chosen:
        title, run = BENCHMARKS[name]
        print(f"## {title}\n", flush=True)
        began = time.perf_counter()
        try:
            lines, checked = run(sizes, args.repeats)
        except Exception as exc:
            traceback.print_exc()
            failed.append(name)
            print(f"**failed**: {type(exc).__name__}: {exc}\n", flush=True)
            continue
        targets += checked
        print("\n".join(lines))
        print(f"\n({name}: {time.perf_counter() - began:.0f} s)\n", flush=True)

    print("## Targets\n")
    print("| target | issue | measured | limit | result |")
    print("|---|---|---|---|---|")
    for target in targets:
        print(target.row())
    for name in failed:
        print(f"| {name}: the benchmark failed (traceback on stderr) | | | | **NOT MET** |")
    missed = sum(not t.met for t in targets)
    print(
        f"\n{len(targets) - missed} of {len(targets)} targets met"
        + (f"; {len(failed)} benchmark(s) failed: {', '.join(failed)}" if failed else "")
        + f". Total time {time.perf_counter() - started:.0f} s.",
        flush=True,
    )
    if failed:
        return 3
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
