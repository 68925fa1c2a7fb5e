"""Where an AgentV file scores differently in assay, said once per file with a located warning.

AgentV's code and SPEC disagree in a few places; SPEC wins where it speaks (issue 24 item 7),
and each difference a rewritten AgentV document meets is named where it first shows:

- borderline: AgentV's verdicts are pass and fail only; assay gives `borderline` to a case
  scoring from the borderline bound (0.6 by default) up to its threshold (SPEC §1);
- a hair under the threshold: AgentV passes a case when `score >= threshold` exactly, so the
  mean 0.7999999999999999 of 0.7, 0.8 and 0.9 fails a 0.8 threshold; assay forgives float noise
  under 1e-9 (SPEC §1: a mean that is mathematically the threshold reaches it);
- a failed `required` rubric item fails the rubric grader in AgentV and leaves the case score
  alone; in assay it also sets the case score to 0 (SPEC §5.2).

(A composite member's own `weight`, which AgentV ignores, is said where the composite is
rewritten, in assay.interop.agentv._graders.)
"""

from __future__ import annotations

from collections.abc import Iterator

from assay.config._yaml import LocPath, SourceMap
from assay.errors import ConfigIssue
from assay.results import JSON

__all__ = ["semantic_warnings"]

_BORDERLINE = (
    "AgentV's verdicts are pass and fail only: a case scoring from 0.6 up to its threshold "
    "fails in AgentV and is `borderline` in assay (SPEC §1); add `verdicts: {borderline: "
    "null}` under `execution` for AgentV's two verdicts"
)
_HAIR = (
    "this test's score is a mean of several scores: AgentV fails a mean a float-rounding hair "
    "under the threshold (0.7999999999999999 from 0.7, 0.8 and 0.9 against 0.8), assay passes "
    "it (a score within 1e-9 of the threshold reaches it, SPEC §1)"
)
_REQUIRED_ITEM = (
    "a failed `required` rubric item fails this rubric grader in AgentV and leaves the case "
    "score as it is; in assay it also sets the case score to 0 (SPEC §5.2)"
)


def semantic_warnings(data: dict[str, JSON], source: SourceMap) -> list[ConfigIssue]:
    """The differences a rewritten AgentV document meets, each once, where it first shows."""
    warnings: list[ConfigIssue] = []
    if not _borderline_off(data.get("execution")):
        where = ("execution", "threshold") if _has_threshold(data) else ("tests",)
        warnings.append(source.issue(where, _BORDERLINE))
    tests = data.get("tests")
    tests = tests if isinstance(tests, list) else []
    defaults = _scoring(data.get("assertions"))
    hair = next(
        (
            i
            for i, t in enumerate(tests)
            if isinstance(t, dict) and _is_mean(t, defaults, data.get("execution"))
        ),
        None,
    )
    if hair is not None:
        warnings.append(source.issue(("tests", hair), _HAIR))
    required = next(_required_items(data, tests), None)
    if required is not None:
        warnings.append(source.issue(required, _REQUIRED_ITEM))
    return warnings


def _has_threshold(data: dict[str, JSON]) -> bool:
    execution = data.get("execution")
    return isinstance(execution, dict) and "threshold" in execution


def _borderline_off(execution: JSON) -> bool:
    verdicts = execution.get("verdicts") if isinstance(execution, dict) else None
    return (
        isinstance(verdicts, dict) and "borderline" in verdicts and verdicts["borderline"] is None
    )


def _scoring(graders: JSON) -> list[dict[str, JSON]]:
    """The graders of a list that count in the score (weight > 0)."""
    out: list[dict[str, JSON]] = []
    for grader in graders if isinstance(graders, list) else []:
        if isinstance(grader, dict) and grader.get("weight", 1) != 0:
            out.append(grader)
    return out


def _is_mean(test: dict[str, JSON], defaults: list[dict[str, JSON]], execution: JSON) -> bool:
    """Whether the test's score is a mean of several scores (graders or rubric items)."""
    skip = isinstance(execution, dict) and execution.get("skip_defaults") is True
    own = test.get("execution")
    skip = skip or (isinstance(own, dict) and own.get("skip_defaults") is True)
    graders = _scoring(test.get("assertions")) + ([] if skip else defaults)
    rubric_items = test.get("rubrics")
    parts = len(graders) + (1 if isinstance(rubric_items, list) and rubric_items else 0)
    if parts > 1:
        return True
    return any(len(_list(g.get("rubrics"))) > 1 or g.get("type") == "composite" for g in graders)


def _required_items(data: dict[str, JSON], tests: list[JSON]) -> Iterator[LocPath]:
    """Where rubric items with `required: true` are, in document order."""
    yield from _required_in(data.get("assertions"), ("assertions",))
    for i, test in enumerate(tests):
        if not isinstance(test, dict):
            continue
        for n, item in enumerate(_list(test.get("rubrics"))):
            if isinstance(item, dict) and item.get("required") is True:
                yield ("tests", i, "rubrics", n, "required")
        yield from _required_in(test.get("assertions"), ("tests", i, "assertions"))


def _required_in(graders: JSON, path: LocPath) -> Iterator[LocPath]:
    for g, grader in enumerate(_list(graders)):
        if not isinstance(grader, dict):
            continue
        for n, item in enumerate(_list(grader.get("rubrics"))):
            if isinstance(item, dict) and item.get("required") is True:
                yield (*path, g, "rubrics", n, "required")
        yield from _required_in(grader.get("assertions"), (*path, g, "assertions"))


def _list(value: JSON) -> list[JSON]:
    return value if isinstance(value, list) else []
