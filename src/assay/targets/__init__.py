"""Targets: how assay calls the system under test for one case (SPEC §3)."""

from __future__ import annotations

from assay.targets._base import Target, TargetRequest
from assay.targets._output import parse_target_output, parse_text_output
from assay.targets._registry import BUILTIN_TARGETS, TargetSpec
from assay.targets.command import CommandTarget
from assay.targets.fake import FakeTarget
from assay.targets.python import PythonTarget

__all__ = [
    "BUILTIN_TARGETS",
    "CommandTarget",
    "FakeTarget",
    "PythonTarget",
    "Target",
    "TargetRequest",
    "TargetSpec",
    "parse_target_output",
    "parse_text_output",
]
