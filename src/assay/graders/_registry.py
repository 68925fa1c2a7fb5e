"""The grader registry (built-ins, then plugins from the `assay.graders` entry points) and the
discriminated union that validates grader specs.

Grader `type` names are canonical with dashes; the suite loader turns `_` into `-` and maps
deprecated aliases before validation (assay.config), so the union sees canonical names only.

A built-in type is named here as `module:Class` and its module is imported when a spec of that
type is first validated: a suite that uses `contains` loads the text graders, not the ~40
other modules (~0.1 s of CPU at every start-up, most of it pydantic building their schemas).
`GraderSpec` validates a spec with the one class its `type` names; a spec that class refuses,
an unknown type or no type at all is validated again by the union of every type, so errors
and "did you mean" read exactly as the union's. That union (`grader_union`) also gives the
JSON Schema, and is what type checkers see.
"""

from __future__ import annotations

import functools
import importlib
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Annotated, Any, Union

from pydantic import Field, GetCoreSchemaHandler, GetJsonSchemaHandler, TypeAdapter
from pydantic.errors import PydanticInvalidForJsonSchema
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import ValidationError, core_schema

from assay._plugins import PluginEntry, PluginSpec, load_plugins, problem_with_model_class
from assay.graders._base import Grader

if TYPE_CHECKING:
    from assay.graders.agent_judge import AgentJudge
    from assay.graders.bleu import Bleu
    from assay.graders.code import CodeGrader
    from assay.graders.composite import Composite
    from assay.graders.context_judged import AnswerRelevancy, ContextPrecision, ContextRecall
    from assay.graders.embedded_json import ContainsJson
    from assay.graders.factuality import Factuality
    from assay.graders.faithfulness import Faithfulness
    from assay.graders.finish_reason import FinishReason
    from assay.graders.format import Format
    from assay.graders.llm import LlmGrader
    from assay.graders.markup import ContainsXml, IsXml
    from assay.graders.metrics import Cost, ExecutionMetrics, Latency, TokenUsageLimit
    from assay.graders.moderation import Moderation
    from assay.graders.pii import Pii
    from assay.graders.retrieval import Retrieval
    from assay.graders.rubric import Rubrics
    from assay.graders.semantic import SemanticSimilarity
    from assay.graders.similarity import Levenshtein, Rouge, Similarity
    from assay.graders.skill import SkillTrigger
    from assay.graders.sql import IsSql
    from assay.graders.structured import FieldAccuracy, IsJson, JsonSchema
    from assay.graders.text import (
        Contains,
        ContainsAll,
        ContainsAny,
        EndsWith,
        Equals,
        IContains,
        Regex,
        StartsWith,
    )
    from assay.graders.tone import Tone
    from assay.graders.tool_schema import ValidToolCalls
    from assay.graders.trajectory import ToolTrajectory
    from assay.graders.transform import Transform

__all__ = [
    "BUILTIN_GRADERS",
    "BUILTIN_GRADER_CLASSES",
    "GRADER_PLUGINS",
    "GraderSpec",
    "LazyGraderSpec",
    "grader_spec",
    "grader_types",
    "grader_union",
    "plugin_graders",
]

