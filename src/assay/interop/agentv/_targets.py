"""AgentV targets (`.agentv/targets.yaml`) as assay targets, found the way AgentV finds them.

AgentV looks for `targets.yaml`, `targets.yml`, `.agentv/targets.yaml` or `.agentv/targets.yml`
(v5: `providers.yaml`, `.agentv/providers.yaml`, or `.yml`) in the eval file's directory, then
each parent up to the repository root, then the working directory; the first file found is
the one. An eval file picks its target with
`execution.target` (or a top-level `target`), else the target named `default`; `--target`
overrides both. `use_target` delegates to another target (`${{ VAR }}` allowed).

Every target of the file is mapped (docs/migrating-from-agentv.md, "Targets"): model APIs onto
the provider layer's presets, `cli` and the coding agents onto `command` targets that run
`_agent_cli.py`. A target that cannot be mapped (an unset variable, a kind assay cannot drive)
is left out with the reason, which `assay run` reports when that target is selected.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from assay.config._datasets import display_path
from assay.config._yaml import Located, LocPath, parse_yaml
from assay.errors import ConfigError, ConfigIssue
from assay.interop.agentv._env import (
    AgentVEnv,
    directory_chain,
    whole_reference,
)
from assay.interop.agentv._target_kinds import TargetMapper, Unmapped
from assay.interop.agentv._v5_catalogue import v4_targets_document
from assay.results import JSON
from assay.targets import TargetSpec

__all__ = [
    "CANDIDATES",
    "AgentVTargets",
    "find_targets_file",
    "read_agentv_targets",
]

CANDIDATES = (
    "targets.yaml",
    "targets.yml",
    ".agentv/targets.yaml",
    ".agentv/targets.yml",
    "providers.yaml",  # v5's catalogue (`label`/`id` entries), read as a targets file
    "providers.yml",
    ".agentv/providers.yaml",
    ".agentv/providers.yml",
)
"""The names AgentV looks for in each directory, in order."""
_TARGET_SPEC: TypeAdapter[object] = TypeAdapter(TargetSpec)


@dataclass
class AgentVTargets:
    """The targets of one AgentV targets file, mapped to assay target specs."""

    file: Path
    display: str
    specs: dict[str, dict[str, JSON]] = field(default_factory=dict)
    """Assay target specs by AgentV target name."""
    notes: dict[str, ConfigIssue] = field(default_factory=dict)
    """Why each target of the file that is not in `specs` could not be mapped."""
    warnings: dict[str, list[ConfigIssue]] = field(default_factory=dict)
    """Differences from AgentV in each mapped target, reported when it is selected."""
    index: dict[str, int] = field(default_factory=dict)
    """Each target's position in the file's `targets` list."""
    lines: dict[str, Located] = field(default_factory=dict)
    """Where each target is defined."""
    exports: dict[str, list[str]] = field(default_factory=dict)
    """The variables each target reads at run time (API keys): `.env` values to export."""
    graders: dict[str, str] = field(default_factory=dict)
    """Each target's `grader_target`: the target whose model grades its outputs."""
    workers: dict[str, int] = field(default_factory=dict)
    """Each target's `workers`: its concurrency unless the eval file sets one."""
    kinds: dict[str, str] = field(default_factory=dict)
    """Each mapped target's AgentV provider kind (of the target `use_target` leads to)."""

    @property
    def catalogue(self) -> bool:
        """Whether the file is a v5 provider catalogue (`providers.yaml`)."""
        return self.file.name.startswith("providers.")

    @property
    def names(self) -> list[str]:
        return [*self.lines]


def find_targets_file(eval_dir: Path, repo_root: Path) -> Path | None:
    """The targets file AgentV would use for an eval file in `eval_dir`, or None."""
    directories = [*directory_chain(eval_dir, repo_root), Path.cwd().resolve()]
    for directory in dict.fromkeys(directories):
        for candidate in CANDIDATES:
            path = directory / candidate
            if path.is_file():
                return path
    return None


