"""promptfoo inputs read the way promptfoo reads them: prompt files, test files, CSV rows,
`file://` variables, variable expansion and prompt rendering.

Rendering follows promptfoo's `renderPrompt`: a prompt whose raw text is JSON has the strings
inside it rendered; any other prompt is rendered as a whole; the result is then parsed as a
chat (a JSON list of messages, or YAML starting with `- role:`) exactly as promptfoo's chat
providers parse it, so `{{ x | dump }}` inside a chat template works. Nunjucks renders an
unset variable as empty text; so does the converter, and says so.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from assay.results import JSON

__all__ = [
    "ROLES",
    "CodeReference",
    "Unsupported",
    "csv_test",
    "expand_vars",
    "load_var_file",
    "make_env",
    "parse_chat",
    "render_prompt",
    "resolve_var_references",
]

ROLES = ("system", "user", "assistant", "tool")
_IMAGE = {".jpg", ".jpeg", ".png", ".gif", ".bmp", ".webp", ".svg"}
_VIDEO = {".mp4", ".webm", ".ogg", ".mov", ".avi", ".wmv", ".mkv", ".m4v"}
_CODE = {".py", ".js", ".cjs", ".mjs", ".ts", ".cts", ".mts"}


class Unsupported(Exception):
    """Something promptfoo can read that the converter cannot carry over; the message says
    what, and what to do."""


class CodeReference(Unsupported):
    """A reference to code promptfoo would run (a `.py`/`.js` var, prompt or test generator)."""


def make_env(missing: set[str]) -> Any:
    """A sandboxed Jinja2 environment that reads Nunjucks as promptfoo uses it: an unset
    variable renders empty (its name is added to `missing`), `dump` is `JSON.stringify`,
    `load` is `JSON.parse`."""
    from jinja2 import ChainableUndefined
    from jinja2.sandbox import SandboxedEnvironment

    class _Recorded(ChainableUndefined):
        def __str__(self) -> str:
            if self._undefined_name is not None:
                missing.add(self._undefined_name)
            return ""

    def dump(value: Any, indent: int | None = None) -> str:
        if isinstance(value, ChainableUndefined):
            return ""
        if indent:
            return json.dumps(value, ensure_ascii=False, indent=indent)
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    def pairs(value: Any) -> Any:
        return list(value.items()) if isinstance(value, dict) else value

    env = SandboxedEnvironment(undefined=_Recorded, keep_trailing_newline=True)
    env.filters["dump"] = dump
    env.filters["nunjucks_pairs"] = pairs
    env.filters["load"] = lambda v: json.loads(v) if isinstance(v, str) else v
    return env


_PAIR_LOOP = re.compile(r"(\{%-?\s*for\s+\w+\s*,\s*\w+\s+in\s+)(.+?)(\s*-?%\})")


def _nunjucks(template: str) -> str:
    """Nunjucks loops over an object's pairs with `for k, v in obj`; Jinja2 needs `.items()`."""
    return _PAIR_LOOP.sub(r"\1(\2) | nunjucks_pairs\3", template)


def _render_in(env: Any, value: Any, variables: dict[str, JSON]) -> Any:
    if isinstance(value, str):
        return env.from_string(_nunjucks(value)).render(variables)
    if isinstance(value, list):
        return [_render_in(env, v, variables) for v in value]
    if isinstance(value, dict):
        return {k: _render_in(env, v, variables) for k, v in value.items()}
    return value


def render_prompt(env: Any, raw: str, variables: dict[str, JSON]) -> JSON:
    """The case input: `raw` rendered with `variables`, then read as a chat or as text.

    Raises:
        jinja2.TemplateError: the template does not render.
        Unsupported: the chat has parts assay inputs cannot hold (a video, a document).
    """
    try:
        parsed = json.loads(raw)
    except (json.JSONDecodeError, ValueError):
        text = env.from_string(_nunjucks(raw)).render(variables)
    else:
        if isinstance(parsed, str | int | float | bool) or parsed is None:
            text = env.from_string(_nunjucks(raw)).render(variables)
        else:
            text = json.dumps(_render_in(env, parsed, variables), ensure_ascii=False, indent=2)
    return parse_chat(text)


def _looks_like_json(text: str) -> bool:
    if text.startswith("{") and text.endswith("}"):
        return True
    if text.startswith("[") and text.endswith("]"):
        after = text[1:].lstrip()
        return (
            not after or after[0] in '"{[-0123456789' or after.startswith(("true", "false", "null"))
        )
    return False


