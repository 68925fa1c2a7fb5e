"""Runner benchmark: `assay run` (the whole process) against the local OpenAI-protocol server.

Reports wall time against the floor N·latency/c, and peak RSS. With `--judge`, every case is
also graded by an `llm-grader` whose judge is the same server (scripted judge mode): one judge
call per case, after its target call, so the floor is N·2·latency/c. Usage:

    .venv/bin/python benchmarks/runner_bench.py                 # the issue #3 targets
    .venv/bin/python benchmarks/runner_bench.py --cases 1000 --latency-ms 50 --concurrency 32
    .venv/bin/python benchmarks/runner_bench.py --cases 5000 --concurrency 64 --judge
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from _timing import ASSAY, Timing, time_assay_run, time_command

BARE_CLIENT = Path(__file__).with_name("bare_client.py")


@dataclass
class Result:
    cases: int
    latency_ms: float
    concurrency: int
    wall_s: float
    peak_rss_mb: float
    judged: bool = False

    @property
    def floor_s(self) -> float:
        calls = 2 if self.judged else 1  # the judge call waits for the target's reply
        return self.cases * calls * self.latency_ms / 1000.0 / self.concurrency


def start_server(latency_ms: float, *, judge: bool = False) -> tuple[subprocess.Popen[str], str]:
    """The fake OpenAI server in its own process, so it does not share the runner's CPU time."""
    judging = ["--judge", json.dumps({"score": 0.9, "reasoning": "ok"})] if judge else []
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "assay.testing.openai_server",
            "--port",
            "0",
            "--latency-ms",
            str(latency_ms),
            *judging,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    base_url = proc.stdout.readline().strip()
    if not base_url.startswith("http"):
        proc.kill()
        raise RuntimeError(f"server did not start: {base_url!r}")
    return proc, base_url


def write_suite(
    directory: Path, base_url: str, cases: int, concurrency: int, *, judge: bool = False
) -> Path:
    with (directory / "cases.jsonl").open("w") as handle:
        for i in range(cases):
            assertions: list[dict[str, object]] = [{"type": "contains", "value": f"question {i}"}]
            if judge:
                assertions.append({"type": "llm-grader", "prompt": "The reply answers."})
            case = {"id": f"c{i}", "input": f"question {i}", "assertions": assertions}
            handle.write(json.dumps(case) + "\n")
    suite: dict[str, object] = {
        "name": "bench",
        "target": {
            "type": "openai",
            "model": "fake-model",
            "base_url": base_url,
            "api_key_env": None,
        },
        "execution": {"concurrency": concurrency, "judge_concurrency": concurrency},
        "tests": "./cases.jsonl",
    }
    if judge:
        suite["judge"] = {"model": "fake-judge", "base_url": base_url, "api_key_env": None}
    path = directory / "bench.eval.yaml"
    path.write_text(json.dumps(suite))
    return path


def run_once(cases: int, latency_ms: float, concurrency: int, judge: bool = False) -> Result:
    server, base_url = start_server(latency_ms, judge=judge)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            directory = Path(tmp)
            suite = write_suite(directory, base_url, cases, concurrency, judge=judge)
            wall, rss = time_assay_run(suite, directory)
            return Result(cases, latency_ms, concurrency, wall, rss, judge)
    finally:
        server.terminate()
        server.wait()


def best_of(
    repeats: int, cases: int, latency_ms: float, concurrency: int, judge: bool = False
) -> Result:
    results = [run_once(cases, latency_ms, concurrency, judge) for _ in range(repeats)]
    return min(results, key=lambda r: r.wall_s)


def memory(sizes: tuple[int, ...], repeats: int = 1) -> list[Result]:
    """Latency 0, concurrency 64: what the process holds as the number of cases grows.

    Each size's wall and peak RSS are each the lowest of `repeats` runs.
    """
    rows = []
    for n in sizes:
        runs = [run_once(n, 0.0, 64) for _ in range(repeats)]
        rows.append(
            Result(n, 0.0, 64, min(r.wall_s for r in runs), min(r.peak_rss_mb for r in runs))
        )
    return rows


@dataclass
class Pair:
    """`assay run` and the bare aiohttp client (bare_client.py) on the same workload and server,
    run alternately; each side's figure is its fastest run."""

    cases: int
    latency_ms: float
    concurrency: int
    judged: bool
    as_json: bool
    assay: list[Timing]
    bare: list[Timing]

    @property
    def best_assay(self) -> Timing:
        return min(self.assay, key=lambda t: t.wall_s)

    @property
    def best_bare(self) -> Timing:
        return min(self.bare, key=lambda t: t.wall_s)

    @property
    def ratio(self) -> float:
        """Fastest `assay run` over fastest bare client, wall time."""
        return self.best_assay.wall_s / self.best_bare.wall_s

    @property
    def peak_tree_rss_mb(self) -> float:
        """The lowest, over the `assay run`s, of the peak summed RSS of its process tree."""
        return min(t.peak_tree_rss_mb for t in self.assay)