def read_agentv_targets(
    file: Path,
    env: AgentVEnv,
    eval_dir: Path,
    *,
    aliases: Mapping[str, JSON] | None = None,
    identity: Mapping[str, str] | None = None,
) -> AgentVTargets:
    """Read and map every target of an AgentV targets file, and the eval file's `aliases`
    (`execution.targets` entries with `use_target`: AgentV adds each the file lacks as a
    target delegating to another); `identity` is the eval file's suite name and path, which
    replay targets match recorded outputs by.

    Raises:
        ConfigError: the file is not YAML, or not a mapping with a `targets` list of named
            entries (AgentV refuses it too).
    """
    display = display_path(file)
    data, source = parse_yaml(file.read_text(encoding="utf-8"), display, interpolate=False)
    key = "providers" if isinstance(data, dict) and "providers" in data else "targets"
    data = v4_targets_document(data)  # a v5 catalogue (`providers:`) in the v4 shape
    entries = data.get("targets") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ConfigError([source.issue((key,), f"an AgentV targets file needs a `{key}` list")])
    found = AgentVTargets(file, display)
    definitions: dict[str, tuple[int, dict[str, JSON]]] = {}
    problems: list[ConfigIssue] = []
    for i, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(entry, dict) or not isinstance(name, str) or not name.strip():
            problems.append(source.issue((key, i), "each target needs a `name`"))
            continue
        definitions.setdefault(name.strip(), (i, entry))
        found.lines.setdefault(name.strip(), source.locate((key, i)))
        found.index.setdefault(name.strip(), i)
    if problems:
        raise ConfigError(problems)
    for alias, delegate in (aliases or {}).items():
        if alias not in definitions:
            definitions[alias] = (len(entries), {"name": alias, "use_target": delegate})
            found.lines[alias] = source.locate((key,))
            found.index[alias] = len(entries)
    for name, (i, _) in definitions.items():
        at = i
        try:
            concrete = _follow_use_target(name, definitions, env)
            at, definition = definitions[concrete]
            mapper = TargetMapper(definition, env, eval_dir, found.display, name, identity=identity)
            spec = mapper.spec()
            _TARGET_SPEC.validate_python(spec)
        except Unmapped as exc:
            where: LocPath = (key, at) if exc.key is None else (key, at, exc.key)
            found.notes[name] = source.issue(where, f"target '{name}': {exc}")
            continue
        except ValidationError as exc:
            message = "; ".join(e["msg"] for e in exc.errors(include_url=False))
            found.notes[name] = source.issue((key, at), f"target '{name}': {message}")
            continue
        found.specs[name] = spec
        found.kinds[name] = str(definition.get("provider", "")).strip().lower()
        grader = mapper.text("grader_target", "judge_target")
        if grader is not None:
            found.graders[name] = grader
        workers = definition.get("workers")
        if isinstance(workers, int) and not isinstance(workers, bool) and workers >= 1:
            found.workers[name] = workers
        found.warnings[name] = [source.issue((key, at), w) for w in mapper.warnings]
        found.exports[name] = mapper.exports
    return found


def _follow_use_target(
    name: str, definitions: Mapping[str, tuple[int, dict[str, JSON]]], env: Mapping[str, str]
) -> str:
    """The concrete target `name` delegates to (AgentV's resolveDelegatedTargetDefinition)."""
    visited = [name]
    current = name
    for _ in range(10):
        raw = definitions[current][1].get("use_target")
        if not isinstance(raw, str) or not raw.strip():
            return current
        variable = whole_reference(raw)
        resolved = (env.get(variable) or "").strip() if variable else raw.strip()
        if not resolved:
            if variable:
                known = ", ".join(n for n, (_, d) in definitions.items() if "use_target" not in d)
                raise Unmapped(
                    f"`use_target: ${{{{ {variable} }}}}` but {variable} is not set; set it to "
                    f"the name of a concrete target ({known}), or pass --target NAME",
                    "use_target",
                )
            raise Unmapped("`use_target` is empty", "use_target")
        if resolved not in definitions:
            via = f" (from {variable})" if variable else ""
            raise Unmapped(
                f"`use_target` names '{resolved}'{via}, which is not a target of this file",
                "use_target",
            )
        if resolved in visited:
            raise Unmapped(f"circular use_target: {' -> '.join([*visited, resolved])}")
        visited.append(resolved)
        current = resolved
    raise Unmapped("use_target delegates more than 10 times")
