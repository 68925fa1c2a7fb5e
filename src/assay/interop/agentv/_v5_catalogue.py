"""AgentV v5's provider catalogue as the v4 `.agentv/targets.yaml` document.

v5 eval files name their provider by a label (`providers: [llm]`) defined in
`.agentv/providers.yaml` (a list, or a mapping with `providers:`; each entry `{id: <kind>,
label: <name>, …settings}`), or in a v5 `targets.yaml` (`{targets: [{id: <name>, provider:
<kind>, config: {…}}]}`). v4 wrote the same as `{targets: [{name, provider, …settings}]}` with
`${{ VAR }}` references. Converting keeps one reader of targets files (the v4 one) for both
formats: the lookup that finds `.agentv/targets.yaml` passes a v5 catalogue through
`v4_targets_document` first.
"""

from __future__ import annotations

import re

from assay.results import JSON

__all__ = ["v4_targets_document"]

_ENV = re.compile(r"\{\{\s*env\.([A-Za-z_]\w*)\s*\}\}")
_IDENTITY = frozenset({"id", "label", "provider", "config", "runtime"})


def v4_targets_document(data: JSON) -> JSON:
    """The v4 targets document for a v5 catalogue; anything else is returned unchanged
    (a v4 targets file, or a shape for the targets reader to reject with its own message)."""
    entries = data.get("providers", data.get("targets")) if isinstance(data, dict) else data
    if not isinstance(entries, list) or not any(_is_v5(e) for e in entries):
        return data
    return {"targets": [_entry(e) if _is_v5(e) else e for e in entries]}


def _is_v5(entry: JSON) -> bool:
    """A v5 entry names itself by `label` (providers.yaml) or by `id` next to `provider`."""
    return isinstance(entry, dict) and "name" not in entry and "id" in entry


def _entry(entry: JSON) -> JSON:
    assert isinstance(entry, dict)
    if "label" in entry:
        name, kind = entry["label"], entry["id"]
    else:
        name, kind = entry["id"], entry.get("provider")
    settings = {k: v for k, v in entry.items() if k not in _IDENTITY}
    config = entry.get("config")
    if isinstance(config, dict):
        settings.update(config)
    out: dict[str, JSON] = {"name": name, "provider": kind}
    out.update({k: _env(v) for k, v in settings.items()})
    return out


def _env(value: JSON) -> JSON:
    """`{{ env.NAME }}` (v5) as `${{ NAME }}` (v4), recursively."""
    if isinstance(value, str):
        return _ENV.sub(lambda m: "${{ " + m.group(1) + " }}", value)
    if isinstance(value, list):
        return [_env(v) for v in value]
    if isinstance(value, dict):
        return {k: _env(v) for k, v in value.items()}
    return value
