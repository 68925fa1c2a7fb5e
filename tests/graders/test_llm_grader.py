"""llm-grader (SPEC §5.1) through the real SDK against the local server's scripted judge."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.graders._grading import error_of
from tests.graders._judging import grade_judged

from assay.testing import FakeOpenAIServer, fail_first

CRITERION = {"type": "llm-grader", "prompt": "The reply is polite."}


def test_the_judges_score_reasoning_hits_and_misses_become_the_result() -> None:
    reply = {"score": 0.9, "reasoning": "Polite and clear.", "hits": ["greets"], "misses": []}
    with FakeOpenAIServer(judge=reply) as server:
        result = grade_judged(CRITERION, "Hello! Happy to help.", server)
        body = server.requests[-1]
    assert (result.score, result.verdict, result.error) == (0.9, "pass", None)
    assert (result.reasoning, result.hits, result.misses) == ("Polite and clear.", ["greets"], [])
    assert result.judge_model == "judge-model"
    assert result.judge_prompt is not None and result.judge_prompt.startswith("llm-grader+inline@")
    assert result.token_usage is not None and result.token_usage.input > 0
    assert body["response_format"]["type"] == "json_schema"
    user = body["messages"][1]["content"]
    assert "The reply is polite." in user and "Hello! Happy to help." in user


def test_a_low_score_fails_against_the_threshold() -> None:
    with FakeOpenAIServer(judge={"score": 0.3}) as server:
        result = grade_judged(CRITERION, "Go away.", server)
    assert (result.score, result.verdict) == (0.3, "fail")


def test_schema_invalid_replies_are_re_asked_twice_then_the_grader_errors() -> None:
    with FakeOpenAIServer(judge={"score": 7}) as server:
        result = grade_judged(CRITERION, "Hi", server)
        asked = server.request_count
        retry = server.requests[-1]["messages"]
    assert result.score is None and result.verdict == "error"
    assert result.error is not None and result.error.type == "JudgeError"
    assert "no valid reply after 3 attempts" in result.error.message
    assert "less than or equal to 1" in result.error.message
    assert asked == 3
    assert retry[-1]["role"] == "user" and "not valid" in retry[-1]["content"]
    assert result.judge_model == "judge-model"  # counted as a judge call that failed
    assert result.token_usage is not None  # the failed attempts still cost tokens


def test_a_reply_that_becomes_valid_on_the_re_ask_is_used() -> None:
    answers = iter([{"score": 3}, {"score": 0.8}])
    with FakeOpenAIServer(judge=lambda body, schema: next(answers)) as server:
        result = grade_judged(CRITERION, "Hi", server)
        asked = server.request_count
    assert (result.score, asked) == (0.8, 2)


def test_http_failures_are_retried_then_become_an_error_never_a_score() -> None:
    with FakeOpenAIServer(judge={"score": 1.0}, faults={"500": 1.0}) as server:
        result = grade_judged(CRITERION, "Hi", server)
        asked = server.request_count
    assert result.score is None and result.verdict == "error"
    assert result.error is not None and "HTTP 500" in result.error.message
    assert asked == 4  # the first request and 3 retries


def test_a_transient_failure_is_retried_transparently() -> None:
    with FakeOpenAIServer(judge={"score": 1.0}, fault=fail_first(1, "429")) as server:
        result = grade_judged(CRITERION, "Hi", server)
    assert (result.score, result.error) == (1.0, None)


@pytest.mark.parametrize(
    ("modes", "used"),
    [(("json_object",), "json_object"), ((), None)],
)
def test_servers_without_structured_output_fall_back(
    modes: tuple[str, ...], used: str | None
) -> None:
    with FakeOpenAIServer(judge={"score": 0.85}, output_modes=modes) as server:
        result = grade_judged(CRITERION, "Hi", server)
        last = server.requests[-1]
    assert result.score == 0.85
    assert (last.get("response_format") or {}).get("type") == used


def test_a_criterion_showing_the_output_is_the_whole_prompt() -> None:
    spec = {"type": "llm-grader", "prompt": "Rate this answer: {{ output }}. Only that."}
    with FakeOpenAIServer(judge={"score": 1.0}) as server:
        grade_judged(spec, "forty-two", server)
        user = server.requests[-1]["messages"][1]["content"]
    assert user.startswith("Rate this answer: \n<<<OUTPUT ")  # delimiters get their own lines
    assert user.endswith(">>>\n. Only that.")
    assert "reference answer" not in user


def test_the_criterion_can_come_from_a_file(tmp_path: Path) -> None:
    (tmp_path / "polite.md").write_text("Is the reply polite to {{ metadata.customer }}?")
    spec = {"type": "llm-grader", "prompt": "polite.md"}
    with FakeOpenAIServer(judge={"score": 1.0}) as server:
        result = grade_judged(
            spec, "Hi Ann", server, base_dir=tmp_path, metadata={"customer": "Ann"}
        )
        user = server.requests[-1]["messages"][1]["content"]
    assert "Is the reply polite to Ann?" in user
    assert result.judge_prompt is not None and "+file:polite.md@" in result.judge_prompt


def test_without_a_judge_the_grader_errors_with_how_to_configure_one() -> None:
    result = grade_judged(CRITERION, "Hi", None)
    assert result.error is not None and "--judge-model" in result.error.message


def test_a_broken_inline_template_is_rejected_when_the_suite_loads() -> None:
    message = error_of({"type": "llm-grader", "prompt": "Is it {{ output\nfine?"})
    assert "line 2: expected token" in message


def test_unknown_template_variables_are_rejected_when_the_suite_loads() -> None:
    message = error_of({"type": "llm-grader", "prompt": "Is {{ outptu }} fine?\nSay."})
    assert "unknown variable(s) outptu" in message


def test_a_prompt_file_is_read_once_for_every_test_that_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every test has its own grader objects; the template is built once per process, not
    # once per case (the file read, the check that a one-line prompt is no file, the parse).
    (tmp_path / "kind.md").write_text("Is the reply kind?")
    reads: list[str] = []
    read_text = Path.read_text

    def counting(self: Path, *args: object, **kwargs: object) -> str:
        if self.name == "kind.md":
            reads.append(self.name)
        return read_text(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_text", counting)
    spec = {"type": "llm-grader", "prompt": "kind.md"}
    with FakeOpenAIServer(judge={"score": 1.0}) as server:
        first = grade_judged(spec, "Thanks!", server, base_dir=tmp_path)
        second = grade_judged(dict(spec), "Thank you!", server, base_dir=tmp_path)
        prompts = [r["messages"][1]["content"] for r in server.requests]
    assert first.score == second.score == 1.0
    assert all("Is the reply kind?" in p for p in prompts) and len(prompts) == 2
    assert reads == ["kind.md"]
