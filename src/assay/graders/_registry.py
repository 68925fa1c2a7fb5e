"""The grader registry (built-ins, then plugins from the `assay.graders` entry points) and the
discriminated union that validates grader specs.

Grader `type` names are canonical with dashes; the suite loader turns `_` into `-` and maps
deprecated aliases before validation (assay.config), so the union sees canonical names only.
`GraderSpec` is the union of the built-ins; `grader_spec` that of every registered type,
which the suite models switch to when plugins are installed (assay.config).
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Union

from pydantic import Field

from assay._plugins import PluginEntry, PluginSpec, load_plugins, problem_with_model_class
from assay.graders._base import Grader
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
    "GRADER_PLUGINS",
    "GraderSpec",
    "grader_spec",
    "grader_types",
    "plugin_graders",
]

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
"""Any built-in grader, chosen by its `type`."""

BUILTIN_GRADERS: dict[str, type[Grader]] = {
    cls.model_fields["type"].annotation.__args__[0]: cls  # type: ignore[union-attr]
    for cls in (
        Equals,
        Contains,
        IContains,
        ContainsAny,
        ContainsAll,
        StartsWith,
        EndsWith,
        Regex,
        IsJson,
        JsonSchema,
        ContainsJson,
        FieldAccuracy,
        Similarity,
        Rouge,
        Levenshtein,
        Bleu,
        IsXml,
        ContainsXml,
        IsSql,
        Latency,
        Cost,
        TokenUsageLimit,
        ExecutionMetrics,
        FinishReason,
        ToolTrajectory,
        ValidToolCalls,
        SkillTrigger,
        Format,
        Factuality,
        Faithfulness,
        Retrieval,
        ContextPrecision,
        ContextRecall,
        AnswerRelevancy,
        SemanticSimilarity,
        Pii,
        Moderation,
        Tone,
        CodeGrader,
        LlmGrader,
        Rubrics,
        AgentJudge,
        Composite,
        Transform,
    )
}
"""Grader classes by canonical type name."""

Composite.model_rebuild(_types_namespace={"GraderSpec": GraderSpec})
Transform.model_rebuild(_types_namespace={"GraderSpec": GraderSpec})


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
    """Every grader type suites may use, built-ins first, by canonical type name.

    Raises:
        PluginError: see `plugin_graders`.
    """
    return {**BUILTIN_GRADERS, **plugin_graders()}


def grader_spec() -> Any:
    """The discriminated union of every registered grader type: `GraderSpec` itself when no
    plugin adds one (the suite models keep their schema unchanged).

    Raises:
        PluginError: see `plugin_graders`.
    """
    plugins = plugin_graders()
    if not plugins:
        return GraderSpec
    members = (*BUILTIN_GRADERS.values(), *plugins.values())
    return Annotated[Union[members], Field(discriminator="type")]  # noqa: UP007  # built at run time
