"""AgentV eval files, rewritten to assay's suite format before validation (SPEC §2)."""

from assay.interop.agentv._rewrite import AgentVTests, rewrite_agentv_suite
from assay.interop.agentv._v5_catalogue import v4_targets_document

__all__ = ["AgentVTests", "rewrite_agentv_suite", "v4_targets_document"]
