"""promptfoo's format checks as assay graders: comma-separated value lists, JSON schemas
(inline, as text or from a file), XML, SQL, word counts and tool-call schemas."""

from __future__ import annotations

from pathlib import Path

from assay.interop.promptfoo._mapped import Mapped
from assay.results import JSON

__all__ = ["is_json", "split_values", "sql", "tool_calls", "value_list", "word_count", "xml"]


def split_values(text: str) -> list[str]:
    """promptfoo's comma-separated values: `a, "b, c"` is `a` and `b, c`; inside quotes `""` and
    `\\"` are a quote. Raises ValueError on an unterminated quote or text after one."""
    values: list[str] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and (text[i].isspace() or text[i] == ","):
            i += 1
        if i >= n:
            break
        if text[i] != '"':
            end = text.find(",", i)
            end = n if end == -1 else end
            values.append(text[i:end].strip())
            i = end
            continue
        i += 1
        field = []
        while True:
            if i >= n:
                raise ValueError("a quoted value has no closing quote")
            if text[i] == "\\" and i + 1 < n and text[i + 1] in '"\\':
                field.append(text[i + 1])
                i += 2
            elif text[i] == '"' and i + 1 < n and text[i + 1] == '"':
                field.append('"')
                i += 2
            elif text[i] == '"':
                i += 1
                break
            else:
                field.append(text[i])
                i += 1
        values.append("".join(field))
        while i < n and text[i].isspace():
            i += 1
        if i < n and text[i] != ",":
            raise ValueError("a quoted value must be followed by a comma")
    return values


def value_list(value: JSON) -> list[str] | str:
    """The list of a *-any / *-all value, or why it is not one."""
    if isinstance(value, str):
        try:
            return split_values(value)
        except ValueError as exc:
            return str(exc)
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return [str(v) for v in value]
    return "needs a list of strings or a comma-separated string as `value`"


def _load_schema(value: str, base: Path) -> tuple[JSON, str | None]:
    """A schema given as JSON/YAML text or a `file://` path (.json, .yaml, .yml), or why not."""
    import yaml

    text = value
    if value.startswith("file://"):
        path = base / value.removeprefix("file://")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return None, f"cannot read the schema file '{path}': {exc}"
    try:
        return yaml.safe_load(text), None  # YAML reads JSON too
    except yaml.YAMLError as exc:
        return None, f"the schema is neither JSON nor YAML: {str(exc).splitlines()[0]}"


def is_json(base: str, value: JSON, base_dir: Path) -> Mapped:
    """is-json: `is-json`, or `json-schema` with a schema; contains-json keeps its type."""
    if value is None or value == "":
        return Mapped({"type": base})
    schema, problem = _load_schema(value, base_dir) if isinstance(value, str) else (value, None)
    if problem is not None:
        return Mapped(unmapped=f"{base}: {problem}")
    if not isinstance(schema, dict):
        return Mapped(unmapped=f"{base}'s `value` must be a JSON Schema (an object)")
    if base == "contains-json":
        return Mapped({"type": "contains-json", "schema": schema})
    return Mapped({"type": "json-schema", "schema": schema})


def xml(base: str, value: JSON) -> Mapped:
    grader: dict[str, JSON] = {"type": base}
    required = value.get("requiredElements") if isinstance(value, dict) else value
    if isinstance(required, str):
        required = [r.strip() for r in required.split(",") if r.strip()]
    if isinstance(required, list) and all(isinstance(r, str) for r in required) and required:
        grader["required_elements"] = list(required)
    elif value is not None:
        return Mapped(unmapped=f"{base}'s `value` must be {{requiredElements: [paths]}}")
    return Mapped(grader)


_DIALECTS = {
    "mysql": "mysql", "mariadb": "mysql", "postgresql": "postgres", "postgres": "postgres",
    "sqlite": "sqlite", "bigquery": "bigquery", "snowflake": "snowflake", "transactsql": "tsql",
    "redshift": "redshift", "hive": "hive", "athena": "athena", "trino": "trino",
}  # fmt: skip


def sql(base: str, value: JSON) -> Mapped:
    grader: dict[str, JSON] = {"type": "is-sql"}
    if base == "contains-sql":
        grader["strip_code_fence"] = True
    options = value if isinstance(value, dict) else {}
    if value is not None and not isinstance(value, dict):
        return Mapped(unmapped=f"{base}'s `value` must be {{databaseType, allowedTables, …}}")
    database = options.get("databaseType")
    if isinstance(database, str):
        dialect = _DIALECTS.get(database.lower())
        if dialect is None:
            return Mapped(
                unmapped=f"{base} with databaseType '{database}': assay's SQL parser has no "
                f"such dialect (it reads {', '.join(sorted(set(_DIALECTS)))})"
            )
        grader["dialect"] = dialect
    for key, option in (("allowedTables", "allowed_tables"), ("allowedColumns", "allowed_columns")):
        if isinstance(options.get(key), list):
            grader[option] = [str(p) for p in options[key]]
    return Mapped(grader)


def word_count(value: JSON) -> Mapped:
    """promptfoo counts whitespace-separated words; a full-match RE2 pattern counts the same
    (RE2's `\\s` is ASCII whitespace, so other Unicode spaces join words)."""
    bounds: tuple[int, int | None] | None = (value, value) if isinstance(value, int) else None
    if isinstance(value, dict):
        low, high = value.get("min", 0), value.get("max")
        if isinstance(low, int) and (high is None or isinstance(high, int)):
            bounds = (low, high)
    if bounds is None or bounds[0] < 0 or (bounds[1] is not None and bounds[1] < bounds[0]):
        return Mapped(unmapped="word-count needs a count or {min, max} as `value`")
    low, high = bounds
    if max(low, high or 0) > 1000:
        return Mapped(unmapped="word-count bounds over 1000 words cannot be checked by a pattern")
    upper = "" if high is None else str(max(high - 1, 0))
    repeat = f"{{{max(low - 1, 0)},{upper}}}"
    words = rf"\S+(?:\s+\S+){repeat}"
    pattern = rf"\s*{words}\s*" if low > 0 else rf"\s*(?:{words})?\s*"
    if high == 0:
        pattern = r"\s*"
    return Mapped({"type": "regex", "value": pattern, "full_match": True})


def tool_calls(tools: JSON) -> Mapped:
    if not isinstance(tools, list) or not tools:
        return Mapped(
            unmapped="the provider declares no `tools` (or `functions`) to check the calls "
            "against; add them to a valid-tool-calls grader by hand"
        )
    return Mapped({"type": "valid-tool-calls", "tools": list(tools)})
