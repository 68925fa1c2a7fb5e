"""The JSON report: the SPEC §8 document, pinned by a snapshot of the fixed run (every verdict,
a regression, repeats, Details past the cap) and read back into the same run."""

from __future__ import annotations

import json

from assay.report import render_json, render_json_many
from assay.results import CaseResult, RunResult
from tests.report.fixtures import assert_snapshot, fixed_cases, fixed_run, second_cases, second_run


def _full(run: RunResult, cases: list[CaseResult]) -> RunResult:
    return run.model_copy(update={"results": cases})


def test_fixed_run_matches_the_snapshot() -> None:
    assert_snapshot("support-bot.json", render_json(_full(fixed_run(), fixed_cases())) + "\n")


def test_the_document_reads_back_into_the_same_run() -> None:
    run = _full(fixed_run(), fixed_cases())
    assert RunResult.model_validate_json(render_json(run)) == run


def test_several_runs_make_a_list_in_order() -> None:
    runs = [_full(fixed_run(), fixed_cases()), _full(second_run(), second_cases())]
    documents = json.loads(render_json_many(runs))
    assert [d["id"] for d in documents] == [fixed_run().id, second_run().id]
    assert documents[0] == json.loads(render_json(runs[0]))
