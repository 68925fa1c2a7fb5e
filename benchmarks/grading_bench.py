"""Grading benchmark: `assay run` (the whole process) over recorded outputs (replay target).

N cases, each graded by five deterministic graders, every result committed to SQLite. Reports
cases per second of the whole process (start-up, loading, grading, storage, report). Usage:

    .venv/bin/python benchmarks/grading_bench.py                  # the issue #4 target: 100,000
    .venv/bin/python benchmarks/grading_bench.py --cases 20000 --repeats 1
"""

from __future__ import annotations

import argparse
import json
import tempfile
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


def run_once(cases: int) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one `assay run`."""
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        suite = write_suite(directory, cases)
        return time_assay_run(suite, directory)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=2, help="best of this many runs")
    args = parser.parse_args()
    wall, rss = min(run_once(args.cases) for _ in range(args.repeats))
    print("| cases | graders per case | wall (whole process) | cases/s | peak RSS |")
    print("|---|---|---|---|---|")
    rate = args.cases / wall
    print(f"| {args.cases} | {len(GRADERS)} | {wall:.2f} s | {rate:,.0f} | {rss:.0f} MB |")


if __name__ == "__main__":
    main()
