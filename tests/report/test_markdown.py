"""The Markdown report: pinned by a snapshot, and rendered by a CommonMark parser to prove that
no model output breaks its tables or collapsible sections."""

from __future__ import annotations

import io
from collections.abc import Iterator
from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt
from rich.console import Console

from assay.report import MARKDOWN_VERDICTS, markdown_chunks, render_markdown, render_run
from assay.report._escape import fence, md_code, md_text
from assay.results import CaseResult, ErrorInfo, GraderResult, RetrievedPassage
from tests.report.fixtures import (
    EVIL_OUTPUT,
    assert_snapshot,
    fixed_cases,
    fixed_run,
    second_cases,
    second_run,
)


def _failing() -> list[CaseResult]:
    return [c for c in fixed_cases() if c.verdict in MARKDOWN_VERDICTS]


def test_fixed_run_matches_the_snapshot() -> None:
    assert_snapshot("support-bot.md", render_markdown(fixed_run(), _failing()))


def test_passing_run_matches_the_snapshot() -> None:
    assert_snapshot("billing.md", render_markdown(second_run(), second_cases()))


def test_passing_cases_given_to_the_renderer_are_skipped() -> None:
    assert render_markdown(fixed_run(), fixed_cases()) == render_markdown(fixed_run(), _failing())


def test_chunks_concatenate_to_the_report() -> None:
    chunks = list(markdown_chunks(fixed_run(), _failing()))
    assert len(chunks) == 8  # the summary, the title, then one chunk per case
    assert "".join(chunks) == render_markdown(fixed_run(), _failing())


def test_cases_stop_before_the_section_outgrows_a_comment() -> None:
    full = render_markdown(fixed_run(), _failing())
    refund = full.index("#### ❌ `refund-policy`")
    tone = full.index("#### 🟡 `tone-check`")
    slow = full.index("#### 💥 `slow-lookup`")
    # Room for the first two cases but not the third: the list stops there.
    text = render_markdown(fixed_run(), _failing(), max_chars=slow + 1)
    assert text[:slow] == full[:slow]
    assert "slow-lookup`:" not in text and "… and 4 more." in text
    # The first case is listed however long it is.
    first = render_markdown(fixed_run(), _failing(), max_chars=refund)
    assert first[:tone] == full[:tone] and "… and 5 more." in first


def test_cases_past_the_limit_are_counted_not_listed() -> None:
    text = render_markdown(fixed_run(), _failing(), max_cases=2)
    assert "#### ❌ `refund-policy`" in text
    assert "#### 🟡 `tone-check`" in text
    assert "slow-lookup`" not in text.split("### Cases")[1]
    assert text.endswith(
        "… and 4 more. Every case is in the JUnit and JSON reports: "
        "`assay report 20260101T090000-a1b2c3 --format junit`.\n\n"
    )


def test_the_list_stops_reading_cases_at_the_limit() -> None:
    seen: list[str] = []

    def cases() -> Iterator[CaseResult]:
        for case in _failing():
            seen.append(case.case_id)
            yield case

    render_markdown(fixed_run(), cases(), max_cases=1)
    assert seen == ["refund-policy", "tone-check"]


