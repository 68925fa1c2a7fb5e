"""The JSON report: the SPEC §8 document, pinned by a snapshot of the fixed run (every verdict,
a regression, repeats, Details past the cap) and read back into the same run."""

from __future__ import annotations

import json
from collections.abc import Iterator

from assay.report import (
    json_chunks,
    json_chunks_many,
    render_json,
    render_json_many,
)
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


def test_i23_3_the_streamed_document_is_the_rendered_one_text_for_text() -> None:
    run, cases = fixed_run(), fixed_cases()
    streamed = "".join(json_chunks(run, (c.model_dump_json() for c in cases)))
    assert streamed == render_json(_full(run, cases))
    assert "".join(json_chunks(run, iter([]))) == render_json(_full(run, []))


def test_i23_3_the_streamed_document_takes_one_case_result_at_a_time() -> None:
    taken: list[str] = []

    def results() -> Iterator[str]:
        for case in fixed_cases():
            taken.append(case.case_id)
            yield case.model_dump_json()

    chunks = json_chunks(fixed_run(), results())
    written = next(chunks)  # the run's head is written before any case result is read
    assert taken == [] and written.startswith("{")
    for chunk in chunks:
        written += chunk
        assert len(taken) <= written.count('"case_id"') + 1
    assert len(taken) == len(fixed_cases())


def test_i23_3_several_streamed_runs_are_the_rendered_list() -> None:
    pairs = [(fixed_run(), fixed_cases()), (second_run(), second_cases())]
    streamed = "".join(
        json_chunks_many((run, (c.model_dump_json() for c in cases)) for run, cases in pairs)
    )
    rendered = render_json_many([_full(run, cases) for run, cases in pairs])
    assert json.loads(streamed) == json.loads(rendered)
    assert json.loads("".join(json_chunks_many([]))) == []


def test_i23_3_stored_documents_are_indented_as_the_model_dumps_them() -> None:
    """`assay run --json` indents a fresh run's stored documents without parsing them into
    models: numbers, escapes and key order must come out as the model's own dump has them."""
    awkward: list[object] = [
        0.1 + 0.2,
        1e-7,
        1e22,
        -0.0,
        2**70,
        -(2**63),
        'é \u2028 \u0000 \t "quoted" \\ 😀 </script>',
        {"nested": [[], {}, [1, [2, {"k": None}]]], "empty": ""},
        True,
    ]
    odd = fixed_cases()[0].model_copy(
        update={
            "input": awkward,
            "output": "line one\nline two\r\n\u00a0é😀",
            "cost_usd": 1.0000000000000002e-05,
            "duration_ms": 123.456,
        }
    )
    cases = [odd, *fixed_cases()]
    run = fixed_run()
    streamed = "".join(json_chunks(run, (c.model_dump_json() for c in cases)))
    assert streamed == render_json(_full(run, cases))
