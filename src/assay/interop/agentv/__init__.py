"""AgentV eval files, rewritten to assay's suite format before validation (SPEC §2)."""

from assay.interop.agentv._detect import agentv_marker
from assay.interop.agentv._rewrite import AgentVTests, rewrite_agentv_suite
from assay.interop.agentv._target_lookup import AgentVTargetLookup, select_agentv_target
from assay.interop.agentv._v5_catalogue import v4_targets_document

__all__ = [
    "AgentVTargetLookup",
    "AgentVTests",
    "agentv_marker",
    "rewrite_agentv_suite",
    "select_agentv_target",
    "v4_targets_document",
]
