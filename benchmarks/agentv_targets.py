"""How the targets of an AgentV checkout's eval files resolve in assay (issue 24 item 1).

For every eval file (`*.eval.yaml`, `*.eval.yml`, `eval.yaml`; `node_modules` skipped) it finds
the targets file AgentV would read, maps its targets and reports whether the target the file
selects (`execution.target`, `target`, else `default`) became an assay target, and why not.
The environment is the one AgentV would run with: set the variables its targets read.

    python benchmarks/agentv_targets.py /path/to/agentv-checkout

(The working directory matters as in AgentV only through `targets.yaml` files found there.)
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

import yaml

from assay.interop.agentv._env import AgentVEnv, find_repo_root
from assay.interop.agentv._targets import find_targets_file, read_agentv_targets


def eval_files(root: Path) -> list[Path]:
    names = (".eval.yaml", ".eval.yml")
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and (p.name.endswith(names) or p.name == "eval.yaml")
        and "node_modules" not in p.parts
    )


def selected(path: Path) -> str | None:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    execution = data.get("execution") if isinstance(data.get("execution"), dict) else {}
    return str(execution.get("target") or data.get("target") or "default")


def main(root: Path) -> None:
    outcome: collections.Counter[str] = collections.Counter()
    reasons: collections.Counter[str] = collections.Counter()
    kinds: collections.Counter[str] = collections.Counter()
    files = eval_files(root)
    for path in files:
        name = selected(path)
        if name is None:
            outcome["not a YAML mapping"] += 1
            continue
        repo_root = find_repo_root(root)  # run from the checkout's root, as AgentV is
        targets_file = find_targets_file(path.parent, repo_root)
        if targets_file is None:
            outcome["no targets file"] += 1
            continue
        found = read_agentv_targets(
            targets_file, AgentVEnv.for_eval(path.parent, repo_root), path.parent
        )
        if name in found.specs:
            outcome["mapped"] += 1
            kinds[str(found.specs[name]["type"])] += 1
        elif name in found.notes:
            outcome["not mapped"] += 1
            reasons[found.notes[name].message.split(": ", 1)[1]] += 1
        else:
            outcome["not in the targets file"] += 1
            reasons[f"'{name}' not in {targets_file.relative_to(root)}"] += 1
    print(f"{len(files)} eval files: {dict(outcome)}")
    print(f"mapped targets by assay type: {dict(kinds)}")
    for reason, count in reasons.most_common():
        print(f"{count:4}  {reason}")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
