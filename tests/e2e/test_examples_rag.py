"""`assay run examples/rag` through the real console script: offline (no API key, any network
call would fail), every RAG and safety grader, with the verdicts its README states."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.e2e._cli import assay, assay_env

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "rag"
SCHEMA = json.loads((Path(__file__).parent / "run_result.schema.json").read_text())
GRADERS = {
    "faithfulness",
    "retrieval",
    "context-precision",
    "context-recall",
    "answer-relevancy",
    "semantic-similarity",
    "pii",
    "moderation",
}
# Verdict and score of each case, from the suite, bot.py and the scripted judge (README):
EXPECTED = {
    "refund-window": ("pass", (1 + 1 + 1 + 1 + 1 + 1 + 0.95 + 1 + 1) / 9),
    "support-hours": ("pass", (1 + 1 + 1 + 0.9 + 1 + 1) / 6),  # weight-0 graders left out
    "warranty-invented": ("fail", 0.0),  # the required deep faithfulness fails: gate → 0
}


@pytest.fixture(scope="module")
def rag_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    cwd = tmp_path_factory.mktemp("rag")
    unreachable = "http://127.0.0.1:9"  # a model call over the network would fail here
    env = assay_env(HTTP_PROXY=unreachable, HTTPS_PROXY=unreachable, NO_PROXY="")
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ASSAY_JUDGE_MODEL", "ASSAY_JUDGE_BASE_URL"):
        env.pop(key, None)
    done = assay("run", str(EXAMPLE), "--json", cwd=cwd, env=env)
    assert done.returncode == 0, done.stderr
    run: dict[str, object] = json.loads(done.stdout)
    return run


def test_i26_6_the_rag_example_runs_offline_with_every_rag_and_safety_grader(
    rag_run: dict[str, object],
) -> None:
    jsonschema.Draft202012Validator(SCHEMA).validate(rag_run)
    results = rag_run["results"]
    assert isinstance(results, list)
    used = {g["type"] for r in results for g in r["grader_results"]}
    assert used >= GRADERS
    assert all(g["error"] is None for r in results for g in r["grader_results"])
    got = {r["case_id"]: (r["verdict"], r["score"]) for r in results}
    for case_id, (verdict, score) in EXPECTED.items():
        assert got[case_id][0] == verdict, case_id
        assert got[case_id][1] == pytest.approx(score), case_id
    assert got["boot-size"][0] == "pass"
    summary = rag_run["summary"]
    assert isinstance(summary, dict)
    assert (summary["passed_count"], summary["failed_count"], summary["passed"]) == (3, 1, True)


def test_i26_6_the_retrieved_passages_are_in_the_result(rag_run: dict[str, object]) -> None:
    results = rag_run["results"]
    assert isinstance(results, list)
    support = next(r for r in results if r["case_id"] == "support-hours")
    assert [p["id"] for p in support["context"]] == ["support", "stores"]
    assert support["context"][0]["text"].startswith("Customer support is open")
    leaked = next(g for g in support["grader_results"] if g["name"] == "any-pii")
    assert leaked["details"][0]["actual"] == "h***@***.example"
