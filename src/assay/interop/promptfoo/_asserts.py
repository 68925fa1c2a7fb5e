"""promptfoo `assert` entries as assay graders (see docs/migrating-from-promptfoo.md).

A promptfoo test passes when every assertion passes, each against its own `threshold`; the
converted suite folds graders with the `threshold` aggregator at 1.0 and gives each grader its
promptfoo threshold as `min_score`, so the verdicts agree. Assertions with no assay equivalent
are reported (with what to do), never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from assay.interop.agentv._detect import substitute_vars
from assay.interop.promptfoo._scripts import script_command
from assay.results import JSON

__all__ = ["Mapped", "Where", "judge_of", "map_assertion", "split_values", "with_transform"]

_SAME = frozenset({"equals", "contains", "icontains", "starts-with", "ends-with", "regex"})
_MANY = {
    "contains-any": ("contains-any", True),
    "contains-all": ("contains-all", True),
    "icontains-any": ("contains-any", False),
    "icontains-all": ("contains-all", False),
}
_JUDGED = {
    "llm-rubric": "{value}",
    "g-eval": "{value}",
    "model-graded-closedqa": "The output meets this criterion: {value}",
    "factuality": "The output is factually consistent with this reference answer: {value}",
    "model-graded-factuality": "The output is factually consistent with this reference "
    "answer: {value}",
    "answer-relevance": "The output is relevant to the user's question and answers it.",
}
_JUDGED_BAR = {"g-eval": 0.7}
"""promptfoo's default thresholds of judged types; the others pass on the judge's verdict,
which an llm-grader reads as a score of at least 0.5."""
_CONTINUOUS_BAR = {"similar": 0.75, "rouge-n": 0.75, "bleu": 0.5}
"""promptfoo's default thresholds of the reference metrics (pass: score >= threshold)."""
_TOOL_CALLS = (
    "is-valid-openai-tools-call",
    "is-valid-openai-function-call",
    "is-valid-function-call",
)
_ADVICE = {
    "webhook": "call the webhook from a code-grader command",
    "select-best": "assay grades each output on its own; compare runs with `assay compare`",
    "ruby": "rewrite the check as a code-grader command (`ruby grade.rb` reading the context "
    "as JSON on stdin)",
}
_DEFAULT_ADVICE = "assay has no equivalent grader; write a code-grader or an llm-grader for it"
_NOT_RENDERED = ("transform", "assert")
"""Keys promptfoo does not render with the test's vars (the set's members render on their own)."""


@dataclass
class Mapped:
    """One assertion's result: the grader, or why it was left out; and any approximation."""

    grader: dict[str, JSON] | None = None
    unmapped: str | None = None
    approximated: list[str] = field(default_factory=list)


def judge_of(provider: JSON) -> dict[str, JSON] | None:
    """A grading `provider` (`openai:gpt-4o`, `{id: ...}`) as an assay judge spec."""
    ident = provider.get("id") if isinstance(provider, dict) else provider
    if not isinstance(ident, str):
        return None
    parts = ident.split(":")
    if parts[0] not in ("openai", "anthropic") or len(parts) < 2:
        return None
    return {"provider": parts[0], "model": parts[-1]}


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


def _values(value: JSON) -> list[str] | str:
    """The list of a *-any / *-all value, or why it is not one."""
    if isinstance(value, str):
        try:
            return split_values(value)
        except ValueError as exc:
            return str(exc)
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return [str(v) for v in value]
    return "needs a list of strings or a comma-separated string as `value`"


_STRICT = 1e-8
"""Added to a negated bar: assay counts a score within 1e-9 of its bar as reaching it, so the
bar sits just above that tolerance and a score equal to the threshold fails, as promptfoo's
strict `<` says."""


def _bar(threshold: JSON, default: float, negate: bool) -> float:
    """The min_score that gives promptfoo's verdict: score >= threshold, or — negated —
    score < threshold, which on assay's negated score (1 − score) is a bar just above
    1 − threshold."""
    bar = float(threshold) if isinstance(threshold, int | float) else default
    if not negate:
        return bar
    return min(1.0, round(1.0 - bar + _STRICT, 10))


def _re2_problem(pattern: str) -> str | None:
    from assay.graders import compile_re2

    try:
        compile_re2(pattern)
    except ValueError as exc:
        return str(exc)
    return None


@dataclass(frozen=True)
class Where:
    """What an assertion may refer to: the config's directory (`file://` paths), the suite's
    (where commands run), and the tools the default provider declares (for
    is-valid-openai-tools-call). `scripts` records that a wrapper is needed."""

    base: Path = Path()
    out: Path | None = None
    tools: JSON = None
    scripts: list[str] = field(default_factory=list)


