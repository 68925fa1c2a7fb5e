"""Which target an AgentV eval file runs, from the targets file AgentV would read.

Loading puts every mappable target of the file among the suite's `targets` (the suite's own
definitions win) and selects the one the eval file names, else `default`; `assay run --target`
may pick any other, as `agentv eval --target` does. When the nearest file lacks the eval
file's target and AgentV v5's `.agentv/config.yaml` names a provider catalogue (`providers:
file://…`), the targets come from that catalogue instead: AgentV v5 run from the repository
root reads it for every eval file (AgentV v4 has no catalogue and fails the name). A name
that is in neither fails when the run is planned, with the reason and the files it was
looked up in.
"""

from __future__ import annotations

import re
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
from assay.interop.agentv._grader_choice import choose_grader
from assay.interop.agentv._rewrite import TARGET_ALIASES
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
    judgeless: Mapping[str, str] = field(default_factory=dict)
    """Targets AgentV has no grader for until its llm-graders run, each with the reason: a
    run of one without a judge of assay's gives those graders an `error` verdict instead of
    being refused (assay.interop.agentv._grader_choice)."""
    judges: Mapping[str, Mapping[str, JSON]] = field(default_factory=dict)
    """The judge AgentV's grader gives each target of the file that has a model API grader."""
    judge_of: str | None = None
    """The target whose judge loading wrote into the suite (None: the suite sets its own):
    a run of another target of the file takes that target's judge."""

    def judge_for(self, target: str) -> Mapping[str, JSON] | None:
        """The judge of a run of another target of the file than the one the suite was
        loaded with, as AgentV grades each target with its own grader (empty: none); None:
        keep the suite's (also for a target from the suite or assay.yaml)."""
        if self.judge_of is None or target == self.judge_of or target not in self.defined:
            return None
        return self.judges.get(target, {})

    def judge_deferred(self, target: str) -> bool:
        """Whether a run of `target` without a judge is AgentV's run-time failure, not a
        configuration error."""
        return target in self.judgeless

    def deferred_judge_warning(self, target: str, source: SourceMap) -> ConfigIssue | None:
        """The load warning of a suite whose graders need a judge when AgentV has none for its
        `target` until they run (None when it has one)."""
        why = self.judgeless.get(target)
        if why is None:
            return None
        return source.issue(
            ("target",),
            f"AgentV has no LLM grader for target '{target}': {why}. Without a judge of "
            "assay's (--judge-model, ASSAY_JUDGE_MODEL, `judge:` in assay.yaml) every grader "
            "that needs one gets an `error` verdict when it runs",
        )

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
    aliases = data.pop(TARGET_ALIASES, None)
    if isinstance(data.get("target"), dict):
        return [], [], None
    repo_root = find_repo_root(Path.cwd())  # AgentV's boundary: the working directory's repository
    config_file = _config_file(eval_dir, repo_root)
    config = _agentv_config(config_file)
    config_warnings = _config_warnings(config)
    file = find_targets_file(eval_dir, repo_root)
    env = AgentVEnv.for_eval(eval_dir, repo_root)
    catalogue = _ConfigCatalogue(
        config_file, config, env, eval_dir, file, aliases=aliases, identity=_identity(data, source)
    )
    if file is None and catalogue.file is not None:
        file, catalogue.file = catalogue.file, None  # the config's catalogue is the only one
    if file is None:
        where = (
            f"any targets.yaml or .agentv/targets.yaml (or .yml) from {display_path(eval_dir)} "
            f"up to the repository root {display_path(repo_root)} or in the working directory"
        )
        return config_warnings, [], AgentVTargetLookup(where)
    try:
        found = read_agentv_targets(
            file, env, eval_dir, aliases=catalogue.aliases, identity=catalogue.identity
        )
    except ConfigError as exc:
        return config_warnings, exc.issues, None
    defaults = _config_defaults(config)
    own = data.get("targets")
    wanted = _wanted_name(data, env, defaults)
    try:
        found, looked_in = _target_source(found, catalogue, wanted, _dict(own))
    except ConfigError as exc:
        return config_warnings, exc.issues, None
    targets: dict[str, JSON] = dict(own) if isinstance(own, dict) else {}
    for defined, spec in found.specs.items():
        if defined not in targets:
            targets[defined] = spec
    if targets:
        data["targets"] = targets
    name = _select_name(data, env, defaults, (*targets, *found.notes))
    warnings = config_warnings
    own_names = set(own) if isinstance(own, dict) else set()
    judgeless: dict[str, str] = {}
    judges: dict[str, dict[str, JSON]] = {}
    judge_of = None
    if "judge" not in data:
        selected = name if name not in own_names else None
        judge_of = selected if isinstance(selected, str) else None
        judged, judgeless, judges = _judges(
            data,
            selected,
            found,
            source,
            default_grader=defaults.get("grader"),
            catalogue=catalogue,
        )
        warnings += judged
        _inline_judge(data, name if name in own_names else None, found, defaults, catalogue)
    if isinstance(name, str) and name in found.specs and name not in own_names:
        warnings += found.warnings[name]
        execution = data.setdefault("execution", {}) if name in found.workers else None
        if isinstance(execution, dict):
            execution.setdefault("concurrency", found.workers[name])
    env.export([v for variables in found.exports.values() for v in variables])
    located = {
        n: (where.file, where.line, f"targets[{found.index[n]}]")
        for n, where in found.lines.items()
        if n in found.specs and n not in own_names
    }
    judgeless = {n: why for n, why in judgeless.items() if n not in own_names}
    lookup = AgentVTargetLookup(
        looked_in, tuple(found.names), found.notes, located, judgeless, judges, judge_of
    )
    return warnings, [], lookup


