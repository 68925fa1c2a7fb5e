"""The built-in grader registry and the discriminated union that validates grader specs."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError
from tests.graders._grading import SPEC

from assay.graders import (
    BUILTIN_GRADERS,
    AgentJudge,
    AnswerRelevancy,
    Bleu,
    CodeGrader,
    Composite,
    Contains,
    ContainsAll,
    ContainsAny,
    ContainsJson,
    ContainsXml,
    ContextPrecision,
    ContextRecall,
    Cost,
    EndsWith,
    Equals,
    ExecutionMetrics,
    Factuality,
    Faithfulness,
    FieldAccuracy,
    FinishReason,
    Format,
    Grader,
    IContains,
    IsJson,
    IsSql,
    IsXml,
    JsonSchema,
    Latency,
    Levenshtein,
    LlmGrader,
    Moderation,
    Pii,
    Regex,
    Retrieval,
    Rouge,
    Rubrics,
    SemanticSimilarity,
    Similarity,
    SkillTrigger,
    StartsWith,
    TokenUsageLimit,
    Tone,
    ToolTrajectory,
    Transform,
    ValidToolCalls,
)

EXPECTED = {
    "equals": Equals,
    "contains": Contains,
    "icontains": IContains,
    "contains-any": ContainsAny,
    "contains-all": ContainsAll,
    "starts-with": StartsWith,
    "ends-with": EndsWith,
    "regex": Regex,
    "is-json": IsJson,
    "json-schema": JsonSchema,
    "contains-json": ContainsJson,
    "field-accuracy": FieldAccuracy,
    "similarity": Similarity,
    "rouge": Rouge,
    "levenshtein": Levenshtein,
    "bleu": Bleu,
    "is-xml": IsXml,
    "contains-xml": ContainsXml,
    "is-sql": IsSql,
    "latency": Latency,
    "cost": Cost,
    "token-usage": TokenUsageLimit,
    "execution-metrics": ExecutionMetrics,
    "finish-reason": FinishReason,
    "tool-trajectory": ToolTrajectory,
    "valid-tool-calls": ValidToolCalls,
    "skill-trigger": SkillTrigger,
    "format": Format,
    "factuality": Factuality,
    "faithfulness": Faithfulness,
    "retrieval": Retrieval,
    "context-precision": ContextPrecision,
    "context-recall": ContextRecall,
    "answer-relevancy": AnswerRelevancy,
    "semantic-similarity": SemanticSimilarity,
    "pii": Pii,
    "moderation": Moderation,
    "tone": Tone,
    "code-grader": CodeGrader,
    "llm-grader": LlmGrader,
    "rubrics": Rubrics,
    "agent-judge": AgentJudge,
    "composite": Composite,
    "transform": Transform,
}

MINIMAL: dict[str, dict[str, Any]] = {
    "equals": {},
    "contains": {},
    "icontains": {},
    "contains-any": {"value": ["x"]},
    "contains-all": {"value": ["x"]},
    "starts-with": {},
    "ends-with": {},
    "regex": {"value": "x"},
    "is-json": {},
    "json-schema": {"schema": {"type": "object"}},
    "contains-json": {},
    "field-accuracy": {"fields": [{"path": "$.total", "expected": 3}]},
    "similarity": {"value": "x"},
    "rouge": {"value": "x"},
    "levenshtein": {"value": "x"},
    "bleu": {"value": "x"},
    "is-xml": {},
    "contains-xml": {},
    "is-sql": {},
    "latency": {"max_ms": 1},
    "cost": {"max_usd": 1},
    "token-usage": {"max_total": 1},
    "execution-metrics": {"max_tool_calls": 1},
    "finish-reason": {"value": "stop"},
    "tool-trajectory": {"expected": [{"tool": "x"}]},
    "valid-tool-calls": {"tools": [{"name": "x"}]},
    "skill-trigger": {"skill": "x"},
    "format": {"checks": {"json_validity": True}},
    "factuality": {},
    "faithfulness": {},
    "retrieval": {"metric": "ndcg", "k": 3},
    "context-precision": {},
    "context-recall": {},
    "answer-relevancy": {},
    "semantic-similarity": {"value": "x"},
    "pii": {},
    "moderation": {},
    "tone": {"profile": {"formality": "formal"}},
    "code-grader": {"command": ["true"]},
    "llm-grader": {"prompt": "Is it right?"},
    "rubrics": {"rubrics": [{"id": "a", "outcome": "x"}]},
    "agent-judge": {},
    "composite": {"assertions": [{"type": "is-json"}]},
    "transform": {"command": ["true"], "assertion": {"type": "is-json"}},
}


def test_builtin_graders_are_exactly_the_canonical_type_names() -> None:
    assert BUILTIN_GRADERS == EXPECTED
    assert list(BUILTIN_GRADERS) == list(EXPECTED)


def test_every_builtin_is_a_grader_whose_type_matches_its_key() -> None:
    for name, cls in BUILTIN_GRADERS.items():
        assert issubclass(cls, Grader)
        assert "_" not in name
        grader = SPEC.validate_python({"type": name, **MINIMAL[name]})
        assert type(grader) is cls
        assert grader.type == name
        assert grader.display_name == name


def test_grader_spec_covers_every_builtin() -> None:
    assert set(MINIMAL) == set(BUILTIN_GRADERS)


@pytest.mark.parametrize("name", ["contain", "contains_any", "llm_judge", "Contains", ""])
def test_unknown_type_fails_with_union_tag_invalid(name: str) -> None:
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python({"type": name, "value": "x"})
    errors = info.value.errors()
    assert len(errors) == 1
    assert errors[0]["type"] == "union_tag_invalid"
    assert errors[0]["ctx"]["tag"] == name
    assert errors[0]["ctx"]["expected_tags"] == ", ".join(f"'{n}'" for n in EXPECTED)


def test_missing_type_fails_with_union_tag_not_found() -> None:
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python({"value": "x"})
    assert info.value.errors()[0]["type"] == "union_tag_not_found"
