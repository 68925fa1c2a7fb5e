"""promptfoo's `nunjucksFilters`: custom template filters written in JavaScript.

promptfoo loads each file (`name: ./filter.js`) and calls its exported function wherever a
template pipes a value through `name`, with the value and the filter's arguments. The converter
renders prompts when it imports, so it calls the same function then, under Node.js in the
config's directory, and the case holds the rendered prompt (one call per distinct arguments).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from assay.interop.promptfoo._prompt_programs import call_js
from assay.interop.promptfoo._reader import Reader
from assay.results import JSON

__all__ = ["custom_filters"]

_JS = (".js", ".cjs", ".mjs")


def custom_filters(reader: Reader, raw: JSON) -> dict[str, Callable[..., JSON]]:
    """The filters `nunjucksFilters` defines, by name; each one that cannot run is a note (a
    template using it then fails to render, and its cases are left out with that message)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        reader.note(("nunjucksFilters",), "expected a mapping of filter names to files")
        return {}
    filters: dict[str, Callable[..., JSON]] = {}
    for name, ref in raw.items():
        where = ("nunjucksFilters", str(name))
        if not isinstance(ref, str) or not ref.strip():
            reader.note(where, f"filter '{name}' needs the path of its file")
            continue
        file = ref.removeprefix("file://")
        if not file.endswith(_JS):
            reader.note(
                where,
                f"filter '{name}' ('{file}') is not a JavaScript file (.js, .cjs, .mjs); "
                "compile it to JavaScript, or rewrite the template without it",
            )
            continue
        if not (reader.base / file).is_file():
            reader.note(where, f"filter '{name}': '{file}' does not exist")
            continue
        filters[str(name)] = _filter(reader, f"file://{file}")
    if filters:
        reader.approx(
            ("nunjucksFilters",),
            f"the filters ({', '.join(sorted(filters))}) run under Node.js when the import "
            "renders the prompts, so the cases hold their answers; a filter whose answer "
            "changes from run to run (a date, a random pick) is fixed at the import's",
        )
    return filters


def _filter(reader: Reader, ref: str) -> Callable[..., JSON]:
    """A Jinja2 filter that calls the JavaScript function at `ref` (cached by arguments)."""
    seen: dict[str, JSON] = {}

    def run(*args: Any) -> JSON:
        plain = [_plain(a) for a in args]
        key = json.dumps(plain, ensure_ascii=False, sort_keys=True, default=str)
        if key not in seen:
            seen[key] = call_js(reader.base, ref, plain)
        return seen[key]

    return run


def _plain(value: Any) -> JSON:
    """A template value as JSON for the function: an undefined variable is `null`."""
    from jinja2 import Undefined

    if isinstance(value, Undefined):
        return None
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
