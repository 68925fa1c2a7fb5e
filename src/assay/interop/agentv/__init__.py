"""AgentV eval files, rewritten to assay's suite format before validation (SPEC §2).

Names are imported on first use (PEP 562): every suite load asks `agentv_marker` whether a
file is AgentV's, and an assay suite should not pay for the targets lookup or the v5 reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay._lazy import lazy_getattr

if TYPE_CHECKING:
    from assay.interop.agentv._detect import GRADER_MARKER_KEYS, agentv_marker
    from assay.interop.agentv._rewrite import AgentVTests, rewrite_agentv_suite
    from assay.interop.agentv._target_lookup import AgentVTargetLookup, select_agentv_target
    from assay.interop.agentv._v5_catalogue import v4_targets_document

_MODULES = {
    "assay.interop.agentv._detect": ["GRADER_MARKER_KEYS", "agentv_marker"],
    "assay.interop.agentv._rewrite": ["AgentVTests", "rewrite_agentv_suite"],
    "assay.interop.agentv._target_lookup": ["AgentVTargetLookup", "select_agentv_target"],
    "assay.interop.agentv._v5_catalogue": ["v4_targets_document"],
}

__all__ = [
    "GRADER_MARKER_KEYS",
    "AgentVTargetLookup",
    "AgentVTests",
    "agentv_marker",
    "rewrite_agentv_suite",
    "select_agentv_target",
    "v4_targets_document",
]

__getattr__ = lazy_getattr(__name__, _MODULES, globals())
