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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3, help="report the best of this many")
    parser.add_argument("--db", help="a database URL (default: a SQLite file in a temp dir)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        db = args.db or str(directory / "bench.db")
        started = time.perf_counter()
        with open_store(db) as store:
            base, head = synthetic_runs(args.cases)
            for run in (base, head):
                store.create_run(run, {})
            for i in range(args.runs - 2):
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
        seeded = time.perf_counter() - started
        where = ["--db", db]
        compared = _best(["compare", "base", "head", "--json", *where], directory, args.repeats)
        listed = _best(["runs", "list", *where], directory, args.repeats)
        filtered = _best(["runs", "list", "--suite", "suite-7", *where], directory, args.repeats)
    backend = "PostgreSQL" if args.db else "SQLite"
    print(f"seeded {args.runs:,} runs ({args.cases:,} cases × 2) in {seeded:.1f} s ({backend})")
    print("| backend | compare 2 × cases | `runs list` among runs | `runs list --suite` |")
    print("|---|---|---|---|")
    print(
        f"| {backend} | {args.cases:,}: {compared:.2f} s | {args.runs:,}: {listed:.2f} s "
        f"| {filtered:.2f} s |"
    )


if __name__ == "__main__":
    main()
