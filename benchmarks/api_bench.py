"""API benchmark: pages of a 100,000-case run through the real ASGI app, on a SQLite file.

Seeds one run of N cases (default 100,000; each with two grader results, tags and an output
of a few hundred characters) into a fresh SQLite store, then times `GET
/api/runs/{id}/results` for the first, middle and last page in stored order, sorted by score
(both directions), by duration and by case id, and with filters. Each request goes through
the whole app (routing, validation, the store, JSON) via an in-process ASGI client; the
figure is the best of `--repeats`. Seeding is not timed. Target (issue 8): every page under
200 ms. Usage:

    .venv/bin/python benchmarks/api_bench.py
    .venv/bin/python benchmarks/api_bench.py --cases 10000 --repeats 3
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path

import httpx2 as httpx

from assay.results import (
    CaseResult,
    GraderResult,
    RunConfigSnapshot,
    RunResult,
    RunSummary,
    Verdict,
)
from assay.server import create_app
from assay.store import SQLiteStore

RUN_ID = "20260101T000000-bench1"
PAGE_SIZE = 50
_SEED_BATCH = 5_000


def _verdict(score: float | None) -> Verdict:
    if score is None:
        return "error"
    return "pass" if score >= 0.8 else "borderline" if score >= 0.6 else "fail"


def _case(i: int, rng: random.Random) -> CaseResult:
    score = None if rng.random() < 0.02 else round(rng.random(), 3)
    verdict = _verdict(score)
    graders = [
        GraderResult(
            name=name,
            type="contains",
            score=score,
            verdict=verdict,
            hits=["mentions the refund window"],
            misses=[] if verdict == "pass" else ["no order number"],
        )
        for name in ("mentions", "tone")
    ]
    return CaseResult(
        case_id=f"case-{i:06d}",
        score=score,
        verdict=verdict,
        threshold=0.8,
        output="Thanks for reaching out! " * 12,
        duration_ms=round(rng.uniform(50.0, 2000.0), 1),
        tags=["billing" if i % 3 else "smoke", f"shard-{i % 10}"],
        grader_results=graders,
    )


def seed(path: Path, cases: int) -> None:
    rng = random.Random(8)  # noqa: S311 -- synthetic benchmark data, not a secret
    with SQLiteStore(path) as store:
        store.create_run(
            RunResult(
                id=RUN_ID,
                suite="bench",
                target="fake:echo",
                status="running",
                started_at="2026-01-01T00:00:00.000+00:00",
                config=RunConfigSnapshot(
                    threshold=0.8,
                    borderline=0.6,
                    metrics_pass_threshold=0.8,
                    cases_pass_threshold=1.0,
                ),
                summary=RunSummary(),
            ),
            {},
        )
        for start in range(0, cases, _SEED_BATCH):
            batch = [_case(i, rng) for i in range(start, min(cases, start + _SEED_BATCH))]
            store.add_case_results(RUN_ID, batch)


def scenarios(cases: int) -> dict[str, dict[str, str | int | list[str]]]:
    last = -(-cases // PAGE_SIZE)
    middle = last // 2
    return {
        "first page": {"page": 1},
        "middle page": {"page": middle},
        "last page": {"page": last},
        "sort=score, first": {"sort": "score", "page": 1},
        "sort=score, middle": {"sort": "score", "page": middle},
        "sort=score, last": {"sort": "score", "page": last},
        "sort=score desc, last": {"sort": "score", "order": "desc", "page": last},
        "sort=duration_ms, middle": {"sort": "duration_ms", "page": middle},
        "sort=case_id desc, last": {"sort": "case_id", "order": "desc", "page": last},
        "verdict=fail, last": {"verdict": "fail", "page": -1},
        "verdict=fail sort=score, last": {"verdict": "fail", "sort": "score", "page": -1},
        "tag=smoke, last": {"tag": "smoke", "page": -1},
        "grader=tone grader_verdict=fail, last": {
            "grader": "tone",
            "grader_verdict": "fail",
            "page": -1,
        },
        "grader=tone not passed (the studio's filter), last": {
            "grader": "tone",
            "grader_verdict": ["borderline", "fail", "error"],
            "page": -1,
        },
        "q=case-09, first": {"q": "case-09", "page": 1},
        # Deepest from both ends: a page in the middle of a filter is the slowest one.
        "verdict=fail sort=score, middle": {"verdict": "fail", "sort": "score", "page": -2},
        "tag=smoke, middle": {"tag": "smoke", "page": -2},
        "grader=tone not passed, middle": {
            "grader": "tone",
            "grader_verdict": ["borderline", "fail", "error"],
            "page": -2,
        },
    }


async def measure(path: Path, cases: int, repeats: int) -> list[tuple[str, float, int]]:
    store = SQLiteStore(path)
    app = create_app(store, config_path=path.with_suffix(".yaml"))
    transport = httpx.ASGITransport(app=app)
    url = f"/api/runs/{RUN_ID}/results"
    rows: list[tuple[str, float, int]] = []
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            for name, params in scenarios(cases).items():
                query = {"page_size": PAGE_SIZE, **params}
                if query["page"] in (-1, -2):  # the last (middle) page of a filter: count first
                    probe = await client.get(url, params={**query, "page": 1})
                    pages = probe.json()["pages"]
                    query["page"] = max(1, pages if query["page"] == -1 else pages // 2)
                best = float("inf")
                items = 0
                for _ in range(repeats):
                    started = time.perf_counter()
                    response = await client.get(url, params=query)
                    elapsed = time.perf_counter() - started
                    if response.status_code != 200:
                        raise RuntimeError(f"{name}: {response.status_code} {response.text}")
                    items = len(response.json()["items"])
                    best = min(best, elapsed)
                rows.append((name, best * 1000, items))
            # What the studio's run page asks for besides a page of results.
            for name, suffix in (("the run (GET /api/runs/{id})", ""), ("facets", "/facets")):
                best = float("inf")
                for _ in range(repeats):
                    started = time.perf_counter()
                    response = await client.get(f"/api/runs/{RUN_ID}{suffix}")
                    best = min(best, time.perf_counter() - started)
                    if response.status_code != 200:
                        raise RuntimeError(f"{name}: {response.status_code} {response.text}")
                rows.append((name, best * 1000, 1))
    finally:
        store.close()
    return rows


def run(cases: int, repeats: int) -> tuple[float, list[tuple[str, float, int]]]:
    """Seed a temporary store with `cases` cases, then time every request.

    Returns:
        The seconds seeding took (not part of any timing), and (request, best ms, items) rows.
    """
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        started = time.perf_counter()
        seed(path, cases)
        seeded = time.perf_counter() - started
        return seeded, asyncio.run(measure(path, cases, repeats))


def table(cases: int, repeats: int, rows: list[tuple[str, float, int]]) -> list[str]:
    """The Markdown table of request timings."""
    lines = [
        f"| request ({cases:,} cases, page_size {PAGE_SIZE}) | best of {repeats} |",
        "|---|---|",
    ]
    lines += [f"| {name} ({items} items) | {ms:.1f} ms |" for name, ms, items in rows]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5, help="report the best of this many")
    args = parser.parse_args()
    seeded, rows = run(args.cases, args.repeats)
    print(f"seeded {args.cases:,} cases in {seeded:.1f} s")
    print("\n".join(table(args.cases, args.repeats, rows)))


if __name__ == "__main__":
    main()
