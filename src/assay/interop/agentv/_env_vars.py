"""AgentV's `${{ VAR }}`: environment variables in an eval file's string values.

AgentV interpolates every string of an eval file (and of its dataset files) from the
environment before reading it: a value that is one `${{ VAR }}` takes the variable's value as
true, false or a number when it reads as one, and text otherwise; a placeholder inside text
becomes the variable's text. An unset variable is empty text, as in AgentV. (assay's own
`${VAR}` form is interpolated when the YAML is read, with a located error when unset.)
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from assay.results import JSON

__all__ = ["interpolate_env"]

_VAR = re.compile(r"\$\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?")


def _typed(text: str) -> JSON:
    if text in ("true", "false"):
        return text == "true"
    if _NUMBER.fullmatch(text):
        return float(text) if "." in text else int(text)
    return text


def interpolate_env(value: JSON, environ: Mapping[str, str] | None = None) -> JSON:
    """`value` with every `${{ VAR }}` in its strings (recursively) replaced from `environ`
    (default: the process environment)."""
    env = os.environ if environ is None else environ
    if isinstance(value, list):
        return [interpolate_env(v, env) for v in value]
    if isinstance(value, dict):
        return {k: interpolate_env(v, env) for k, v in value.items()}
    if not isinstance(value, str) or "${{" not in value:
        return value
    whole = _VAR.fullmatch(value)
    if whole:
        return _typed(env.get(whole.group(1), ""))
    return _VAR.sub(lambda m: env.get(m.group(1), ""), value)