BUILTIN_GRADER_CLASSES: dict[str, str] = {
    "equals": "assay.graders.text:Equals",
    "contains": "assay.graders.text:Contains",
    "icontains": "assay.graders.text:IContains",
    "contains-any": "assay.graders.text:ContainsAny",
    "contains-all": "assay.graders.text:ContainsAll",
    "starts-with": "assay.graders.text:StartsWith",
    "ends-with": "assay.graders.text:EndsWith",
    "regex": "assay.graders.text:Regex",
    "is-json": "assay.graders.structured:IsJson",
    "json-schema": "assay.graders.structured:JsonSchema",
    "contains-json": "assay.graders.embedded_json:ContainsJson",
    "field-accuracy": "assay.graders.structured:FieldAccuracy",
    "similarity": "assay.graders.similarity:Similarity",
    "rouge": "assay.graders.similarity:Rouge",
    "levenshtein": "assay.graders.similarity:Levenshtein",
    "bleu": "assay.graders.bleu:Bleu",
    "is-xml": "assay.graders.markup:IsXml",
    "contains-xml": "assay.graders.markup:ContainsXml",
    "is-sql": "assay.graders.sql:IsSql",
    "latency": "assay.graders.metrics:Latency",
    "cost": "assay.graders.metrics:Cost",
    "token-usage": "assay.graders.metrics:TokenUsageLimit",
    "execution-metrics": "assay.graders.metrics:ExecutionMetrics",
    "finish-reason": "assay.graders.finish_reason:FinishReason",
    "tool-trajectory": "assay.graders.trajectory:ToolTrajectory",
    "valid-tool-calls": "assay.graders.tool_schema:ValidToolCalls",
    "skill-trigger": "assay.graders.skill:SkillTrigger",
    "format": "assay.graders.format:Format",
    "factuality": "assay.graders.factuality:Factuality",
    "faithfulness": "assay.graders.faithfulness:Faithfulness",
    "retrieval": "assay.graders.retrieval:Retrieval",
    "context-precision": "assay.graders.context_judged:ContextPrecision",
    "context-recall": "assay.graders.context_judged:ContextRecall",
    "answer-relevancy": "assay.graders.context_judged:AnswerRelevancy",
    "semantic-similarity": "assay.graders.semantic:SemanticSimilarity",
    "pii": "assay.graders.pii:Pii",
    "moderation": "assay.graders.moderation:Moderation",
    "tone": "assay.graders.tone:Tone",
    "code-grader": "assay.graders.code:CodeGrader",
    "llm-grader": "assay.graders.llm:LlmGrader",
    "rubrics": "assay.graders.rubric:Rubrics",
    "agent-judge": "assay.graders.agent_judge:AgentJudge",
    "composite": "assay.graders.composite:Composite",
    "transform": "assay.graders.transform:Transform",
}
"""Where each built-in grader class is, by canonical type name, in the union's order (a test
checks it against the classes, so it cannot drift)."""


def _builtin_class(name: str) -> type[Grader]:
    module, _, attribute = BUILTIN_GRADER_CLASSES[name].partition(":")
    cls: type[Grader] = getattr(importlib.import_module(module), attribute)
    return cls


class _BuiltinGraders(Mapping[str, type[Grader]]):
    """The built-in classes by type name; a class's module is imported when it is looked up
    (names, `len` and `in` import nothing)."""

    def __getitem__(self, name: str) -> type[Grader]:
        if name not in BUILTIN_GRADER_CLASSES:
            raise KeyError(name)
        return _builtin_class(name)

    def __contains__(self, name: object) -> bool:
        return name in BUILTIN_GRADER_CLASSES

    def __iter__(self) -> Iterator[str]:
        return iter(BUILTIN_GRADER_CLASSES)

    def __len__(self) -> int:
        return len(BUILTIN_GRADER_CLASSES)

    def __repr__(self) -> str:
        return f"BUILTIN_GRADERS({', '.join(BUILTIN_GRADER_CLASSES)})"


BUILTIN_GRADERS: Mapping[str, type[Grader]] = _BuiltinGraders()
"""Grader classes by canonical type name (each module imported on first lookup)."""


def grader_union(plugins: Mapping[str, type[Grader]] | None = None) -> Any:
    """The discriminated union of every built-in grader class (and `plugins`), in the
    registry's order: it imports every grader module, so it is built only for an error
    message, a JSON Schema or type checking."""
    members = (*BUILTIN_GRADERS.values(), *(plugins or {}).values())
    return Annotated[Union[members], Field(discriminator="type")]  # noqa: UP007  # built at run time


@functools.cache
def _has_json_schema(cls: type[Grader]) -> bool:
    """Whether pydantic can describe a (plugin) grader class: one it cannot is left out of the
    union's JSON Schema, at every depth (`plugin_schema_problems` says why)."""
    try:
        cls.model_json_schema()
    except PydanticInvalidForJsonSchema:
        return False
    return True