def map_assertion(spec: JSON, variables: dict[str, JSON], where: Where | None = None) -> Mapped:
    """Map one promptfoo assertion; `variables` render `{{ var }}` in its value."""
    where = where or Where()
    if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
        return Mapped(unmapped="an assertion must be a mapping with a `type`")
    kind: str = spec["type"]
    negate = kind.startswith("not-")
    base = kind.removeprefix("not-")
    rendered = {
        key: item if key in _NOT_RENDERED else substitute_vars(item, variables)
        for key, item in spec.items()
    }
    mapped = _grader(base, rendered, negate, variables, where)
    if mapped.grader is None:
        return mapped
    grader = mapped.grader
    if negate:
        grader["negate"] = True
    if "transform" in spec:
        wrapped = with_transform(grader, spec["transform"], where)
        if isinstance(wrapped, str):
            return Mapped(unmapped=f"its `transform` cannot run: {wrapped}")
        grader = mapped.grader = wrapped
    if isinstance(rendered.get("metric"), str) and rendered["metric"]:
        grader["name"] = rendered["metric"]
    weight = rendered.get("weight")
    if isinstance(weight, int | float) and not isinstance(weight, bool) and weight >= 0:
        grader["weight"] = weight
    return mapped


def with_transform(grader: dict[str, JSON], transform: JSON, where: Where) -> dict[str, JSON] | str:
    """`grader` run on the output `transform` makes (a `transform` grader), or why it cannot.

    The grader's name and weight move to the wrapper, which is what the case scores."""
    command = script_command("javascript", transform, where.base, out=where.out, transform=True)
    if command.argv is None:
        return command.problem or "the transform is not code"
    where.scripts.append("transform")
    outer: dict[str, JSON] = {"type": "transform", "command": list(command.argv)}
    if command.memory_mb is None:
        outer["memory_mb"] = None
    inner = dict(grader)
    for key in ("name", "weight"):
        if key in inner:
            outer[key] = inner.pop(key)
    outer["assertion"] = inner
    return outer


def _grader(
    base: str, spec: dict[str, JSON], negate: bool, variables: dict[str, JSON], where: Where
) -> Mapped:
    value, threshold = spec.get("value"), spec.get("threshold")
    if base in _SAME:
        return _same(base, value)
    if base in _MANY:
        kind, sensitive = _MANY[base]
        values = _values(value)
        if isinstance(values, str) or not values:
            return Mapped(unmapped=f"{base} {values or 'needs at least one value'}")
        grader: dict[str, JSON] = {"type": kind, "value": list(values)}
        if not sensitive:
            grader["case_sensitive"] = False
        return Mapped(grader)
    if base in ("is-json", "contains-json"):
        return _is_json(base, value, where.base)
    if base in ("is-xml", "contains-xml"):
        return _xml(base, value)
    if base in ("is-sql", "contains-sql"):
        return _sql(base, value)
    if base in _JUDGED:
        return _judged(base, value, threshold, spec)
    if base.startswith("similar:"):
        base = "similar"  # the cosine / dot / euclidean variants: one approximation for all
    if base in ("similar", "rouge-n", "bleu", "levenshtein"):
        return _reference(base, value, threshold, negate)
    if base == "word-count":
        return _word_count(value)
    return _other(base, spec, threshold, variables, where)


def _other(
    base: str, spec: dict[str, JSON], threshold: JSON, variables: dict[str, JSON], where: Where
) -> Mapped:
    if base in ("javascript", "python"):
        command = script_command(
            base,
            spec.get("value"),
            where.base,
            out=where.out,
            threshold=threshold,
            config=spec.get("config"),
        )
        if command.argv is None:
            return Mapped(unmapped=command.problem)
        where.scripts.append(base)
        grader: dict[str, JSON] = {"type": "code-grader", "command": list(command.argv)}
        if command.memory_mb is None:
            grader["memory_mb"] = None
        return Mapped(grader)
    if base in _TOOL_CALLS:
        return _tool_calls(where.tools)
    if base in ("latency", "cost"):
        if not isinstance(threshold, int | float):
            return Mapped(unmapped=f"{base} needs a numeric `threshold`")
        option = "max_ms" if base == "latency" else "max_usd"
        return Mapped({"type": base, option: threshold})
    if base == "assert-set":
        return _assert_set(spec, threshold, variables, where)
    return Mapped(unmapped=_ADVICE.get(base, _DEFAULT_ADVICE))


