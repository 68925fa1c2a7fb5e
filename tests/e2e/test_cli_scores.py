"""The numbers a run reports about its own completeness, through the real `assay` executable:
an error case has no score anywhere (an errored repeat included), judge fallbacks are counted
and shown, the case table follows the suite, and every case carries its graders' hits and
misses (issue 21 items 3, 10 and 12)."""

from __future__ import annotations

import json
import re
import sqlite3
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from assay.testing import FakeOpenAIServer
from tests.conftest import write
from tests.e2e._cli import assay

SCHEMA = json.loads((Path(__file__).parent / "run_result.schema.json").read_text())

FLAKY_AGENT = """\
calls = 0


def answer(case):
    global calls
    calls += 1
    if calls == 2:
        raise RuntimeError("the backend dropped the connection")
    return "refunds take 30 days"
"""

REPEATED = """\
name: repeated
target: {type: python, function: "flaky_agent:answer"}
execution: {repeat: 3}
tests:
  - id: refund
    input: "refund?"
    assertions: [{type: contains, value: "30 days", name: says-30-days}]
"""


def test_i21_3_an_errored_repeat_has_a_null_score_everywhere(tmp_path: Path) -> None:
    write(tmp_path / "flaky_agent.py", FLAKY_AGENT)
    write(tmp_path / "s.eval.yaml", REPEATED)
    reports = ["--report", "md:r.md", "--report", "junit:r.xml", "--report", "json:r.json"]
    done = assay("run", "s.eval.yaml", "--json", "--no-cache", *reports, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    run = json.loads(done.stdout)
    (case,) = run["results"]
    # Two samples scored 1.0; before, the case said 1.0 too (the mean of the graded ones).
    assert [(s["verdict"], s["score"]) for s in case["samples"]] == [
        ("pass", 1.0),
        ("error", None),
        ("pass", 1.0),
    ]
    assert (case["verdict"], case["score"]) == ("error", None)
    jsonschema.Draft202012Validator(SCHEMA).validate(run)  # SPEC §8: an error has no score
    assert case["error"]["message"] == (
        "1 of 3 samples errored; sample 1: function 'flaky_agent:answer' raised RuntimeError: "
        "the backend dropped the connection"
    )
    shown = json.loads(assay("runs", "show", run["id"], "--json", cwd=tmp_path).stdout)
    assert shown["results"][0]["score"] is None
    assert json.loads((tmp_path / "r.json").read_text())["results"][0]["score"] is None
    with sqlite3.connect(tmp_path / ".assay" / "assay.db") as db:
        stored = db.execute("SELECT verdict, score, data FROM case_results").fetchall()
    assert [(v, s, json.loads(d)["score"]) for v, s, d in stored] == [("error", None, None)]
    markdown = (tmp_path / "r.md").read_text()
    assert "#### 💥 `refund`: error, score — (threshold 0.80)" in markdown
    junit = ET.fromstring((tmp_path / "r.xml").read_text())
    bodies = [e.text or "" for e in junit.iter("error")]
    assert any(b.startswith("error: score — ") for b in bodies)
    table = assay("runs", "show", run["id"], cwd=tmp_path).stdout
    assert re.search(r"│ refund\s+│ error\s+│\s+— │", table), table
    assert "1 error: results incomplete" in table


JUDGED = """\
name: fallbacks
target: {type: fake, responses: {"refund?": "Refunds are accepted within 30 days."}}
judge: {model: flaky-judge, max_retries: 0}
tests:
  - id: outcomes
    input: "refund?"
    expected_outcomes: ["States the 30-day window"]
    assertions: [{type: contains, value: "30 days", name: says-30-days}]
  - id: facts
    input: "refund?"
    expected_output: "Refunds are accepted within 30 days."
    assertions: [{type: factuality, depth: deep, name: facts}]
  - id: tone
    input: "refund?"
    assertions: [{type: tone, profile: {formality: neutral}, name: neutral-tone}]
  - id: only-outcomes
    input: "refund?"
    expected_outcomes: ["Is polite"]
"""


def test_i21_10_judge_fallbacks_are_counted_and_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "j.eval.yaml", JUDGED)
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    with FakeOpenAIServer(judge={}, faults={"503": 1.0}) as server:
        flags = ["--no-cache", "--judge-base-url", server.base_url, "--concurrency", "1"]
        done = assay("run", "j.eval.yaml", *flags, "--report", "md:r.md", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    out = done.stdout
    assert "! 3 judged checks fell back" in out
    assert "1 error: results incomplete" in out
    assert "judge fell back: expected_outcomes" in out
    assert "judge fell back: facts" in out
    assert "judge fell back: neutral-tone" in out
    run_id = re.search(r"run (\S+-\S+)", out).group(1)  # type: ignore[union-attr]
    run = json.loads(assay("runs", "show", run_id, "--json", cwd=tmp_path).stdout)
    assert run["summary"]["judge_fallback_count"] == 3
    by_id = {c["case_id"]: c for c in run["results"]}
    # The outcomes could not be judged: the score (contains: 1.0) decides, step 3 of §1.3.
    assert (by_id["outcomes"]["verdict"], by_id["outcomes"]["score"]) == ("pass", 1.0)
    outcome_grader = by_id["outcomes"]["grader_results"][-1]
    assert outcome_grader["fallback"].startswith("expected outcomes → score: JudgeError: ")
    assert by_id["facts"]["grader_results"][0]["fallback"].startswith(
        "deep factuality → shallow: judge failed: "
    )
    assert by_id["tone"]["grader_results"][0]["fallback"].startswith(
        "judged tone → heuristic: judge failed: "
    )
    # With nothing else to score it, the case is an error (not counted as a fallback).
    assert (by_id["only-outcomes"]["verdict"], by_id["only-outcomes"]["score"]) == ("error", None)
    markdown = (tmp_path / "r.md").read_text()
    assert "💥 **1 error: results incomplete** · ⚠️ **3 judged checks fell back**" in markdown


ORDERED_AGENT = """\
import asyncio


async def answer(case):
    await asyncio.sleep(case["metadata"]["delay"])
    return "no"
"""

ORDERED = """\
name: ordered
target: {type: python, function: "ordered_agent:answer"}
assertions:
  - {type: contains, value: "yes", name: says-yes}
  - {type: contains, value: "no"}
  - {type: contains, value: "maybe"}
tests:
  - {id: c-slow, input: a, metadata: {delay: 1.5}}
  - {id: a-medium, input: b, metadata: {delay: 0.8}}
  - {id: b-fast, input: c, metadata: {delay: 0.0}}
"""


def test_i21_12_the_case_table_follows_suite_order_and_cases_carry_hits_and_misses(
    tmp_path: Path,
) -> None:
    write(tmp_path / "ordered_agent.py", ORDERED_AGENT)
    write(tmp_path / "o.eval.yaml", ORDERED)
    done = assay("run", "o.eval.yaml", "--no-cache", "--concurrency", "3", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    run_id = re.search(r"run (\S+-\S+)", done.stdout).group(1)  # type: ignore[union-attr]
    shown = assay("runs", "show", run_id, cwd=tmp_path).stdout
    run = json.loads(assay("runs", "show", run_id, "--json", cwd=tmp_path).stdout)
    # Stored as they finished: the fastest first.
    assert [c["case_id"] for c in run["results"]] == ["b-fast", "a-medium", "c-slow"]
    for text in (done.stdout, shown):
        listed = re.findall(r"│ (c-slow|a-medium|b-fast) ", text)
        assert listed == ["c-slow", "a-medium", "b-fast"], text
    case = run["results"][0]
    assert (case["hits"], case["misses"]) == (
        ["contains 'no'"],
        ["does not contain 'yes'", "does not contain 'maybe'"],
    )
