"""The judge client: structured verdicts from an LLM, hardened against injection, cached.

Every judged grader asks through `JudgeClient.ask` with a `RenderedPrompt` (a packaged or
custom template, untrusted fields in nonce-delimited blocks) and a pydantic reply model.

Names are imported on first use (PEP 562): a run without judged graders never loads the
client, its templates or the simulator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay._lazy import lazy_getattr

if TYPE_CHECKING:
    from assay.judge._client import INVALID_REPLY_RETRIES, JudgeClient, JudgeError, Judgement
    from assay.judge._hardening import SYSTEM_RULES, block, neutralise, new_nonce
    from assay.judge._pairwise import PairwiseAnswer, ask_preference, pairwise_template
    from assay.judge._pool import JudgePool, NoJudgeError
    from assay.judge._provider_calls import ProviderCalls, Vectors
    from assay.judge._schema import Entry, extract_json, keyed_schema, strict_schema
    from assay.judge._simulator import SIMULATOR_RULES, Exchange, SimulatedTurn, SimulatedUser
    from assay.judge._spec import JudgeSpec, judge_from_env, merge_judges
    from assay.judge._templates import (
        TEST_FIELDS,
        UNTRUSTED_FIELDS,
        PromptTemplate,
        RenderedPrompt,
        builtin,
        load_override,
    )

_MODULES = {
    "assay.judge._client": ["INVALID_REPLY_RETRIES", "JudgeClient", "JudgeError", "Judgement"],
    "assay.judge._hardening": ["SYSTEM_RULES", "block", "neutralise", "new_nonce"],
    "assay.judge._pairwise": ["PairwiseAnswer", "ask_preference", "pairwise_template"],
    "assay.judge._pool": ["JudgePool", "NoJudgeError"],
    "assay.judge._provider_calls": ["ProviderCalls", "Vectors"],
    "assay.judge._schema": ["Entry", "extract_json", "keyed_schema", "strict_schema"],
    "assay.judge._simulator": ["SIMULATOR_RULES", "Exchange", "SimulatedTurn", "SimulatedUser"],
    "assay.judge._spec": ["JudgeSpec", "judge_from_env", "merge_judges"],
    "assay.judge._templates": [
        "TEST_FIELDS",
        "UNTRUSTED_FIELDS",
        "PromptTemplate",
        "RenderedPrompt",
        "builtin",
        "load_override",
    ],
}

__all__ = [
    "INVALID_REPLY_RETRIES",
    "SIMULATOR_RULES",
    "SYSTEM_RULES",
    "TEST_FIELDS",
    "UNTRUSTED_FIELDS",
    "Entry",
    "Exchange",
    "JudgeClient",
    "JudgeError",
    "JudgePool",
    "JudgeSpec",
    "Judgement",
    "NoJudgeError",
    "PairwiseAnswer",
    "PromptTemplate",
    "ProviderCalls",
    "RenderedPrompt",
    "SimulatedTurn",
    "SimulatedUser",
    "Vectors",
    "ask_preference",
    "block",
    "builtin",
    "extract_json",
    "judge_from_env",
    "keyed_schema",
    "load_override",
    "merge_judges",
    "neutralise",
    "new_nonce",
    "pairwise_template",
    "strict_schema",
]

__getattr__ = lazy_getattr(__name__, _MODULES, globals())
