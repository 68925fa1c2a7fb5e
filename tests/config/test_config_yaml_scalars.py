"""YAML scalars become JSON data: dates stay the text they were written as."""

from __future__ import annotations

import json
from pathlib import Path

from assay import EvalConfig, evaluate
from assay.config import load_suite
from tests.conftest import write

SUITE = """\
name: dated
target: {type: fake, default: "Delivered on 2024-03-05."}
tests:
  - id: t1
    input: when?
    expected_output: 2024-03-05
    metadata: {released: 2024-03-05, at: 2024-03-05T10:00:00Z, count: 3}
    assertions: [{type: contains}]
"""


def test_dates_load_as_their_text(tmp_path: Path) -> None:
    loaded = load_suite(write(tmp_path / "s.eval.yaml", SUITE))
    test = loaded.suite.tests[0]
    assert test.expected_output == "2024-03-05"
    assert test.metadata == {"released": "2024-03-05", "at": "2024-03-05T10:00:00Z", "count": 3}
    assert json.loads(loaded.document)["tests"][0]["metadata"]["released"] == "2024-03-05"


def test_a_suite_with_dates_runs_and_is_stored(tmp_path: Path) -> None:
    path = write(tmp_path / "s.eval.yaml", SUITE)
    result = evaluate(path, config=EvalConfig(store=str(tmp_path / "runs.db")))
    assert [c.verdict for c in result.results] == ["pass"]
