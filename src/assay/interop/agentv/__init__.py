"""AgentV eval files, rewritten to assay's suite format before validation (SPEC §2)."""

from assay.interop.agentv._rewrite import AgentVTests, rewrite_agentv_suite

__all__ = ["AgentVTests", "rewrite_agentv_suite"]
