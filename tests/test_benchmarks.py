"""The benchmark harness (`make bench`) runs end to end and reports its targets consistently.

Only the harness is checked here, in `--quick` mode as a real subprocess: whether a target is
met depends on the machine, so no timing is asserted.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench.py"

SECTIONS = {
    "Start-up": "| command | wall (best of 3) |",
    "Runner against the local OpenAI-protocol server": "| cases | latency | concurrency |",
    "Judge-heavy run: one judge call per case": "| cases | latency | concurrency |",
    "`assay run` against a bare aiohttp client, same run": "| workload | `assay run` wall |",
    "Deterministic grading throughput, with storage": "| cases | graders per case |",
    "Memory against the number of cases": "| cases (latency 0, c=64) | wall | peak RSS |",
    "Comparing two runs in memory": "| cases per run | first call (with imports) |",
    "Stored runs: `assay compare` and `assay runs list`": "| backend | compare 2 × cases |",
    "HTTP API: pages of a large run": "| request (2,000 cases, page_size 50) | best of 1 |",
}
TARGETS = [
    "`assay --help` wall",
    "runner, no judge: 200 cases × 50 ms at c=16, wall",
    "runner, one judge call per case: 200 cases × 50 ms at c=16, wall",
    "`assay run` / bare aiohttp client: 100 cases × 50 ms at c=16, wall",
    "`assay run --json` / bare aiohttp client: 200 cases, one judge call each, c=16, wall",
    "peak RSS of `assay run --json` with its writer process, 200 judged cases",
    "deterministic grading with storage, 2,000 cases, whole process",
    "peak RSS of `assay run`, 1,000 cases / 100 cases",
    "`assay compare` of two stored 2,000-case runs",
    "`assay runs list` among 100 runs",
    "slowest API request on a 2,000-case run: ",
]


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH), *args],
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )


def target_rows(stdout: str) -> list[list[str]]:
    """The targets table's rows, split into cells."""
    table = stdout.split("## Targets\n", 1)[1]
    rows = [line for line in table.splitlines() if line.startswith("| ")][1:]  # no header
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows]


def test_quick_run_prints_every_table_and_a_consistent_targets_table() -> None:
    done = bench("--quick")

    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    out = done.stdout
    assert out.startswith("# assay benchmarks\n")
    assert re.search(r"^- date: \d{4}-\d\d-\d\d \d\d:\d\d UTC$", out, re.M), out
    assert re.search(r"^- machine: \d+ CPUs \(.+\), [\d.]+ GiB RAM", out, re.M), out
    versions = re.search(r"^- versions: Python 3\.\d+\.\d+, assay \S+, aiohttp \S+, .*$", out, re.M)
    assert versions is not None, out
    assert "SQLAlchemy" in versions.group(0) and "pydantic" in versions.group(0)
    for title, header in SECTIONS.items():
        section = out.split(f"## {title}\n", 1)
        assert len(section) == 2, f"no section {title!r}:\n{out}"
        body = section[1].split("\n## ", 1)[0]
        assert header in body, f"{title}: no table {header!r}:\n{body}"
        assert "**failed**" not in body

    rows = target_rows(out)
    assert len(rows) == len(TARGETS)
    for row, expected in zip(rows, TARGETS, strict=True):
        assert row[0].startswith(expected), (row, expected)
    verdicts = [row[-1] for row in rows]
    assert set(verdicts) <= {"met", "**NOT MET**"}
    met = verdicts.count("met")
    assert f"\n{met} of {len(TARGETS)} targets met. Total time " in out
    assert done.returncode == (0 if met == len(TARGETS) else 1)


def test_only_runs_the_named_benchmark() -> None:
    done = bench("--only", "startup")

    assert done.returncode in (0, 1), done.stderr
    assert "## Start-up\n" in done.stdout
    assert "## Runner" not in done.stdout
    rows = target_rows(done.stdout)
    assert len(rows) == 1
    what, issue, measured, limit, verdict = rows[0]
    assert (what, issue, limit) == ("`assay --help` wall", "#10", "< 0.30 s")
    seconds = float(measured.removesuffix(" s"))
    if abs(seconds - 0.3) > 0.005:  # the printed figure is rounded
        assert verdict == ("met" if seconds < 0.3 else "**NOT MET**")
    assert done.returncode == (0 if verdict == "met" else 1)


def test_bad_options_are_usage_errors() -> None:
    done = bench("--repeats", "0")
    assert done.returncode == 2
    assert "--repeats must be at least 1" in done.stderr
    assert done.stdout == ""

    done = bench("--only", "nonsense")
    assert done.returncode == 2
    assert "invalid choice: 'nonsense'" in done.stderr


def test_a_runner_benchmark_reports_its_fastest_run_and_lists_every_run() -> None:
    done = bench("--quick", "--only", "runner", "--repeats", "2")

    assert done.returncode in (0, 1), done.stderr
    listed = re.search(r"The fastest of 2 runs: ([\d.]+) s, ([\d.]+) s\.", done.stdout)
    assert listed is not None, done.stdout
    fastest, other = float(listed[1]), float(listed[2])
    assert fastest <= other
    (row,) = target_rows(done.stdout)
    assert row[2] == f"{fastest:.2f} s"
