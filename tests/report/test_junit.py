"""The JUnit report: pinned by a snapshot, valid against the JUnit schema CI systems read, and
streamed (two passes over the cases, none of them held)."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import xmlschema

from assay.report import render_junit, write_junit
from assay.results import CaseResult, ErrorInfo, GraderResult, RetrievedPassage
from tests.report.fixtures import (
    EVIL_OUTPUT,
    assert_snapshot,
    fixed_cases,
    fixed_run,
    second_cases,
    second_run,
)

SCHEMA = xmlschema.XMLSchema(Path(__file__).with_name("junit.xsd"))


def _both() -> str:
    return render_junit([(fixed_run(), fixed_cases()), (second_run(), second_cases())])


def test_two_runs_match_the_snapshot() -> None:
    assert_snapshot("support-bot-and-billing.xml", _both())


def test_the_report_is_valid_junit() -> None:
    SCHEMA.validate(_both())


def test_the_schema_rejects_what_ci_systems_reject() -> None:
    # A test that could not fail proves nothing: the schema must catch a missing count.
    broken = _both().replace(' failures="0" errors="0" skipped="0"', ' errors="0"', 1)
    assert not SCHEMA.is_valid(broken)


def _suites() -> list[ET.Element]:
    return ET.fromstring(_both()).findall("testsuite")


def test_counts_match_the_testcases() -> None:
    root = ET.fromstring(_both())
    for suite in root.findall("testsuite"):
        cases = suite.findall("testcase")
        assert suite.get("tests") == str(len(cases))
        assert suite.get("failures") == str(sum(c.find("failure") is not None for c in cases))
        assert suite.get("errors") == str(sum(c.find("error") is not None for c in cases))
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("11", "5", "2")


def test_one_testcase_per_case_and_per_sample() -> None:
    names = [c.get("name") for c in _suites()[0].findall("testcase")]
    assert names == [
        "greeting",
        "refund-policy",
        "tone-check",
        "slow-lookup",
        "judge-crash",
        "flaky-answer[sample 0]",
        "flaky-answer[sample 1]",
        "flaky-answer[sample 2]",
        "safe-conversation",
    ]


def test_failures_carry_score_threshold_misses_and_details() -> None:
    cases = {c.get("name"): c for c in _suites()[0].findall("testcase")}
    failure = cases["refund-policy"].find("failure")
    assert failure is not None and failure.get("type") == "fail"
    assert failure.get("message", "").startswith(
        "score 0.40 (threshold 0.80, borderline from 0.60); mentions-refund: missing 'refund'"
    )
    body = failure.text or ""
    assert "✗ json_path.$.items[9].amount: expected 90, actual 91 | </details>" in body
    assert "json_path.$.items[10]" not in body
    assert "+ 3 more failed checks" in body and "+ 2 more failed checks" in body
    borderline = cases["tone-check"].find("failure")
    assert borderline is not None and borderline.get("type") == "borderline"
    error = cases["slow-lookup"].find("error")
    assert error is not None
    assert (error.get("type"), error.get("message")) == (
        "TargetTimeout",
        "no reply within 30 s (3 attempts)",
    )
    assert list(cases["greeting"]) == []


def test_output_that_xml_cannot_hold_is_made_visible() -> None:
    cases = {c.get("name"): c for c in _suites()[0].findall("testcase")}
    out = cases["refund-policy"].find("system-out")
    assert out is not None and out.text == EVIL_OUTPUT.replace("\x1b", "\\x1b")
    nul = fixed_cases()[3].model_copy(
        update={"error": ErrorInfo(type="Crash\x00", message="bad \x00 byte \ufffe")}
    )
    document = render_junit([(fixed_run(), [nul])])
    SCHEMA.validate(document)
    assert 'message="bad \\x00 byte \ufffd"' in document


def test_the_writer_reads_each_source_twice_and_streams() -> None:
    calls = 0

    def source() -> Iterator[CaseResult]:
        nonlocal calls
        calls += 1
        yield from fixed_cases()

    out = io.StringIO()
    write_junit(out, [(fixed_run(), source)])
    assert calls == 2
    assert out.getvalue() == render_junit([(fixed_run(), fixed_cases())])


def test_i21_10_a_fallback_is_named_in_the_failure_and_counted_in_the_properties() -> None:
    tone = GraderResult(
        name="tone",
        type="tone",
        score=0.5,
        verdict="fail",
        fallback="judged tone → heuristic: judge failed: HTTP 503",
    )
    case = CaseResult(case_id="t", score=0.5, verdict="fail", threshold=0.8, grader_results=[tone])
    run = fixed_run()
    run = run.model_copy(
        update={"summary": run.summary.model_copy(update={"judge_fallback_count": 1})}
    )
    root = ET.fromstring(render_junit([(run, [case])]))
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None and failure.text is not None
    assert "  fail tone (tone): score 0.50, weight 1\n    fell back: judged tone → heuristic: " in (
        failure.text
    )
    properties = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert (properties["assay.judge_fallback_count"], properties["assay.error_count"]) == (
        "1",
        "2",
    )


def test_i26_1_a_failure_shows_the_retrieved_context_after_the_output() -> None:
    passages = [RetrievedPassage(id="refunds", text="Refunds within 30 days.", score=0.5)]
    failing = next(c for c in fixed_cases() if c.case_id == "tone-check")
    document = render_junit([(fixed_run(), [failing.model_copy(update={"context": passages})])])
    SCHEMA.validate(document)
    [case] = ET.fromstring(document).iter("testcase")
    out = case.find("system-out")
    assert out is not None
    assert (
        out.text
        == "Calm down.\n\nretrieved context:\n[1] refunds (score 0.5) Refunds within 30 days."
    )
