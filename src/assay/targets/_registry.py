"""The built-in target registry and the discriminated union that validates target specs."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from assay.targets._base import Target
from assay.targets.anthropic import AnthropicTarget
from assay.targets.command import CommandTarget
from assay.targets.fake import FakeTarget
from assay.targets.http import HttpTarget
from assay.targets.openai import OpenAITarget
from assay.targets.python import PythonTarget
from assay.targets.replay import ReplayTarget

__all__ = ["BUILTIN_TARGETS", "TargetSpec"]

TargetSpec = Annotated[
    FakeTarget
    | PythonTarget
    | CommandTarget
    | HttpTarget
    | ReplayTarget
    | OpenAITarget
    | AnthropicTarget,
    Field(discriminator="type"),
]
"""Any built-in target, chosen by its `type`."""

BUILTIN_TARGETS: dict[str, type[Target]] = {
    "fake": FakeTarget,
    "python": PythonTarget,
    "command": CommandTarget,
    "http": HttpTarget,
    "replay": ReplayTarget,
    "openai": OpenAITarget,
    "anthropic": AnthropicTarget,
}
"""Built-in target classes by their `type` name."""
