"""Grade one output produced elsewhere: a one-case run through the same core as `evaluate`.

For checks inside ordinary code and tests (the pytest fixture `assay_grade`): the output is
given, graders and expected values are passed as arguments, and the case result comes back
with its score, verdict and every grader result, scored exactly as a suite case would be.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from assay.api._callables import GraderLike
from assay.api._evaluate import EvalConfig, evaluate_async, run_sync
from assay.errors import UsageError
from assay.results import JSON, CaseResult

__all__ = ["GRADED_CASE_ID", "grade", "grade_async"]

GRADED_CASE_ID = "output"
"""The case id of a graded output."""


async def grade_async(
    output: str | Mapping[str, JSON],
    *,
    graders: Sequence[GraderLike] = (),
    expected: JSON = None,
    input: JSON = "",
    context: Sequence[str] = (),
    expected_outcomes: Sequence[str] = (),
    expected_tool_calls: Sequence[Mapping[str, JSON]] = (),
    metadata: Mapping[str, JSON] | None = None,
    config: EvalConfig | None = None,
    expected_context_ids: Sequence[str] = (),
) -> CaseResult:
    """Grade `output` and return the case result (`score`, `verdict`, `grader_results`).

    Args:
        output: The text to grade, or the structured output mapping a `python` target may
            return (`{output, tool_calls, messages, context, ...}`) for tool-call graders and
            the RAG graders (`context`: the passages retrieved).
        graders: Grader objects, YAML-style mappings or grader functions, as for `evaluate`.
        expected: The reference answer (the test's `expected_output`).
        input: The prompt that produced the output, for graders and judges that read it.
        context: Grounding documents (the test's `context`).
        expected_outcomes: Statements the LLM judge checks (needs a judge).
        expected_tool_calls: Tool calls the output should show (`{tool, args}` mappings).
        metadata: The test's `metadata`, for templates and grader functions.
        config: Threshold, verdict bands and judge settings; a graded output is never
            stored, so `store` is ignored.
        expected_context_ids: The ids of the passages the retriever should have returned
            (the `retrieval` grader's relevant set).

    Raises:
        UsageError: Nothing to grade with (no graders and no expected outcomes).
        ConfigError: A grader cannot grade this case (e.g. it needs `expected`).
    """
    if not graders and not expected_outcomes:
        raise UsageError("nothing to grade with: pass graders=[...] or expected_outcomes=[...]")
    test: dict[str, JSON] = {"id": GRADED_CASE_ID, "input": input}
    optional: dict[str, JSON] = {
        "expected_output": expected,
        "context": list(context),
        "expected_outcomes": list(expected_outcomes),
        "expected_tool_calls": [dict(call) for call in expected_tool_calls],
        "expected_context_ids": list(expected_context_ids),
        "metadata": dict(metadata or {}),
    }
    test.update({key: value for key, value in optional.items() if value not in (None, [], {})})
    produced = dict(output) if isinstance(output, Mapping) else output

    def replay(case: dict[str, JSON]) -> JSON:
        del case
        return produced

    settings = (config or EvalConfig()).model_copy(update={"store": False})
    run = await evaluate_async([test], target=replay, graders=graders, config=settings)
    return run.results[0]


def grade(
    output: str | Mapping[str, JSON],
    *,
    graders: Sequence[GraderLike] = (),
    expected: JSON = None,
    input: JSON = "",
    context: Sequence[str] = (),
    expected_outcomes: Sequence[str] = (),
    expected_tool_calls: Sequence[Mapping[str, JSON]] = (),
    metadata: Mapping[str, JSON] | None = None,
    config: EvalConfig | None = None,
    expected_context_ids: Sequence[str] = (),
) -> CaseResult:
    """Synchronous `grade_async` (starts its own event loop; use `grade_async` inside one)."""
    return run_sync(
        lambda: grade_async(
            output,
            graders=graders,
            expected=expected,
            input=input,
            context=context,
            expected_outcomes=expected_outcomes,
            expected_tool_calls=expected_tool_calls,
            metadata=metadata,
            config=config,
            expected_context_ids=expected_context_ids,
        ),
        "grade",
    )
