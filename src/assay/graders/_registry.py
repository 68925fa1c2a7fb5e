"""The built-in grader registry and the discriminated union that validates grader specs.

Grader `type` names are canonical with dashes; the suite loader turns `_` into `-` and maps
deprecated aliases before validation (assay.config), so the union sees canonical names only.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from assay.graders._base import Grader
from assay.graders.agent_judge import AgentJudge
from assay.graders.code import CodeGrader
from assay.graders.composite import Composite
from assay.graders.factuality import Factuality
from assay.graders.format import Format
from assay.graders.llm import LlmGrader
from assay.graders.metrics import Cost, ExecutionMetrics, Latency, TokenUsageLimit
from assay.graders.rubric import Rubrics
from assay.graders.similarity import Rouge, Similarity
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
from assay.graders.trajectory import ToolTrajectory

__all__ = ["BUILTIN_GRADERS", "GraderSpec"]

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
    | FieldAccuracy
    | Similarity
    | Rouge
    | Latency
    | Cost
    | TokenUsageLimit
    | ExecutionMetrics
    | ToolTrajectory
    | Format
    | Factuality
    | Tone
    | CodeGrader
    | LlmGrader
    | Rubrics
    | AgentJudge
    | Composite,
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
        FieldAccuracy,
        Similarity,
        Rouge,
        Latency,
        Cost,
        TokenUsageLimit,
        ExecutionMetrics,
        ToolTrajectory,
        Format,
        Factuality,
        Tone,
        CodeGrader,
        LlmGrader,
        Rubrics,
        AgentJudge,
        Composite,
    )
}
"""Grader classes by canonical type name."""

Composite.model_rebuild(_types_namespace={"GraderSpec": GraderSpec})
