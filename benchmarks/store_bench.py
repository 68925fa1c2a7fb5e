"""Store benchmark: comparing two stored 100,000-case runs, and listing among 10,000 runs.

Both are timed as a user meets them: the whole `assay` process (start-up, opening the store,
reading, printing JSON), on a SQLite file by default or on PostgreSQL with `--db URL`. Seeding
the store is not timed. Targets (issue 6): compare < 3 s, `runs list` < 0.5 s. Usage:

    .venv/bin/python benchmarks/store_bench.py
    .venv/bin/python benchmarks/store_bench.py --cases 10000 --runs 1000
    .venv/bin/python benchmarks/store_bench.py --db postgresql+psycopg://user@host/db
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from compare_bench import CONFIG, synthetic_runs

from assay.results import RunResult, RunSummary
from assay.store import open_store

ASSAY = str(Path(sys.executable).with_name("assay"))


def _best(args: list[str], cwd: Path, repeats: int) -> float:
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        done = subprocess.run([ASSAY, *args], cwd=cwd, stdout=subprocess.DEVNULL, check=False)
        if done.returncode not in (0, 1):  # 1: compare found the regression the data holds
            raise RuntimeError(f"assay {' '.join(args)} failed with {done.returncode}")
        timings.append(time.perf_counter() - started)
    return min(timings)


@dataclass(frozen=True)
class StoreTimings:
    """Whole `assay` processes over a seeded store: compare two runs, list runs."""

    backend: str
    cases: int
    runs: int
    seeded_s: float
    compare_s: float
    list_s: float
    list_suite_s: float


def measure(cases: int, runs: int, repeats: int, db: str | None = None) -> StoreTimings:
    """Seed a store (a temporary SQLite file, or `db`) and time the commands, best of `repeats`."""
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        where = db or str(directory / "bench.db")
        started = time.perf_counter()
        store = open_store(where)  # the Store protocol promises close(), not a context
        try:
            base, head = synthetic_runs(cases)
            for run in (base, head):
                store.create_run(run, {})
            for i in range(runs - 2):
                store.create_run(
                    RunResult(
                        id=f"listed-{i:05d}",
                        suite=f"suite-{i % 20}",
                        target="fake",
                        status="completed",
                        started_at=f"2026-01-01T00:00:{i:05d}Z",
                        config=CONFIG,
                        summary=RunSummary(total=10, passed_count=9),
                    ),
                    {},
                )
        finally:
            store.close()
        seeded = time.perf_counter() - started
        option = ["--db", where]
        compared = _best(["compare", "base", "head", "--json", *option], directory, repeats)
        listed = _best(["runs", "list", *option], directory, repeats)
        filtered = _best(["runs", "list", "--suite", "suite-7", *option], directory, repeats)
    backend = "PostgreSQL" if db else "SQLite"
    return StoreTimings(backend, cases, runs, seeded, compared, listed, filtered)


def table(t: StoreTimings) -> list[str]:
    """The Markdown table of one store benchmark (seeding is reported, not timed in it)."""
    return [
        f"seeded {t.runs:,} runs ({t.cases:,} cases × 2) in {t.seeded_s:.1f} s ({t.backend})",
        "",
        "| backend | compare 2 × cases | `runs list` among runs | `runs list --suite` |",
        "|---|---|---|---|",
        f"| {t.backend} | {t.cases:,}: {t.compare_s:.2f} s | {t.runs:,}: {t.list_s:.2f} s "
        f"| {t.list_suite_s:.2f} s |",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3, help="report the best of this many")
    parser.add_argument("--db", help="a database URL (default: a SQLite file in a temp dir)")
    args = parser.parse_args()
    print("\n".join(table(measure(args.cases, args.runs, args.repeats, args.db))))


if __name__ == "__main__":
    main()