class _Structure(HTMLParser):
    """Records the element structure of rendered HTML: nesting errors, tags, text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: list[str] = []
        self.cells: list[str] = []
        self._cell: list[str] | None = None
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag in ("br", "hr", "img", "input"):
            return
        self.stack.append(tag)
        if tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()
        if tag in ("td", "th") and self._cell is not None:
            self.cells.append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def _render(markdown: str) -> _Structure:
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    structure = _Structure()
    structure.feed(html)
    structure.close()
    return structure


def test_model_output_cannot_break_the_structure() -> None:
    structure = _render(render_markdown(fixed_run(), _failing()))
    assert structure.errors == []
    assert structure.stack == []
    assert "script" not in structure.tags
    assert structure.tags.count("details") == 9  # 6 cases' input and output, 3 graders
    text = "".join(structure.text)
    # The hostile output survives verbatim inside its code block.
    assert EVIL_OUTPUT.replace("\x1b", "\\x1b") in text
    # A `|` and `</details>` inside a Detail stay inside their table cell.
    assert "11 | </details>" in structure.cells
    assert "Curt | dismissive.No apology </details> given." in text


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("a|b", "a\\|b"),
        ("</details>", "&lt;/details&gt;"),
        ("*x* _y_ [l](u) `c`", "\\*x\\* \\_y\\_ \\[l\\](u) \\`c\\`"),
        ("two\nlines", "two<br>lines"),
        ("&amp;", "&amp;amp;"),
        ("bell\x07", "bell\\\\x07"),
    ],
)
def test_inline_text_is_escaped(value: str, expected: str) -> None:
    assert md_text(value) == expected


def test_code_spans_and_fences_outgrow_the_backticks_inside() -> None:
    assert md_code("a`b") == "``a`b``"
    assert md_code("`x`") == "`` `x` ``"
    assert md_code("a|b", table=True) == "`a\\|b`"
    assert fence("x ```` y").startswith("`````text\n")
    assert fence("plain") == "```text\nplain\n```"


def test_each_run_renders_on_its_own() -> None:
    # Several runs in one report are these sections one after another (see cli/_reports.py).
    first = render_markdown(fixed_run(), _failing())
    second = render_markdown(second_run(), [])
    assert first.startswith("## ❌ FAILED: support-bot → bot-v2\n")
    assert second.startswith("## ✅ PASSED: billing → bot-v2\n")
    assert "Cases that did not pass" not in second


def test_the_heading_names_a_run_that_did_not_complete() -> None:
    run = fixed_run().model_copy(update={"status": "interrupted", "regression": None})
    text = render_markdown(run, [])
    assert text.startswith("## ⏸️ INTERRUPTED: support-bot → bot-v2\n")
    assert "regression" not in text and "Regressed case" not in text


def _fell_back_case() -> CaseResult:
    facts = GraderResult(
        name="facts",
        type="factuality",
        score=0.4,
        verdict="fail",
        misses=["1 claim unsupported"],
        fallback="deep factuality → shallow: judge failed: HTTP 503",
    )
    return CaseResult(
        case_id="facts-case", score=0.4, verdict="fail", threshold=0.8, grader_results=[facts]
    )


def test_i21_10_fallbacks_are_counted_in_the_header_and_named_per_grader() -> None:
    run = fixed_run()
    run = run.model_copy(
        update={"summary": run.summary.model_copy(update={"judge_fallback_count": 1})}
    )
    text = render_markdown(run, [_fell_back_case()])
    assert (
        "💥 **2 errors: results incomplete** · ⚠️ **1 judged check fell back** (the judge could "
        "not answer; another method decided)\n" in text
    )
    assert (
        "| facts | factuality | 0.40 | ❌ fail | fell back: deep factuality → shallow: judge "
        "failed: HTTP 503; 1 claim unsupported |" in text
    )
    assert ", 1 fell back)" in text  # the spend table's judge row


def test_i21_10_an_outcomes_fallback_names_its_judge_error_once() -> None:
    message = "judge m: no valid reply after 3 attempts"
    outcomes = GraderResult(
        name="expected_outcomes",
        type="expected-outcomes",
        score=None,
        verdict="error",
        weight=0.0,
        error=ErrorInfo(type="JudgeError", message=message),
        fallback=f"expected outcomes → score: JudgeError: {message}",
    )
    case = CaseResult(
        case_id="o", score=0.4, verdict="fail", threshold=0.8, grader_results=[outcomes]
    )
    text = render_markdown(fixed_run(), [case])
    assert text.count(message) == 1, text
    console = Console(file=io.StringIO(), width=400, highlight=False, color_system=None)
    render_run(console, fixed_run(), [case], breakdown=[case])
    assert console.file.getvalue().count(message) == 1  # type: ignore[attr-defined]


def test_i26_1_the_retrieved_context_is_shown_with_the_output() -> None:
    failing = _failing()[0]
    passages = [
        RetrievedPassage(id="refunds", text="Refunds are issued within 30 days.", score=0.91),
        RetrievedPassage(text="Ünïcode passage"),
    ]
    case = failing.model_copy(update={"context": passages})
    text = render_markdown(fixed_run(), [case])
    assert "<details><summary>input, output and retrieved context</summary>" in text
    assert (
        "**retrieved context**\n\n```text\n[1] refunds (score 0.91) Refunds are issued within 30 "
        "days.\n[2] Ünïcode passage\n```" in text
    )
    assert "retrieved context" not in render_markdown(fixed_run(), [failing])


def test_i25_4_an_image_input_shows_its_text_and_a_placeholder() -> None:
    from assay._content import abbreviated

    data = "data:image/png;base64," + "A" * 40_000
    parts = [{"type": "text", "text": "What is this?"}, {"type": "image_url",
                                                       "image_url": {"url": data}}]  # fmt: skip
    (case, *_) = [c for c in fixed_cases() if c.verdict == "fail"]
    case = case.model_copy(update={"input": abbreviated([{"role": "user", "content": parts}])})
    markdown = render_markdown(fixed_run(), [case])
    assert '"content": "What is this?\\n[image: data:image/png (30000 bytes)]"' in markdown
    assert "AAAA" not in markdown
