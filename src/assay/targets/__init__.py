"""Targets: how assay calls the system under test for one case (SPEC §3)."""

from __future__ import annotations

from assay.targets._base import Target, TargetRequest
from assay.targets._chat import ToolSpec
from assay.targets._output import parse_target_output, parse_text_output
from assay.targets._registry import (
    BUILTIN_TARGETS,
    TARGET_PLUGINS,
    TargetSpec,
    plugin_targets,
    target_spec,
    target_types,
)
from assay.targets.anthropic import AnthropicTarget
from assay.targets.bedrock_agent import BedrockAgentTarget
from assay.targets.command import CommandTarget
from assay.targets.fake import FakeTarget
from assay.targets.http import HttpTarget
from assay.targets.openai import OpenAITarget
from assay.targets.python import PythonTarget
from assay.targets.replay import ReplayTarget
from assay.targets.sagemaker import SageMakerTarget

__all__ = [
    "BUILTIN_TARGETS",
    "TARGET_PLUGINS",
    "AnthropicTarget",
    "BedrockAgentTarget",
    "CommandTarget",
    "FakeTarget",
    "HttpTarget",
    "OpenAITarget",
    "PythonTarget",
    "ReplayTarget",
    "SageMakerTarget",
    "Target",
    "TargetRequest",
    "TargetSpec",
    "ToolSpec",
    "parse_target_output",
    "parse_text_output",
    "plugin_targets",
    "target_spec",
    "target_types",
]
