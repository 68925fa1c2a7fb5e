"""Which target an AgentV eval file runs, from the targets file AgentV would read.

Loading puts every mappable target of the file among the suite's `targets` (the suite's own
definitions win) and selects the one the eval file names, else `default`; `assay run --target`
may pick any other, as `agentv eval --target` does. A name that is not there fails when the
run is planned, with the reason and the targets file it was looked up in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from assay.config._datasets import display_path
from assay.config._yaml import SourceMap
from assay.errors import ConfigError, ConfigIssue
from assay.interop.agentv._env import AgentVEnv, find_repo_root, whole_reference
from assay.interop.agentv._targets import find_targets_file, read_agentv_targets
from assay.results import JSON

__all__ = ["AgentVTargetLookup", "select_agentv_target"]


@dataclass(frozen=True)
class AgentVTargetLookup:
    """Where an AgentV eval file's targets were looked up, and why names are missing."""

    where: str
    """The targets file, or where no targets file was found."""
    names: tuple[str, ...] = ()
    """Every target of the file."""
    notes: Mapping[str, ConfigIssue] = field(default_factory=dict)
    """Targets of the file that could not be mapped, each with the reason (located there)."""

    def unknown(self, name: str, suite: str, line: int | None) -> ConfigError:
        """The error for a target name the suite does not have: the file's reason for it, or
        that it is not in the targets file."""
        note = self.notes.get(name)
        if note is not None:
            return ConfigError([note])
        known = f" Targets there: {', '.join(self.names)}." if self.names else ""
        return ConfigError(
            [
                ConfigIssue(
                    suite, line, "target", f"unknown target '{name}': not in {self.where}.{known}"
                )
            ]
        )


def select_agentv_target(
    data: dict[str, JSON], source: SourceMap, eval_dir: Path
) -> tuple[list[ConfigIssue], list[ConfigIssue], AgentVTargetLookup | None]:
    """Add the targets of the AgentV targets file to a rewritten AgentV suite and select its
    target; returns (warnings, errors, lookup). An inline target mapping needs no lookup."""
    if isinstance(data.get("target"), dict):
        return [], [], None
    repo_root = find_repo_root(eval_dir)
    file = find_targets_file(eval_dir, repo_root)
    if file is None:
        where = (
            f"any targets.yaml or .agentv/targets.yaml (or .yml) from {display_path(eval_dir)} "
            f"up to the repository root {display_path(repo_root)} or in the working directory"
        )
        return [], [], AgentVTargetLookup(where)
    env = AgentVEnv.for_eval(eval_dir, repo_root)
    try:
        found = read_agentv_targets(file, env, eval_dir)
    except ConfigError as exc:
        return [], exc.issues, None
    own = data.get("targets")
    targets: dict[str, JSON] = dict(own) if isinstance(own, dict) else {}
    for defined, spec in found.specs.items():
        if defined not in targets:
            targets[defined] = spec
            source.entries[("targets", defined)] = found.lines[defined]
    if targets:
        data["targets"] = targets
    name = data.get("target")
    variable = whole_reference(name)
    if variable is not None:  # AgentV reads `${{ VAR }}` in eval files too; unset is no target
        name = data["target"] = env.get(variable, "").strip() or None
        if name is None:
            del data["target"]
    if name is None and ("default" in targets or "default" in found.notes):
        name = data["target"] = "default"
        source.entries.setdefault(("target",), found.lines["default"])
    warnings: list[ConfigIssue] = []
    own_names = set(own) if isinstance(own, dict) else set()
    if isinstance(name, str) and name in found.specs and name not in own_names:
        warnings += found.warnings[name]
    env.export([v for variables in found.exports.values() for v in variables])
    lookup = AgentVTargetLookup(found.display, tuple(found.names), found.notes)
    return warnings, [], lookup