def _judges(
    data: dict[str, JSON],
    name: JSON,
    found: AgentVTargets,
    source: SourceMap,
    *,
    default_grader: str | None,
    catalogue: _ConfigCatalogue,
) -> tuple[list[ConfigIssue], dict[str, str], dict[str, dict[str, JSON]]]:
    """The suite's judge: AgentV's grader of its target (`_grader_choice`); returns the
    warning when assay cannot use that grader, every target AgentV has no grader for until
    run time (with the reason) and every target's judge."""
    warnings: list[ConfigIssue] = []
    judgeless: dict[str, str] = {}
    judges: dict[str, dict[str, JSON]] = {}
    for target in found.specs:
        choice = choose_grader(target, found, default_grader=default_grader, catalog=catalogue.read)
        if choice.judge is not None:
            judges[target] = choice.judge
        if target == name and choice.judge is not None:
            data["judge"] = choice.judge
        if choice.deferred is not None:
            judgeless[target] = choice.deferred
        elif target == name and choice.unusable is not None:
            warnings.append(
                source.issue(
                    ("target",),
                    f"target '{name}' is graded in AgentV by a model assay cannot use: "
                    f"{choice.unusable}; the judge comes from assay's settings "
                    "(--judge-model, assay.yaml)",
                )
            )
    return warnings, judgeless, judges


def _inline_judge(
    data: dict[str, JSON],
    name: JSON,
    found: AgentVTargets,
    defaults: Mapping[str, str],
    catalogue: _ConfigCatalogue,
) -> None:
    """The judge of an eval file's own target (a v5 inline provider): AgentV v5 grades it
    with the config's `defaults.grader`, looked up as any provider's grader is."""
    grader = defaults.get("grader")
    if not isinstance(name, str) or grader is None or "judge" in data:
        return
    choice = choose_grader(name, found, default_grader=grader, catalog=catalogue.read)
    if choice.judge is not None:
        data["judge"] = choice.judge


def _config_file(eval_dir: Path, repo_root: Path) -> Path | None:
    """The `.agentv/config.yaml` AgentV would read: the first from the eval file's directory up
    to the repository root."""
    for directory in directory_chain(eval_dir, repo_root):
        path = directory / ".agentv" / "config.yaml"
        if path.is_file():
            return path
    return None


def _agentv_config(path: Path | None) -> tuple[JSON, SourceMap] | None:
    """AgentV's config file read; None when there is none or it cannot be read (AgentV too
    ignores a config file it cannot read)."""
    if path is None:
        return None
    try:
        return parse_yaml(path.read_text(encoding="utf-8"), display_path(path), interpolate=False)
    except (ConfigError, OSError, UnicodeDecodeError):
        return None


