"""Grading benchmark: `assay run` (the whole process) over recorded outputs (replay target).

N cases, each graded by five deterministic graders, every result committed to SQLite. Reports
cases per second of the whole process (start-up, loading, grading, storage, report), and the
size of the SQLite store the run leaves (divided by N: the bytes one stored case costs). Usage:

    .venv/bin/python benchmarks/grading_bench.py                  # the issue #4 target: 100,000
    .venv/bin/python benchmarks/grading_bench.py --cases 20000 --repeats 1
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from _timing import time_assay_run

GRADERS = [
    {"type": "contains", "value": "refund"},
    {"type": "regex", "value": r"\d+ days"},
    {"type": "is-json", "negate": True},
    {"type": "similarity", "value": "Our refund policy allows returns within 30 days."},
    {"type": "icontains", "value": "POLICY"},
]


def write_suite(directory: Path, cases: int) -> Path:
    with (directory / "cases.jsonl").open("w") as tests, (directory / "rec.jsonl").open("w") as rec:
        for i in range(cases):
            days = 30 if i % 4 else 45
            tests.write(json.dumps({"id": f"c{i}", "input": f"question {i}"}) + "\n")
            output = f"Case {i}: our refund policy allows returns within {days} days."
            record = {"id": f"c{i}", "output": output, "duration_ms": 120.0 + i % 50}
            rec.write(json.dumps(record) + "\n")
    suite = {
        "name": "grading-bench",
        "target": {"type": "replay", "path": "./rec.jsonl"},
        "assertions": GRADERS,
        "tests": "./cases.jsonl",
    }
    path = directory / "bench.eval.yaml"
    path.write_text(json.dumps(suite))
    return path


@dataclass(frozen=True)
class Grading:
    """One `assay run` over recorded outputs: its wall time, peak RSS and what it stored."""

    cases: int
    wall_s: float
    peak_rss_mb: float
    store_bytes: int
    """The SQLite store's size after the run (with any -wal/-shm file): one run, every case."""

    @property
    def rate(self) -> float:
        """Cases per second of the whole process."""
        return self.cases / self.wall_s


def run_once(cases: int) -> Grading:
    """One `assay run` of `cases` cases in a fresh directory."""
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        suite = write_suite(directory, cases)
        wall, rss = time_assay_run(suite, directory)
        stored = sum(f.stat().st_size for f in directory.glob("runs.db*"))
        return Grading(cases, wall, rss, stored)


def best_of(repeats: int, cases: int) -> Grading:
    """The fastest of `repeats` runs."""
    return min((run_once(cases) for _ in range(repeats)), key=lambda g: g.wall_s)


def table(result: Grading) -> list[str]:
    """The Markdown table of one grading result."""
    per_case = result.store_bytes / result.cases
    return [
        "| cases | graders per case | wall (whole process) | cases/s | peak RSS "
        "| SQLite store | per case |",
        "|---|---|---|---|---|---|---|",
        f"| {result.cases:,} | {len(GRADERS)} | {result.wall_s:.2f} s | {result.rate:,.0f} "
        f"| {result.peak_rss_mb:.0f} MB | {result.store_bytes / 1e6:.1f} MB "
        f"| {per_case:,.0f} bytes |",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=2, help="best of this many runs")
    args = parser.parse_args()
    print("\n".join(table(best_of(args.repeats, args.cases))))


if __name__ == "__main__":
    main()
