"""An AgentV v5 eval file's inline provider of one of AgentV's own kinds as an assay target.

v5 eval files may define their provider in place (`providers: [{id: claude-cli, label:
claude-baseline}]`) instead of naming a catalogue entry; AgentV reads such an entry exactly
as a catalogue's. So it is converted to the targets-file definition
(`_v5_catalogue.v4_targets_document`) and mapped by the same `TargetMapper` as every targets
file: a coding agent becomes the same `command` target either way.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from assay.interop.agentv._env import AgentVEnv, find_repo_root
from assay.interop.agentv._target_kinds import TargetMapper, Unmapped
from assay.interop.agentv._v5_catalogue import v4_targets_document
from assay.results import JSON
from assay.targets import TargetSpec

__all__ = ["inline_target"]

_HANDLED = ("hooks", "delay")
"""Keys of the entry the v5 reader handles itself (provider hooks, the ignored delay)."""
_TARGET_SPEC: TypeAdapter[object] = TypeAdapter(TargetSpec)


def inline_target(
    entry: dict[str, JSON], name: str, base_dir: Path, display: str
) -> tuple[dict[str, JSON], list[str]]:
    """The assay target spec of the inline provider `entry` named `name`, and the
    differences from AgentV to warn about; `display` is the eval file, named in run-time
    messages (e.g. a missing executable).

    Raises:
        Unmapped: assay cannot build the target (the reason; `key` is the field at fault).
    """
    given = {k: v for k, v in entry.items() if k not in _HANDLED}
    document = v4_targets_document({"providers": [{**given, "label": name}]})
    targets = document.get("targets") if isinstance(document, dict) else None
    definition = targets[0] if isinstance(targets, list) and targets else None
    if not isinstance(definition, dict):
        raise Unmapped("a provider mapping needs an `id`", "id")
    env = AgentVEnv.for_eval(base_dir, find_repo_root(Path.cwd()))
    mapper = TargetMapper(definition, env, base_dir, display, name)
    spec = mapper.spec()
    try:
        _TARGET_SPEC.validate_python(spec)
    except ValidationError as exc:
        raise Unmapped("; ".join(e["msg"] for e in exc.errors(include_url=False))) from None
    env.export(mapper.exports)  # the API keys it reads at run time, from `.env` as AgentV does
    return spec, mapper.warnings
