"""The target registry (built-ins, then plugins from the `assay.targets` entry points) and the
discriminated union that validates target specs.

`TargetSpec` is the union of the built-ins; `target_spec` that of every registered type, which
the suite models switch to when plugins are installed (assay.config).
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Union

from pydantic import Field

from assay._plugins import PluginEntry, PluginSpec, load_plugins, problem_with_model_class
from assay.targets._base import Target
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
    "TargetSpec",
    "plugin_targets",
    "target_spec",
    "target_types",
]

TargetSpec = Annotated[
    FakeTarget
    | PythonTarget
    | CommandTarget
    | HttpTarget
    | ReplayTarget
    | OpenAITarget
    | AnthropicTarget
    | SageMakerTarget
    | BedrockAgentTarget,
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
    "sagemaker": SageMakerTarget,
    "bedrock-agent": BedrockAgentTarget,
}
"""Built-in target classes by their `type` name."""


def _target_class(entry: PluginEntry, obj: object) -> str | None:
    return problem_with_model_class(entry, obj, Target, "assay.targets.Target")


TARGET_PLUGINS = PluginSpec("target", BUILTIN_TARGETS, _target_class)
"""How target plugins are taken: names no built-in has, classes `_target_class` accepts."""


@functools.cache
def plugin_targets() -> dict[str, type[Target]]:
    """The target types installed packages add (entry point group `assay.targets`), by name;
    loaded once per process.

    Raises:
        PluginError: a plugin cannot be loaded, is not a target class, or reuses a name.
    """
    return load_plugins(TARGET_PLUGINS)  # type: ignore[return-value]  # checked by _target_class


def target_types() -> dict[str, type[Target]]:
    """Every target type suites may use, built-ins first, by type name.

    Raises:
        PluginError: see `plugin_targets`.
    """
    return {**BUILTIN_TARGETS, **plugin_targets()}


def target_spec() -> Any:
    """The discriminated union of every registered target type: `TargetSpec` itself when no
    plugin adds one.

    Raises:
        PluginError: see `plugin_targets`.
    """
    plugins = plugin_targets()
    if not plugins:
        return TargetSpec
    members = (*BUILTIN_TARGETS.values(), *plugins.values())
    return Annotated[Union[members], Field(discriminator="type")]  # noqa: UP007  # built at run time