def _parsed(text: str) -> Any:
    """The rendered prompt parsed as promptfoo's chat providers parse it (None: plain text).

    Raises:
        Unsupported: invalid YAML after `- role:`, or text that looks like JSON but is not.
    """
    stripped = text.strip()
    if stripped.startswith("- role:"):
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise Unsupported(f"the rendered chat prompt is not valid YAML: {exc}") from None
    try:
        return json.loads(text)
    except (json.JSONDecodeError, ValueError) as exc:
        if _looks_like_json(stripped):
            raise Unsupported(
                f"the rendered prompt looks like JSON but is not ({exc}); promptfoo's "
                "chat providers refuse it too: fix the template"
            ) from None
        return None


def _message(m: dict[str, Any]) -> dict[str, JSON]:
    """One chat message as an assay input message: text, or a list of content parts
    (images, audio) in OpenAI's shape.

    Raises:
        Unsupported: a content part assay inputs cannot hold, or a role they do not take.
    """
    content = m.get("content")
    role = "system" if m.get("role") == "developer" else m.get("role")
    if role not in ROLES:
        raise Unsupported(f"a chat message has the role '{role}'; assay inputs take {ROLES}")
    if isinstance(content, list) and content:
        from assay.interop.promptfoo._parts import content_parts  # imports this module

        parts = content_parts(content)
        if all(p["type"] == "text" for p in parts):  # text only: one text, as before
            return {"role": role, "content": "\n".join(str(p["text"]) for p in parts)}
        return {"role": role, "content": list[JSON](parts)}
    if content is None or content == []:
        content = ""
    return {"role": role, "content": content if isinstance(content, str) else json.dumps(content)}


def parse_chat(text: str) -> JSON:
    """promptfoo's `parseChatPrompt`: a list of {role, content} messages, or the text.

    Raises:
        Unsupported: a message holds a content part assay cannot (a video), or the text looks like
            JSON but is not (promptfoo's chat providers fail on it too).
    """
    parsed = _parsed(text)
    if not isinstance(parsed, list) or not parsed:
        return text
    if not all(isinstance(m, dict) and "role" in m for m in parsed):
        return text
    return [_message(m) for m in parsed]


def load_var_file(ref: str, base: Path) -> JSON:
    """A `file://` variable's value as promptfoo loads it.

    Raises:
        CodeReference: the file is code promptfoo would run.
        Unsupported: a PDF, or the file cannot be read.
    """
    name = ref.removeprefix("file://")
    file = base / name.split(":")[0] if Path(name).suffix.split(":")[0] in _CODE else base / name
    suffix = file.suffix.lower()
    if suffix in _CODE or re.search(r"\.(py|js|ts|mjs|cjs):\w+$", name):
        raise CodeReference(
            f"the variable is computed by code ('{name}'); run it once and write the value "
            "into the test"
        )
    if suffix == ".pdf":
        raise Unsupported(f"'{name}' is a PDF (promptfoo extracts its text); paste the text")
    try:
        if suffix in _IMAGE or suffix in _VIDEO:
            return base64.b64encode(file.read_bytes()).decode()
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise Unsupported(f"cannot read '{name}' (looked at {file}): {exc}") from None
    if suffix in (".yaml", ".yml"):
        try:
            return json.dumps(yaml.safe_load(text), ensure_ascii=False)
        except yaml.YAMLError as exc:
            raise Unsupported(f"'{name}' is not valid YAML: {exc}") from None
    return text.strip()


def expand_vars(variables: dict[str, JSON], base: Path) -> list[dict[str, JSON]]:
    """promptfoo's `generateVarCombinations`: a list whose first item is a string, and a
    `file://` glob, expand into one set of variables per value; other lists stay one value."""
    combos: list[dict[str, JSON]] = [{}]
    for key, value in variables.items():
        values: list[JSON]
        if (
            isinstance(value, str)
            and value.startswith("file://")
            and any(c in value for c in "*?[")
        ):
            pattern = value.removeprefix("file://")
            matches = sorted(str(p.relative_to(base)) for p in base.glob(pattern))
            values = [f"file://{m}" for m in matches] or [value]
        elif isinstance(value, list) and value and isinstance(value[0], str):
            values = list(value)
        else:
            values = [value]
        combos = [{**combo, key: v} for combo in combos for v in values]
    return combos


def resolve_var_references(variables: dict[str, JSON]) -> dict[str, JSON]:
    """promptfoo's `resolveVariables`: `{{ other }}` inside a variable's text takes the other
    variable's value (five rounds at most), and one trailing newline is dropped."""
    out = {
        k: (v[:-1] if isinstance(v, str) and v.endswith("\n") else v) for k, v in variables.items()
    }
    pattern = re.compile(r"\{\{\s*(\w+)\s*\}\}")
    for _ in range(5):
        changed = False
        for key, value in out.items():
            if not isinstance(value, str):
                continue
            match = pattern.search(value)
            if match and match.group(1) in out:
                out[key] = value.replace(match.group(0), str(out[match.group(1)]), 1)
                changed = True
        if not changed:
            break
    return out


