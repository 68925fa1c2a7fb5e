"""Issue 24 item 7: where AgentV's scoring and SPEC differ, SPEC wins where it speaks, AgentV's
code where SPEC is silent, and each difference met in a file is one located warning.

Suites run offline: `fake` targets answer and the fake OpenAI server plays the judge, scoring
each llm-grader by the criterion its prompt shows.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from assay.config import LoadedSuite, load_project, load_suite
from assay.results import RunResult
from assay.runner import RunOptions, execute, plan_run
from assay.store import MemorySink
from assay.testing import FakeOpenAIServer
from tests.conftest import write

HEAD = "name: s\nexecution:\n  target: bot\ntargets:\n  bot: {type: fake, default: ok}\n"
"""An AgentV suite's head with an offline target; `execution` is on line 2."""

SCORES = {"Criterion A": 0.7, "Criterion B": 0.8, "Criterion C": 0.9, "Half right": 0.5}
"""The judge's score for an llm-grader whose prompt shows the key."""


def judge(body: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    prompt = body["messages"][-1]["content"]
    if "items" in schema.get("properties", {}):
        ids = list(schema["properties"]["items"]["properties"])
        return {
            "items": {
                i: {
                    "score": 3 if i == "must" else 10,
                    "satisfied": i != "must",
                    "reasoning": "r",
                    "evidence": "",
                }
                for i in ids
            }
        }
    score = next((s for key, s in SCORES.items() if key in prompt), 1.0)
    return {"score": score, "reasoning": "r", "hits": [], "misses": []}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    with FakeOpenAIServer(judge=judge) as fake:
        yield fake


def load(tmp_path: Path, text: str) -> LoadedSuite:
    return load_suite(write(tmp_path / "s.eval.yaml", text))


def messages(loaded: LoadedSuite) -> list[str]:
    return [str(w) for w in loaded.warnings]


def differences(loaded: LoadedSuite) -> list[str]:
    """The warnings naming a scoring difference (they cite SPEC)."""
    return [m for m in messages(loaded) if "SPEC §" in m]


def run(loaded: LoadedSuite, server: FakeOpenAIServer) -> RunResult:
    options = RunOptions(judge_model="judge", judge_base_url=server.base_url)
    sink = MemorySink()
    asyncio.run(execute(plan_run(loaded, load_project(), options), sink))
    return sink.run


def test_i24_7_borderline_is_spec_s_and_said_once_where_the_threshold_is(
    tmp_path: Path, server: Any
) -> None:
    loaded = load(
        tmp_path,
        HEAD.replace("  target: bot\n", "  target: bot\n  threshold: 0.8\n")
        + "tests:\n  - id: a\n    criteria: Half right\n    input: hi\n"
        "  - id: b\n    criteria: Half right\n    input: hi\n",
    )
    assert differences(loaded) == [
        "s.eval.yaml:4 execution.threshold: AgentV's verdicts are pass and fail only: a case "
        "scoring from 0.6 up to its threshold fails in AgentV and is `borderline` in assay "
        "(SPEC §1); add `verdicts: {borderline: null}` under `execution` for AgentV's two "
        "verdicts"
    ]
    result = run(loaded, server)
    assert [(r.score, r.verdict) for r in result.results] == [(0.5, "fail"), (0.5, "fail")]
    loaded = load(
        tmp_path,
        HEAD + "tests:\n  - id: a\n    criteria: Criterion A\n    input: hi\n",
    )
    assert run(loaded, server).results[0].verdict == "borderline"  # 0.7: SPEC wins
    off = load(
        tmp_path,
        HEAD.replace("  target: bot\n", "  target: bot\n  verdicts: {borderline: null}\n")
        + "tests:\n  - id: a\n    criteria: Criterion A\n    input: hi\n",
    )
    assert differences(off) == []
    assert run(off, server).results[0].verdict == "fail"


def test_i24_7_a_mean_a_hair_under_the_threshold_passes_and_is_said(
    tmp_path: Path, server: Any
) -> None:
    loaded = load(
        tmp_path,
        HEAD + "tests:\n  - id: single\n    criteria: Criterion C\n    input: hi\n"
        "  - id: mean\n    input: hi\n    assertions:\n"
        "      - {type: llm-grader, prompt: Criterion A}\n"
        "      - {type: llm-grader, prompt: Criterion B}\n"
        "      - {type: llm-grader, prompt: Criterion C}\n",
    )
    assert [m for m in differences(loaded) if "hair" in m] == [
        "s.eval.yaml:10 tests[1]: this test's score is a mean of several scores: AgentV fails a "
        "mean a float-rounding hair under the threshold (0.7999999999999999 from 0.7, 0.8 and "
        "0.9 against 0.8), assay passes it (a score within 1e-9 of the threshold reaches it, "
        "SPEC §1)"
    ]
    mean = next(r for r in run(loaded, server).results if r.case_id == "mean")
    assert mean.score == pytest.approx(0.8) and mean.score < 0.8
    assert mean.verdict == "pass"  # AgentV: fail


def test_i24_7_a_failed_required_rubric_item_gates_the_case_and_is_said(
    tmp_path: Path, server: Any
) -> None:
    loaded = load(
        tmp_path,
        HEAD + "tests:\n  - id: a\n    input: hi\n    assertions:\n      - type: rubrics\n"
        "        criteria:\n          - {id: must, outcome: Cites a source, required: true}\n"
        "          - {id: nice, outcome: Is polite}\n"
        "          - {id: nicer, outcome: Is brief}\n",
    )
    assert [m for m in differences(loaded) if "rubric item" in m] == [
        "s.eval.yaml:12 tests[0].assertions[0].rubrics[0].required: a failed `required` rubric "
        "item fails this rubric grader in AgentV and leaves the case score as it is; in assay "
        "it also sets the case score to 0 (SPEC §5.2)"
    ]
    result = run(loaded, server).results[0]
    # AgentV: the rubric scores 2/3 and the case keeps it; SPEC §5.2: the case scores 0
    assert (result.score, result.verdict) == (0.0, "fail")


def test_i24_7_plain_string_assertions_weigh_their_count_as_in_agentv(
    tmp_path: Path, server: Any
) -> None:
    loaded = load(
        tmp_path,
        HEAD + "tests:\n  - id: a\n    input: hi\n    assertions:\n"
        "      - {type: contains, value: absent}\n      - Is polite\n      - Is brief\n"
        "      - Answers the question\n",
    )
    graders = json.loads(loaded.document)["tests"][0]["assertions"]
    assert [(g["type"], g.get("weight", 1)) for g in graders] == [("contains", 1), ("rubrics", 3)]
    # contains 0 (weight 1), the three strings satisfied (weight 3): 3/4, where one rubric
    # grader of weight 1 would give 1/2
    assert run(loaded, server).results[0].score == pytest.approx(0.75)


def test_i24_7_a_composite_members_own_weight_is_spec_s_and_said(
    tmp_path: Path, server: Any
) -> None:
    loaded = load(
        tmp_path,
        HEAD + "tests:\n  - id: a\n    input: hi\n    assertions:\n      - type: composite\n"
        "        aggregator: {type: weighted_average, weights: {b: 1}}\n        assertions:\n"
        "          - {name: a, type: llm-grader, prompt: Criterion A, weight: 3}\n"
        "          - {name: b, type: llm-grader, prompt: Criterion C, weight: 5}\n",
    )
    assert [m for m in differences(loaded) if "composite" in m] == [
        "s.eval.yaml:13 tests[0].assertions[0].assertions[0].weight: AgentV's composite ignores "
        "a member's own `weight` (it weighs members by the aggregator's `weights`, 1 when "
        "unnamed); assay weighs them by their own (SPEC §1.3), so this member counts 3 here and "
        "1.0 in AgentV"
    ]
    # member a weighs 3 (its own), b weighs 1 (the aggregator's): (0.7·3 + 0.9·1) / 4
    assert run(loaded, server).results[0].score == pytest.approx(0.75)


def test_i24_7_a_custom_prompt_without_output_is_a_criterion_and_said_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = load(
        tmp_path,
        HEAD.replace("default: ok", "default: the answer is 42")
        + "tests:\n  - id: a\n    input: hi\n    assertions:\n"
        "      - {type: llm-grader, prompt: Is the reply kind?}\n"
        "      - {type: llm-grader, prompt: Is the reply short?}\n"
        "      - {type: llm-grader, prompt: 'Reply: {{ output }}. Is it true?'}\n",
    )
    assert [m for m in differences(loaded) if "whole request" in m] == [
        "s.eval.yaml:10 tests[0].assertions[0].prompt: AgentV sends an llm-grader's own prompt "
        "as the judge's whole request, so a prompt without `{{ output }}` never shows the judge "
        "the answer; assay judges it as the criterion of its judge template, which shows the "
        "input, the answer and the reference (SPEC §5.1)"
    ]
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    prompts: list[str] = []

    def seen(body: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
        prompts.append(body["messages"][-1]["content"])
        return {"score": 1.0, "reasoning": "r", "hits": [], "misses": []}

    with FakeOpenAIServer(judge=seen) as fake:
        assert run(loaded, fake).results[0].verdict == "pass"
    kind = next(p for p in prompts if "Is the reply kind?" in p)
    assert "the answer is 42" in kind  # SPEC §5.1: the judge sees the answer
