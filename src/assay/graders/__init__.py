"""Graders: each a frozen pydantic model that validates its options and grades one output."""

from assay.graders._base import Grader, GradingContext, Measurement, TestFacts, grade_all
from assay.graders._details import cap_details, detail, truncate
from assay.graders._judged import JudgedGrader
from assay.graders._registry import (
    BUILTIN_GRADERS,
    GRADER_PLUGINS,
    GraderSpec,
    grader_spec,
    grader_types,
    plugin_graders,
)
from assay.graders.agent_judge import AgentJudge
from assay.graders.code import CodeGrader
from assay.graders.composite import Composite
from assay.graders.factuality import Factuality
from assay.graders.format import Format
from assay.graders.llm import LlmGrader
from assay.graders.metrics import Cost, ExecutionMetrics, Latency, TokenUsageLimit
from assay.graders.outcomes import ExpectedOutcomes, outcome_results
from assay.graders.rubric import RubricItem, RubricItems, Rubrics
from assay.graders.similarity import Rouge, Similarity
from assay.graders.skill import SkillTrigger
from assay.graders.structured import FieldAccuracy, IsJson, JsonSchema
from assay.graders.text import (
    CompiledPattern,
    Contains,
    ContainsAll,
    ContainsAny,
    EndsWith,
    Equals,
    IContains,
    Regex,
    StartsWith,
    compile_re2,
)
from assay.graders.tone import Tone
from assay.graders.trajectory import ExpectedCall, ToolTrajectory

__all__ = [
    "BUILTIN_GRADERS",
    "GRADER_PLUGINS",
    "AgentJudge",
    "CodeGrader",
    "CompiledPattern",
    "Composite",
    "Contains",
    "ContainsAll",
    "ContainsAny",
    "Cost",
    "EndsWith",
    "Equals",
    "ExecutionMetrics",
    "ExpectedCall",
    "ExpectedOutcomes",
    "Factuality",
    "FieldAccuracy",
    "Format",
    "Grader",
    "GraderSpec",
    "GradingContext",
    "IContains",
    "IsJson",
    "JsonSchema",
    "JudgedGrader",
    "Latency",
    "LlmGrader",
    "Measurement",
    "Regex",
    "Rouge",
    "RubricItem",
    "RubricItems",
    "Rubrics",
    "Similarity",
    "SkillTrigger",
    "StartsWith",
    "TestFacts",
    "TokenUsageLimit",
    "Tone",
    "ToolTrajectory",
    "cap_details",
    "compile_re2",
    "detail",
    "grade_all",
    "grader_spec",
    "grader_types",
    "outcome_results",
    "plugin_graders",
    "truncate",
]