_CSV_TYPE = re.compile(r"(not-)?([a-z][a-z0-9-]*)(?:\((-?\d+(?:\.\d+)?)\))?:(.*)", re.S)
_ALIASES = {"grade": "llm-rubric", "fn": "javascript", "eval": "javascript"}


def _assertion(cell: str, known: Callable[[str], bool]) -> dict[str, JSON]:
    """One `__expected` cell (`type: value`, `similar(0.8): text`, else `equals`)."""
    match = _CSV_TYPE.fullmatch(cell.strip())
    if match:
        negate, kind, threshold, value = match.groups()
        kind = _ALIASES.get(kind, kind)
        if known(kind):
            spec: dict[str, JSON] = {"type": f"{negate or ''}{kind}", "value": value.strip()}
            if threshold is not None:
                spec["threshold"] = float(threshold)
            return spec
    return {"type": "equals", "value": cell}


def _metadata(key: str, cell: str) -> JSON:
    """`__metadata:key` is the text; `__metadata:key[]` splits on unescaped commas."""
    if not key.endswith("[]"):
        return cell
    parts = re.split(r"(?<!\\),", cell)
    return [p.replace("\\,", ",").strip() for p in parts if p.strip()]


def _number(cell: str) -> JSON:
    try:
        return float(cell)
    except ValueError:
        return cell


@dataclass
class _Row:
    """A CSV row being read: the test and what could not be read."""

    test: dict[str, Any] = field(default_factory=lambda: {"vars": {}})
    asserts: dict[str, dict[str, JSON]] = field(default_factory=dict)
    metadata: dict[str, JSON] = field(default_factory=dict)
    options: dict[str, JSON] = field(default_factory=dict)
    configs: list[tuple[str, str, str]] = field(default_factory=list)
    metric: str = ""
    unread: list[str] = field(default_factory=list)

    def read(self, column: str, cell: str, known: Callable[[str], bool]) -> None:
        if not column.startswith("__"):
            self.test["vars"][column] = cell
        elif column.startswith("__expected"):
            if cell:
                self.asserts[column] = _assertion(cell, known)
        elif column.startswith("__metadata:"):
            key = column.removeprefix("__metadata:")
            if key:
                self.metadata[key.removesuffix("[]")] = _metadata(key, cell)
        elif column.startswith("__config:"):
            _, target, key = [*column.split(":"), "", ""][:3]
            self.configs.append((target, key, cell))
        else:
            self._special(column, cell)

    def _special(self, column: str, cell: str) -> None:
        if column == "__description":
            self.test["description"] = cell
        elif column in ("__prefix", "__suffix"):
            if cell:
                self.options[column[2:]] = cell
        elif column == "__metric":
            self.metric = cell
        elif column == "__threshold" and isinstance(_number(cell), float):
            self.test["threshold"] = _number(cell)
        elif cell:
            self.unread.append(column)

    def finish(self) -> dict[str, Any]:
        for target, key, cell in self.configs:
            for name, spec in self.asserts.items():
                if target in ("__expected", name) and cell != "":
                    spec[key] = _number(cell)
        for spec in self.asserts.values():
            if self.metric:
                spec.setdefault("metric", self.metric)
        self.test["assert"] = list(self.asserts.values())
        if self.metadata:
            self.test["metadata"] = self.metadata
        if self.options:
            self.test["options"] = self.options
        return self.test


def csv_test(
    row: dict[str, str], known: Callable[[str], bool]
) -> tuple[dict[str, JSON], list[str]]:
    """promptfoo's CSV row as a test: plain columns are vars; `__expected…` cells are
    assertions; `__description`, `__prefix`, `__suffix`, `__metric`, `__threshold`,
    `__metadata:key` (`key[]` splits on commas) and `__config:__expected[N]:key`. Returns the
    test and the special columns it could not read."""
    reading = _Row()
    for column, cell in row.items():
        reading.read((column or "").strip(), cell if isinstance(cell, str) else "", known)
    return reading.finish(), reading.unread


def read_csv(text: str) -> list[tuple[int, dict[str, str]]]:
    """Rows with the line each starts on."""
    reader = csv.DictReader(io.StringIO(text))
    rows: list[tuple[int, dict[str, str]]] = []
    _ = reader.fieldnames  # reads the header row
    line = reader.line_num
    for row in reader:
        rows.append((line + 1, row))
        line = reader.line_num
    return rows