def _same(base: str, value: JSON) -> Mapped:
    if isinstance(value, int | float) and not isinstance(value, bool) and base != "regex":
        value = str(value)  # promptfoo compares numbers as their text
    if base == "equals" and isinstance(value, dict | list):
        # promptfoo parses the output and compares deeply: a schema whose `const` is the value
        return Mapped({"type": "json-schema", "schema": {"const": value}})
    if not isinstance(value, str):
        return Mapped(unmapped=f"{base} needs a string `value`")
    if base == "regex":
        problem = _re2_problem(value)
        if problem:
            return Mapped(
                unmapped=f"the pattern cannot run on RE2 ({problem}); rewrite it "
                "without lookaround or backreferences"
            )
    return Mapped({"type": base, "value": value})


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


def _is_json(base: str, value: JSON, base_dir: Path) -> Mapped:
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


def _xml(base: str, value: JSON) -> Mapped:
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


def _sql(base: str, value: JSON) -> Mapped:
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


def _word_count(value: JSON) -> Mapped:
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


def _tool_calls(tools: JSON) -> Mapped:
    if not isinstance(tools, list) or not tools:
        return Mapped(
            unmapped="the provider declares no `tools` (or `functions`) to check the calls "
            "against; add them to a valid-tool-calls grader by hand"
        )
    return Mapped({"type": "valid-tool-calls", "tools": list(tools)})


def _judged(base: str, value: JSON, threshold: JSON, spec: dict[str, JSON]) -> Mapped:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        value = "\n".join(f"- {v}" for v in value)
    if base != "answer-relevance" and not (isinstance(value, str) and value.strip()):
        return Mapped(unmapped=f"{base} needs its criterion as a string `value`")
    prompt = _JUDGED[base].format(value=value)
    bar = threshold if isinstance(threshold, int | float) else _JUDGED_BAR.get(base, 0.5)
    grader: dict[str, JSON] = {"type": "llm-grader", "prompt": prompt, "min_score": bar}
    judge = judge_of(spec.get("provider"))
    if judge is not None:
        grader["judge"] = judge
    approximated = (
        []
        if base in ("llm-rubric", "g-eval")
        else [f"{base} is judged by an llm-grader with the criterion '{prompt}'"]
    )
    return Mapped(grader, approximated=approximated)


def _reference(base: str, value: JSON, threshold: JSON, negate: bool) -> Mapped:
    if base == "bleu" and isinstance(value, list) and all(isinstance(v, str) for v in value):
        bar = _bar(threshold, _CONTINUOUS_BAR[base], negate)
        return Mapped({"type": "bleu", "value": list(value), "min_score": bar})
    if not isinstance(value, str):
        return Mapped(unmapped=f"{base} needs the reference text as `value`")
    if base == "levenshtein":
        # promptfoo reads `threshold || 5`: an absent or zero threshold allows 5 edits
        limit = int(threshold) if isinstance(threshold, int | float) and threshold else 5
        return Mapped({"type": "levenshtein", "value": value, "max_distance": limit})
    bar = _bar(threshold, _CONTINUOUS_BAR[base], negate)
    if base == "bleu":
        return Mapped({"type": "bleu", "value": value, "min_score": bar})
    if base == "rouge-n":
        return Mapped({"type": "rouge", "variant": "rouge1", "value": value, "min_score": bar})
    note = "similar (embedding cosine) is approximated by `similarity` (edit-distance ratio)"
    grader: dict[str, JSON] = {"type": "similarity", "value": value, "min_score": bar}
    return Mapped(grader, approximated=[note])


def _assert_set(
    spec: dict[str, JSON], threshold: JSON, variables: dict[str, JSON], where: Where
) -> Mapped:
    members = spec.get("assert")
    if not isinstance(members, list) or not members:
        return Mapped(unmapped="assert-set needs an `assert` list")
    graders: list[JSON] = []
    approximated: list[str] = []
    for member in members:
        inner = map_assertion(member, variables, where)
        if inner.grader is None:
            return Mapped(unmapped=f"a member of the set has no equivalent: {inner.unmapped}")
        graders.append(inner.grader)
        approximated += inner.approximated
    grader: dict[str, JSON] = {"type": "composite", "assertions": graders}
    if isinstance(threshold, int | float):
        grader["min_score"] = threshold
    else:
        grader["aggregator"] = {"type": "threshold", "threshold": 1.0}
    return Mapped(grader, approximated=approximated)
