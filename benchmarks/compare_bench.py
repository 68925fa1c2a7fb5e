"""Compare benchmark: `assay.comparison` over two synthetic runs built in memory.

Both runs have N cases (default 100,000, the SPEC §9 scale); the head moves ~10% of the
scores and flips ~2% of the verdicts, so every part of the comparison does real work: the
per-case diff, the suite gates, the paired bootstrap (1,000 resamples at this size) and
McNemar. Building the runs is not timed; the comparison is, including the lazy numpy and
scipy imports of the first call. Usage:

    .venv/bin/python benchmarks/compare_bench.py
    .venv/bin/python benchmarks/compare_bench.py --cases 10000 --repeats 3
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass

from assay.comparison import compare
from assay.results import CaseResult, RunConfigSnapshot, RunResult, RunSummary, Verdict

CONFIG = RunConfigSnapshot(
    threshold=0.8, borderline=0.6, metrics_pass_threshold=0.8, cases_pass_threshold=1.0
)


def verdict(score: float) -> Verdict:
    return "pass" if score >= 0.8 else "borderline" if score >= 0.6 else "fail"


def synthetic_runs(cases: int, seed: int = 7) -> tuple[RunResult, RunResult]:
    """A base run and a head run of `cases` cases with small, partly systematic changes."""
    rng = random.Random(seed)  # noqa: S311 -- synthetic benchmark data, not a secret
    base: list[CaseResult] = []
    head: list[CaseResult] = []
    for i in range(cases):
        score = rng.random()
        moved = score - rng.uniform(0.0, 0.2) if rng.random() < 0.1 else score
        moved = min(1.0, max(0.0, moved))
        latency = rng.uniform(100.0, 900.0)
        for results, s, ms in ((base, score, latency), (head, moved, latency * 1.05)):
            results.append(
                CaseResult(
                    case_id=f"case-{i}", score=s, verdict=verdict(s), threshold=0.8, duration_ms=ms
                )
            )
    run = {"suite": "bench", "target": "fake", "status": "completed", "started_at": "now"}
    return (
        RunResult(id="base", config=CONFIG, summary=RunSummary(), results=base, **run),
        RunResult(id="head", config=CONFIG, summary=RunSummary(), results=head, **run),
    )


@dataclass(frozen=True)
class Comparison:
    """Timings of `compare` over two synthetic runs, and what it found."""

    cases: int
    first_s: float
    """The first call, with the lazy numpy and scipy imports."""
    best_s: float
    resamples: int
    regressed: int
    mcnemar_p: float


def measure(cases: int, repeats: int) -> Comparison:
    """Build two runs of `cases` cases (not timed), then time `compare` `repeats` times."""
    base, head = synthetic_runs(cases)
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        result = compare(base, head)
        timings.append(time.perf_counter() - started)
    s, st = result.summary, result.statistics
    return Comparison(
        cases, timings[0], min(timings), st.resamples, s.case_counts["regressed"], st.mcnemar_p
    )


def table(c: Comparison) -> list[str]:
    """The Markdown table of one comparison's timings."""
    return [
        "| cases per run | first call (with imports) | best | resamples | regressed | McNemar p |",
        "|---|---|---|---|---|---|",
        f"| {c.cases:,} | {c.first_s:.2f} s | {c.best_s:.2f} s | {c.resamples:,} "
        f"| {c.regressed:,} | {c.mcnemar_p:.3g} |",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3, help="report the best of this many")
    args = parser.parse_args()
    print("\n".join(table(measure(args.cases, args.repeats))))


if __name__ == "__main__":
    main()
