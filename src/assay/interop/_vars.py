"""`{{ var }}` placeholders in the values of other tools' files (AgentV's and promptfoo's).

A module of its own so both readers share it without importing each other's package.
"""

from __future__ import annotations

import json
import re

from assay.results import JSON

__all__ = ["substitute_vars"]

_VAR = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")


def substitute_vars(value: JSON, variables: dict[str, JSON]) -> JSON:
    """`{{ name }}` / `{{ a.b }}` in strings (recursively) from `variables`; a string that is
    one placeholder keeps the value's JSON type, and unknown names are left as they are."""
    if isinstance(value, list):
        return [substitute_vars(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: substitute_vars(v, variables) for k, v in value.items()}
    if not isinstance(value, str) or "{{" not in value:
        return value

    def lookup(name: str) -> tuple[bool, JSON]:
        node: JSON = variables
        for part in name.split("."):
            if not isinstance(node, dict) or part not in node:
                return False, None
            node = node[part]
        return True, node

    whole = _VAR.fullmatch(value.strip())
    if whole:
        found, got = lookup(whole.group(1))
        if found:
            return got

    def replace(match: re.Match[str]) -> str:
        found, got = lookup(match.group(1))
        if not found:
            return match.group(0)
        return got if isinstance(got, str) else json.dumps(got, ensure_ascii=False)

    return _VAR.sub(replace, value)