class LazyGraderSpec:
    """The pydantic annotation of a grader spec that imports only its type's module.

    A spec is validated by the class of its `type` (the built-ins and `plugins`); anything
    that class refuses, and anything else, by the whole union, whose error is then the
    same as if the union had validated it in the first place. The JSON Schema is the union's.
    """

    def __init__(self, plugins: Mapping[str, type[Grader]]) -> None:
        self._plugins = dict(plugins)
        self._schema = threading.local()  # `.nested`: inside this union's JSON Schema call
        self._validators: dict[str, Callable[[object], Grader]] = {}

    def _validator(self, kind: str) -> Callable[[object], Grader] | None:
        """The validator of type `kind`'s class, its module imported on first use (then kept:
        a large suite asks once per grader of every test)."""
        found = self._validators.get(kind)
        if found is None:
            if kind in BUILTIN_GRADER_CLASSES:
                cls: type[Grader] | None = _builtin_class(kind)
            else:
                cls = self._plugins.get(kind)
            if cls is None:
                return None
            found = self._validators[kind] = cls.__pydantic_validator__.validate_python
        return found

    @functools.cached_property
    def _union(self) -> TypeAdapter[Grader]:
        return TypeAdapter(grader_union(self._plugins))

    def _validate(self, value: object) -> Grader:
        kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
        validate = self._validator(kind) if isinstance(kind, str) else None
        if validate is not None:
            try:
                return validate(value)
            except ValidationError:
                pass  # the union says what is wrong, as it always has
        return self._union.validate_python(value)

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(self._validate)

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        union = self._union.core_schema
        if not getattr(self._schema, "nested", False):  # the union with its models' definitions
            self._schema.nested = True
            try:
                return handler(union)
            finally:
                self._schema.nested = False
        # A grader inside a grader (composite, transform): the models are being defined by
        # the call above, so each member is its reference (as a recursive union's are).
        tagged = union["schema"] if union["type"] == "definitions" else union
        assert tagged["type"] == "tagged-union"  # what `grader_union` builds
        choices = {
            tag: core_schema.definition_reference_schema(choice["ref"])
            if "ref" in choice
            else choice
            for tag, choice in tagged["choices"].items()
            if tag not in self._plugins or _has_json_schema(self._plugins[str(tag)])
        }
        return handler({**tagged, "choices": choices})


if TYPE_CHECKING:
    GraderSpec = Annotated[
        Equals
        | Contains
        | IContains
        | ContainsAny
        | ContainsAll
        | StartsWith
        | EndsWith
        | Regex
        | IsJson
        | JsonSchema
        | ContainsJson
        | FieldAccuracy
        | Similarity
        | Rouge
        | Levenshtein
        | Bleu
        | IsXml
        | ContainsXml
        | IsSql
        | Latency
        | Cost
        | TokenUsageLimit
        | ExecutionMetrics
        | FinishReason
        | ToolTrajectory
        | ValidToolCalls
        | SkillTrigger
        | Format
        | Factuality
        | Faithfulness
        | Retrieval
        | ContextPrecision
        | ContextRecall
        | AnswerRelevancy
        | SemanticSimilarity
        | Pii
        | Moderation
        | Tone
        | CodeGrader
        | LlmGrader
        | Rubrics
        | AgentJudge
        | Composite
        | Transform,
        Field(discriminator="type"),
    ]
else:
    GraderSpec = Annotated[Grader, LazyGraderSpec({})]
"""Any built-in grader, chosen by its `type`."""


def _grader_class(entry: PluginEntry, obj: object) -> str | None:
    return problem_with_model_class(entry, obj, Grader, "assay.graders.Grader")


GRADER_PLUGINS = PluginSpec("grader", BUILTIN_GRADERS, _grader_class)
"""How grader plugins are taken: names no built-in has, classes `_grader_class` accepts."""


@functools.cache
def plugin_graders() -> dict[str, type[Grader]]:
    """The grader types installed packages add (entry point group `assay.graders`), by name;
    loaded once per process.

    Raises:
        PluginError: a plugin cannot be loaded, is not a grader class, or reuses a name.
    """
    return load_plugins(GRADER_PLUGINS)  # type: ignore[return-value]  # checked by _grader_class


def grader_types() -> dict[str, type[Grader]]:
    """Every grader type suites may use, built-ins first, by canonical type name (every
    grader module imported).

    Raises:
        PluginError: see `plugin_graders`.
    """
    return {**BUILTIN_GRADERS, **plugin_graders()}


@functools.cache
def _spec_with(plugins: tuple[tuple[str, type[Grader]], ...]) -> Any:
    return Annotated[Grader, LazyGraderSpec(dict(plugins))]


def grader_spec() -> Any:
    """The grader spec of every registered type: `GraderSpec` itself when no plugin adds one
    (the suite models keep their schema unchanged).

    Raises:
        PluginError: see `plugin_graders`.
    """
    plugins = plugin_graders()
    if not plugins:
        return GraderSpec
    return _spec_with(tuple(plugins.items()))
