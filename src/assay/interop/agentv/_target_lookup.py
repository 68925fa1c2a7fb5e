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
from assay.config._yaml import SourceMap, parse_yaml
from assay.errors import ConfigError, ConfigIssue
from assay.interop.agentv._env import (
    AgentVEnv,
    directory_chain,
    find_repo_root,
    whole_reference,
)
from assay.interop.agentv._targets import AgentVTargets, find_targets_file, read_agentv_targets
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
    defined: Mapping[str, tuple[str, int | None, str]] = field(default_factory=dict)
    """Where each target the file gave the suite is defined: file, line, YAML path (the
    suite's own `targets:` are not here)."""

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
    repo_root = find_repo_root(Path.cwd())  # AgentV's boundary: the working directory's repository
    config = _agentv_config(eval_dir, repo_root)
    config_warnings = _config_warnings(config)
    file = find_targets_file(eval_dir, repo_root)
    if file is None:
        where = (
            f"any targets.yaml or .agentv/targets.yaml (or .yml) from {display_path(eval_dir)} "
            f"up to the repository root {display_path(repo_root)} or in the working directory"
        )
        return config_warnings, [], AgentVTargetLookup(where)
    env = AgentVEnv.for_eval(eval_dir, repo_root)
    try:
        found = read_agentv_targets(file, env, eval_dir)
    except ConfigError as exc:
        return config_warnings, exc.issues, None
    own = data.get("targets")
    targets: dict[str, JSON] = dict(own) if isinstance(own, dict) else {}
    for defined, spec in found.specs.items():
        if defined not in targets:
            targets[defined] = spec
    if targets:
        data["targets"] = targets
    name = data.get("target")
    variable = whole_reference(name)
    if variable is not None:  # AgentV reads `${{ VAR }}` in eval files too; unset is no target
        name = data["target"] = env.get(variable, "").strip() or None
        if name is None:
            del data["target"]
    defaults = _config_defaults(config)
    fallback = defaults.get("provider", "default")  # v5's `defaults.provider`, else `default`
    if name is None and (fallback in targets or fallback in found.notes):
        name = data["target"] = fallback
    warnings = config_warnings
    own_names = set(own) if isinstance(own, dict) else set()
    if isinstance(name, str) and name in found.specs and name not in own_names:
        warnings += found.warnings[name]
        if "judge" not in data:
            warnings += _judge(
                data, name, found, targets, source, default_grader=defaults.get("grader")
            )
        execution = data.setdefault("execution", {}) if name in found.workers else None
        if isinstance(execution, dict):
            execution.setdefault("concurrency", found.workers[name])
    env.export([v for variables in found.exports.values() for v in variables])
    located = {
        n: (where.file, where.line, f"targets[{found.index[n]}]")
        for n, where in found.lines.items()
        if n in found.specs and n not in own_names
    }
    lookup = AgentVTargetLookup(found.display, tuple(found.names), found.notes, located)
    return warnings, [], lookup


_JUDGE_KEYS = ("provider", "model", "base_url", "api_key_env", "api_version", "temperature")


def _judge(
    data: dict[str, JSON],
    name: str,
    found: AgentVTargets,
    targets: Mapping[str, JSON],
    source: SourceMap,
    *,
    default_grader: str | None = None,
) -> list[ConfigIssue]:
    """The suite's judge from the target's `grader_target` (else v5's `defaults.grader` of
    `.agentv/config.yaml`, else the target itself when it is a model API), as AgentV grades
    with it; a grader target assay cannot use is a warning."""
    grader = found.graders.get(name) or default_grader or name
    spec = targets.get(grader)
    if isinstance(spec, dict) and spec.get("type") in ("openai", "anthropic"):
        data["judge"] = {k: spec[k] for k in _JUDGE_KEYS if k in spec}
        return []
    if grader == name:
        return []
    note = found.notes.get(grader)
    why = note.message if note else f"'{grader}' is not a model API target of {found.display}"
    return [
        source.issue(
            ("target",),
            f"target '{name}' is graded by its grader_target '{grader}', which assay cannot use "
            f"as the judge ({why}); the judge comes from assay's settings (--judge-model, "
            "assay.yaml)",
        )
    ]


def _agentv_config(eval_dir: Path, repo_root: Path) -> tuple[JSON, SourceMap] | None:
    """The `.agentv/config.yaml` AgentV would read: the first from the eval file's directory up
    to the repository root; None when there is none or it cannot be read (AgentV too ignores a
    config file it cannot read)."""
    for directory in directory_chain(eval_dir, repo_root):
        path = directory / ".agentv" / "config.yaml"
        if not path.is_file():
            continue
        try:
            return parse_yaml(
                path.read_text(encoding="utf-8"), display_path(path), interpolate=False
            )
        except (ConfigError, OSError, UnicodeDecodeError):
            return None
    return None


def _config_warnings(config: tuple[JSON, SourceMap] | None) -> list[ConfigIssue]:
    """What assay does not do of AgentV's config file: its `hooks.before_session` command,
    whose printed variables AgentV exports before running. Its other settings (discovery
    patterns, result export, output files) change no result of a run."""
    if config is None:
        return []
    data, source = config
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if isinstance(hooks, dict) and hooks.get("before_session"):
        return [
            source.issue(
                ("hooks", "before_session"),
                "assay does not run AgentV's before_session hook: set the variables it "
                "exports in the environment before `assay run`",
            )
        ]
    return []


def _config_defaults(config: tuple[JSON, SourceMap] | None) -> dict[str, str]:
    """v5's `defaults: {provider, grader}` of AgentV's config file: the provider an eval file
    without one runs, and the grader of targets without a `grader_target`."""
    data = config[0] if config is not None else None
    defaults = data.get("defaults") if isinstance(data, dict) else None
    if not isinstance(defaults, dict):
        return {}
    wanted = ("provider", "grader")
    return {k: v for k, v in defaults.items() if k in wanted and isinstance(v, str)}
