"""`assay run` with LLM judges, as a user runs it: the judge flags, and the exit-2 message when
a suite needs a judge it does not have."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.testing import FakeOpenAIServer
from tests.conftest import write
from tests.e2e._cli import assay

SUITE = """\
name: judged-cli
target: {type: fake, responses: {"refund?": "Refunds within 30 days."}}
tests:
  - id: refund
    input: "refund?"
    expected_outcomes: ["States the 30-day window"]
    assertions:
      - {type: llm-grader, prompt: "The reply is polite."}
"""


def judge(body: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    if "outcomes" in schema.get("properties", {}):
        return {"outcomes": {"1": {"passed": True, "justification": "yes"}}}
    return {"score": 0.9, "reasoning": "polite"}


def test_judge_flags_point_every_judge_at_a_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "j.eval.yaml", SUITE)
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    with FakeOpenAIServer(judge=judge) as server:
        done = assay(
            "run",
            "j.eval.yaml",
            "--no-cache",
            "--judge-model",
            "cli-judge",
            "--judge-base-url",
            server.base_url,
            cwd=tmp_path,
        )
        models = {r["model"] for r in server.requests}
    assert done.returncode == 0, done.stderr
    assert models == {"cli-judge"}
    assert "2 judge calls" in done.stdout and "judge " in done.stdout


def test_a_suite_needing_a_judge_without_one_exits_2_with_the_fix(tmp_path: Path) -> None:
    write(tmp_path / "j.eval.yaml", SUITE)
    done = assay("run", "j.eval.yaml", "--no-cache", cwd=tmp_path)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert (
        "j.eval.yaml:6 tests[0].expected_outcomes: needs an LLM judge and none is configured"
        in done.stderr
    )
    assert "j.eval.yaml:8 tests[0].assertions[0]: needs an LLM judge" in done.stderr


def test_validate_reports_the_missing_judge_unless_one_is_given(tmp_path: Path) -> None:
    write(tmp_path / "j.eval.yaml", SUITE)
    missing = assay("validate", "j.eval.yaml", cwd=tmp_path)
    given = assay("validate", "j.eval.yaml", "--judge-model", "gpt-4.1-mini", cwd=tmp_path)
    assert missing.returncode == 2 and "needs an LLM judge" in missing.stderr
    assert given.returncode == 0, given.stderr
    assert "ok  j.eval.yaml: suite 'judged-cli', 1 test" in given.stdout
