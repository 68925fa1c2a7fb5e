"""The built-in grader registry and the discriminated union that validates grader specs."""

from __future__ import annotations

import ast
import importlib
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError
from tests.graders._grading import SPEC

import assay.graders
import assay.graders._registry
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
from assay.graders._registry import BUILTIN_GRADER_CLASSES, GraderSpec, grader_union

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


def _grader_classes_defined_in_assay_graders() -> dict[str, type[Grader]]:
    """Every concrete grader class the modules of `assay.graders` define, by its type name."""
    package = Path(assay.graders.__file__).parent
    for path in sorted(package.glob("*.py")):
        importlib.import_module(
            f"assay.graders.{path.stem}" if path.stem != "__init__" else "assay.graders"
        )
    found: dict[str, type[Grader]] = {}
    pending: list[type[Grader]] = [Grader]
    while pending:
        cls = pending.pop()
        pending += cls.__subclasses__()
        field = cls.model_fields.get("type")
        names = typing.get_args(field.annotation) if field is not None else ()
        if cls.__module__.startswith("assay.graders.") and len(names) == 1:
            found[names[0]] = cls
    return found


def test_i23_3_the_type_table_names_every_grader_class_of_the_package() -> None:
    # The table the loader imports from is written by hand: it must name each class (by
    # module and name) under the type that class declares, and miss none.
    defined = _grader_classes_defined_in_assay_graders()
    del defined["expected-outcomes"]  # a test's `expected_outcomes` key, not a type suites name
    assert set(BUILTIN_GRADER_CLASSES) == set(defined)
    for name, path in BUILTIN_GRADER_CLASSES.items():
        module, _, attribute = path.partition(":")
        assert (defined[name].__module__, defined[name].__qualname__) == (module, attribute)
        assert BUILTIN_GRADERS[name] is defined[name]


def test_i23_3_the_typed_union_lists_the_table_in_its_order() -> None:
    # What type checkers see (the union written out under TYPE_CHECKING) and the union built
    # at run time for errors and the schema hold the same classes in the same order.
    source = Path(assay.graders._registry.__file__).read_text(encoding="utf-8")
    tree = ast.parse(source)
    written = next(
        node.value.slice.elts[0]  # type: ignore[attr-defined]
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and getattr(node.targets[0], "id", None) == "GraderSpec"
        and isinstance(node.value, ast.Subscript)
        and isinstance(node.value.slice, ast.Tuple)
        and isinstance(node.value.slice.elts[0], ast.BinOp)
    )
    names: list[str] = []
    while isinstance(written, ast.BinOp):
        names.insert(0, written.right.id)  # type: ignore[attr-defined]
        written = written.left
    names.insert(0, written.id)  # type: ignore[attr-defined]
    table = [path.partition(":")[2] for path in BUILTIN_GRADER_CLASSES.values()]
    assert names == table
    members = typing.get_args(typing.get_args(grader_union())[0])
    assert [cls.__name__ for cls in members] == table


BAD_SPECS: list[Any] = [
    {"type": "contain", "value": "x"},
    {"type": "", "value": "x"},
    {"type": 3},
    {"value": "x"},
    "contains",
    None,
    {"type": "latency"},
    {"type": "contains", "value": {"a": 1}},
    {"type": "contains", "value": "x", "valu": 1},
    {"type": "regex", "value": "("},
    {"type": "tone", "profile": {"formality": "shouty"}},
    {"type": "composite", "assertions": []},
    {"type": "composite", "assertions": [{"type": "contains"}, {"type": "nope"}]},
    {"type": "composite", "assertions": [{"type": "composite", "assertions": [{"x": 1}]}]},
    {"type": "transform", "command": ["true"], "assertion": {"type": "latency"}},
    {"type": "transform", "command": ["true"], "assertion": {"type": "is_json"}},
]


@pytest.mark.parametrize("spec", BAD_SPECS, ids=repr)
def test_i23_3_a_refused_spec_reads_as_the_unions_error(spec: Any) -> None:
    # The lazy spec validates with one class; what it refuses is the whole union's error,
    # location, message and context, at any depth.
    with pytest.raises(ValidationError) as lazy:
        TypeAdapter(GraderSpec).validate_python(spec)
    with pytest.raises(ValidationError) as union:
        TypeAdapter(grader_union()).validate_python(spec)
    assert lazy.value.json() == union.value.json()  # ctx holds exception objects: as text


def test_i23_3_nested_graders_validate_with_their_own_classes() -> None:
    spec = {
        "type": "composite",
        "assertions": [
            {"type": "contains", "value": "a"},
            {"type": "transform", "command": ["true"], "assertion": {"type": "is-json"}},
            {"type": "composite", "assertions": [{"type": "regex", "value": "b+"}]},
        ],
    }
    lazy = TypeAdapter(GraderSpec).validate_python(spec)
    assert lazy == TypeAdapter(grader_union()).validate_python(spec)
    assert [type(g) for g in lazy.assertions] == [Contains, Transform, Composite]  # type: ignore[union-attr]
    for mode in ("python", "json"):
        dumped = TypeAdapter(GraderSpec).dump_python(lazy, mode=mode, exclude_defaults=True)
        assert dumped == TypeAdapter(grader_union()).dump_python(
            lazy, mode=mode, exclude_defaults=True
        )