class _ConfigCatalogue:
    """The provider catalogue AgentV v5's config file names (`providers: file://…`, relative
    to the config file), read once when a target or grader is looked up there."""

    def __init__(
        self,
        config_file: Path | None,
        config: tuple[JSON, SourceMap] | None,
        env: AgentVEnv,
        eval_dir: Path,
        seen: Path | None,
        *,
        aliases: JSON,
        identity: Mapping[str, str],
    ) -> None:
        self.file: Path | None = None
        self.named = display_path(config_file) if config_file is not None else ""
        """The config file that names the catalogue."""
        data = config[0] if config is not None else None
        named = data.get("providers") if isinstance(data, dict) else None
        if config_file is not None and isinstance(named, str) and named.startswith("file://"):
            path = (config_file.parent / named.removeprefix("file://")).resolve()
            same = seen is not None and path == seen.resolve()
            self.file = path if path.is_file() and not same else None
        self.env = env
        self.eval_dir = eval_dir
        self.aliases = aliases if isinstance(aliases, dict) else None
        """The eval file's `use_target` aliases (AgentV adds them to its targets file)."""
        self.identity = identity
        self.found: AgentVTargets | None = None

    def read(self, *, strict: bool = False) -> AgentVTargets | None:
        """The catalogue's targets (None: there is none). A catalogue AgentV refuses is left
        out, or with `strict` (it is where the eval file's target comes from) raised.

        Raises:
            ConfigError: with `strict`, the catalogue is not a valid targets file.
        """
        if self.file is not None and self.found is None:
            try:
                self.found = read_agentv_targets(
                    self.file, self.env, self.eval_dir, aliases=self.aliases, identity=self.identity
                )
            except ConfigError:
                if strict:
                    raise
                self.file = None  # AgentV refuses it when it runs; the grader is not there
        return self.found


def _target_source(
    found: AgentVTargets, catalogue: _ConfigCatalogue, wanted: str, own: dict[str, JSON]
) -> tuple[AgentVTargets, str]:
    """The targets file the eval file's target comes from, and where an unknown one was
    looked up: the nearest, else the catalogue AgentV v5's config names (`providers:
    file://…`), which AgentV run from the repository root reads for every eval file.

    Raises:
        ConfigError: the target is not in the nearest file and that catalogue is invalid.
    """
    if wanted in found.lines or wanted in own or catalogue.file is None:
        return found, found.display
    other = catalogue.read(strict=True)
    if other is None:
        return found, found.display
    if wanted in other.lines:
        return other, other.display
    return found, f"{found.display} nor in {other.display} (the catalogue {catalogue.named} names)"


def _select_name(
    data: dict[str, JSON], env: AgentVEnv, defaults: Mapping[str, str], known: tuple[str, ...]
) -> JSON:
    """Set the suite's `target` to the one AgentV runs and return it: the eval file's own
    (AgentV reads `${{ VAR }}` in eval files too; unset is no target), else v5's
    `defaults.provider` or `default` when the targets have it."""
    name = data.get("target")
    variable = whole_reference(name)
    if variable is not None:
        name = data["target"] = env.get(variable, "").strip() or None
        if name is None:
            del data["target"]
    fallback = defaults.get("provider", "default")
    if name is None and fallback in known:
        name = data["target"] = fallback
    return name


def _identity(data: dict[str, JSON], source: SourceMap) -> dict[str, str]:
    """The eval file's suite name (its `name`, else its file name without `.eval.yaml` or
    `.yaml`, as AgentV names it) and absolute path: what replay targets match records by."""
    file = Path(source.default_file).resolve()
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        name = re.sub(r"(\.eval)?\.ya?ml$", "", file.name, flags=re.IGNORECASE) or "eval"
    return {"suite": name.strip(), "eval_path": str(file)}


def _dict(value: JSON) -> dict[str, JSON]:
    return value if isinstance(value, dict) else {}


def _wanted_name(data: dict[str, JSON], env: AgentVEnv, defaults: Mapping[str, str]) -> str:
    """The target an eval file runs, before it is looked up: its own (`${{ VAR }}` read), else
    v5's `defaults.provider`, else `default`."""
    name = data.get("target")
    variable = whole_reference(name)
    if variable is not None:
        name = env.get(variable, "").strip() or None
    if isinstance(name, str) and name:
        return name
    return defaults.get("provider", "default")


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
