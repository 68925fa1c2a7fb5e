"""Graders: each a frozen pydantic model that validates its options and grades one output.

Names are imported on first use (PEP 562): a suite imports the modules of the grader types it
uses (`GraderSpec`), not the ~40 others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay._lazy import lazy_getattr

if TYPE_CHECKING:
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
    from assay.graders.outcomes import ExpectedOutcomes, outcome_results
    from assay.graders.pii import Pii
    from assay.graders.retrieval import Retrieval
    from assay.graders.rubric import RubricItem, RubricItems, Rubrics
    from assay.graders.semantic import SemanticSimilarity
    from assay.graders.similarity import Levenshtein, Rouge, Similarity
    from assay.graders.skill import SkillTrigger
    from assay.graders.sql import IsSql
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
    from assay.graders.tool_schema import ValidToolCalls
    from assay.graders.trajectory import ExpectedCall, ToolTrajectory
    from assay.graders.transform import Transform

_MODULES = {
    "assay.graders._base": ["Grader", "GradingContext", "Measurement", "TestFacts", "grade_all"],
    "assay.graders._details": ["cap_details", "detail", "truncate"],
    "assay.graders._judged": ["JudgedGrader"],
    "assay.graders._registry": [
        "BUILTIN_GRADERS",
        "GRADER_PLUGINS",
        "GraderSpec",
        "grader_spec",
        "grader_types",
        "plugin_graders",
    ],
    "assay.graders.agent_judge": ["AgentJudge"],
    "assay.graders.bleu": ["Bleu"],
    "assay.graders.code": ["CodeGrader"],
    "assay.graders.composite": ["Composite"],
    "assay.graders.context_judged": ["AnswerRelevancy", "ContextPrecision", "ContextRecall"],
    "assay.graders.embedded_json": ["ContainsJson"],
    "assay.graders.factuality": ["Factuality"],
    "assay.graders.faithfulness": ["Faithfulness"],
    "assay.graders.finish_reason": ["FinishReason"],
    "assay.graders.format": ["Format"],
    "assay.graders.llm": ["LlmGrader"],
    "assay.graders.markup": ["ContainsXml", "IsXml"],
    "assay.graders.metrics": ["Cost", "ExecutionMetrics", "Latency", "TokenUsageLimit"],
    "assay.graders.moderation": ["Moderation"],
    "assay.graders.outcomes": ["ExpectedOutcomes", "outcome_results"],
    "assay.graders.pii": ["Pii"],
    "assay.graders.retrieval": ["Retrieval"],
    "assay.graders.rubric": ["RubricItem", "RubricItems", "Rubrics"],
    "assay.graders.semantic": ["SemanticSimilarity"],
    "assay.graders.similarity": ["Levenshtein", "Rouge", "Similarity"],
    "assay.graders.skill": ["SkillTrigger"],
    "assay.graders.sql": ["IsSql"],
    "assay.graders.structured": ["FieldAccuracy", "IsJson", "JsonSchema"],
    "assay.graders.text": [
        "CompiledPattern",
        "Contains",
        "ContainsAll",
        "ContainsAny",
        "EndsWith",
        "Equals",
        "IContains",
        "Regex",
        "StartsWith",
        "compile_re2",
    ],
    "assay.graders.tone": ["Tone"],
    "assay.graders.tool_schema": ["ValidToolCalls"],
    "assay.graders.trajectory": ["ExpectedCall", "ToolTrajectory"],
    "assay.graders.transform": ["Transform"],
}

__all__ = [
    "BUILTIN_GRADERS",
    "GRADER_PLUGINS",
    "AgentJudge",
    "AnswerRelevancy",
    "Bleu",
    "CodeGrader",
    "CompiledPattern",
    "Composite",
    "Contains",
    "ContainsAll",
    "ContainsAny",
    "ContainsJson",
    "ContainsXml",
    "ContextPrecision",
    "ContextRecall",
    "Cost",
    "EndsWith",
    "Equals",
    "ExecutionMetrics",
    "ExpectedCall",
    "ExpectedOutcomes",
    "Factuality",
    "Faithfulness",
    "FieldAccuracy",
    "FinishReason",
    "Format",
    "Grader",
    "GraderSpec",
    "GradingContext",
    "IContains",
    "IsJson",
    "IsSql",
    "IsXml",
    "JsonSchema",
    "JudgedGrader",
    "Latency",
    "Levenshtein",
    "LlmGrader",
    "Measurement",
    "Moderation",
    "Pii",
    "Regex",
    "Retrieval",
    "Rouge",
    "RubricItem",
    "RubricItems",
    "Rubrics",
    "SemanticSimilarity",
    "Similarity",
    "SkillTrigger",
    "StartsWith",
    "TestFacts",
    "TokenUsageLimit",
    "Tone",
    "ToolTrajectory",
    "Transform",
    "ValidToolCalls",
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

__getattr__ = lazy_getattr(__name__, _MODULES, globals())