def against_bare(
    cases: int,
    latency_ms: float,
    concurrency: int,
    *,
    judge: bool = False,
    repeats: int = 3,
    as_json: bool = False,
) -> Pair:
    """`repeats` whole `assay run`s and as many bare client runs, alternated (which goes first
    alternates too), against one server process; `judge_concurrency` = `concurrency`."""
    server, base_url = start_server(latency_ms, judge=judge)
    assay: list[Timing] = []
    bare: list[Timing] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            directory = Path(tmp)
            suite = write_suite(directory, base_url, cases, concurrency, judge=judge)
            assay_argv = [ASSAY, "run", str(suite), "--no-cache", "--judge-concurrency"]
            assay_argv += [str(concurrency), *(["--json"] if as_json else [])]
            bare_argv = [sys.executable, str(BARE_CLIENT), base_url, "--cases", str(cases)]
            bare_argv += ["--concurrency", str(concurrency), *(["--judge"] if judge else [])]
            for i in range(repeats):
                db = directory / f"runs-{i}.db"
                sides = [("assay", [*assay_argv, "--db", str(db)]), ("bare", bare_argv)]
                for side, argv in sides if i % 2 == 0 else sides[::-1]:
                    (assay if side == "assay" else bare).append(time_command(argv, directory))
    finally:
        server.terminate()
        server.wait()
    return Pair(cases, latency_ms, concurrency, judge, as_json, assay, bare)


def pair_table(pairs: list[Pair]) -> list[str]:
    """The Markdown table of `assay run` against the bare client, with every run listed."""
    lines = [
        "| workload | `assay run` wall | CPU | bare aiohttp wall | CPU | wall ratio "
        "| `assay run` peak RSS, process tree (own) |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in pairs:
        what = f"{p.cases:,} × {p.latency_ms:.0f} ms, c={p.concurrency}"
        if p.judged:
            what += f", one judge call each (judge_concurrency {p.concurrency})"
        if p.as_json:
            what += ", `--json`"
        a, b = p.best_assay, p.best_bare
        lines.append(
            f"| {what} | {a.wall_s:.2f} s | {a.cpu_s:.2f} s | {b.wall_s:.2f} s | {b.cpu_s:.2f} s "
            f"| {p.ratio:.2f}× | {p.peak_tree_rss_mb:.0f} MB ({a.peak_rss_mb:.0f} MB) |"
        )
    lines.append("")
    for p in pairs:
        runs = ", ".join(f"{t.wall_s:.2f} s / {t.cpu_s:.2f} s CPU" for t in p.assay)
        bare = ", ".join(f"{t.wall_s:.2f} s / {t.cpu_s:.2f} s CPU" for t in p.bare)
        lines.append(
            f"- {p.cases:,} cases{' judged' if p.judged else ''}: assay {runs}; bare {bare}"
        )
    return lines


def table(rows: list[Result]) -> list[str]:
    """The Markdown table of runner results."""
    lines = [
        "| cases | latency | concurrency | judge call | floor | wall (whole process) "
        "| wall / floor | peak RSS |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.cases:,} | {r.latency_ms:.0f} ms | {r.concurrency} | "
            f"{'yes' if r.judged else 'no'} | {r.floor_s:.2f} s | "
            f"{r.wall_s:.2f} s | {r.wall_s / r.floor_s:.2f}× | {r.peak_rss_mb:.0f} MB |"
        )
    return lines


def memory_table(rows: list[Result]) -> list[str]:
    """The Markdown table of `memory` results, with the RSS ratio of the largest to the first."""
    lines = ["| cases (latency 0, c=64) | wall | peak RSS |", "|---|---|---|"]
    lines += [f"| {r.cases:,} | {r.wall_s:.2f} s | {r.peak_rss_mb:.0f} MB |" for r in rows]
    first, last = rows[0], rows[-1]
    ratio = last.peak_rss_mb / first.peak_rss_mb
    lines.append(f"\nRSS ratio {last.cases:,}/{first.cases:,}: {ratio:.2f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs")
    parser.add_argument(
        "--judge", action="store_true", help="add one llm-grader (a judge call) per case"
    )
    parser.add_argument(
        "--bare", action="store_true", help="alternate with the bare aiohttp client (wall, CPU)"
    )
    parser.add_argument("--json", action="store_true", help="`assay run --json` (with --bare)")
    args = parser.parse_args()
    if args.bare:
        pair = against_bare(
            args.cases or 1000,
            args.latency_ms,
            args.concurrency,
            judge=args.judge,
            repeats=args.repeats,
            as_json=args.json,
        )
        print("\n".join(pair_table([pair])))
        return
    if args.cases:
        rows = [best_of(args.repeats, args.cases, args.latency_ms, args.concurrency, args.judge)]
    else:
        rows = [
            best_of(args.repeats, 1000, 50.0, 32),
            best_of(args.repeats, 5000, 50.0, 64),
        ]
    print("\n".join(table(rows)))
    if not args.cases:
        print()
        print("\n".join(memory_table(memory((2000, 20000)))))


if __name__ == "__main__":
    main()
