"""promptfoo `assert` entries as assay graders (see docs/migrating-from-promptfoo.md).

A promptfoo test passes when every assertion passes, each against its own `threshold`; the
converted suite folds graders with the `threshold` aggregator at 1.0 and gives each grader its
promptfoo threshold as `min_score`, so the verdicts agree. Assertions with no assay equivalent
are reported (with what to do), never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from assay.interop.agentv._detect import substitute_vars
from assay.results import JSON

__all__ = ["Mapped", "judge_of", "map_assertion"]

_SAME = frozenset({"equals", "contains", "icontains", "starts-with", "regex"})
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
    "answer-relevance": "The output is relevant to the user's question and answers it.",
}
_ADVICE = {
    "javascript": "rewrite the check as a code-grader (a Python `function` or a `command`)",
    "python": "rewrite it as a code-grader: `function: module:grade` receives the grading "
    "context (output, expected_output, metadata, …) and returns a score or {score, reasoning}",
    "webhook": "call the webhook from a code-grader",
    "contains-json": "use is-json, json-schema or field-accuracy if the whole output is JSON",
    "is-valid-openai-tools-call": "check tool calls with tool-trajectory",
    "is-valid-openai-function-call": "check tool calls with tool-trajectory",
    "select-best": "assay grades each output on its own; compare runs with `assay compare`",
}
_DEFAULT_ADVICE = "assay has no equivalent grader; write a code-grader or an llm-grader for it"


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


def _values(value: JSON) -> list[str] | None:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [str(v) for v in value]
    return None


def _re2_problem(pattern: str) -> str | None:
    from assay.graders import compile_re2

    try:
        compile_re2(pattern)
    except ValueError as exc:
        return str(exc)
    return None


def map_assertion(spec: JSON, variables: dict[str, JSON]) -> Mapped:
    """Map one promptfoo assertion; `variables` render `{{ var }}` in its value."""
    if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
        return Mapped(unmapped="an assertion must be a mapping with a `type`")
    kind: str = spec["type"]
    negate = kind.startswith("not-")
    base = kind.removeprefix("not-")
    if "transform" in spec:
        return Mapped(unmapped="assay grades the raw output; `transform` has no equivalent")
    spec = {key: substitute_vars(item, variables) for key, item in spec.items()}
    value = spec.get("value")
    threshold = spec.get("threshold")
    mapped = _grader(base, value, threshold, spec)
    if mapped.grader is None:
        return mapped
    grader = mapped.grader
    if negate:
        grader["negate"] = True
    if isinstance(spec.get("metric"), str):
        grader["name"] = spec["metric"]
    if isinstance(spec.get("weight"), int | float):
        grader["weight"] = spec["weight"]
    return mapped


def _grader(base: str, value: JSON, threshold: JSON, spec: dict[str, JSON]) -> Mapped:
    if base in _SAME:
        return _same(base, value)
    if base in _MANY:
        kind, sensitive = _MANY[base]
        values = _values(value)
        if not values:
            return Mapped(unmapped=f"{base} needs a list of strings as `value`")
        grader: dict[str, JSON] = {"type": kind, "value": list(values)}
        if not sensitive:
            grader["case_sensitive"] = False
        return Mapped(grader)
    if base == "is-json":
        if isinstance(value, dict):
            return Mapped({"type": "json-schema", "schema": value})
        return Mapped({"type": "is-json"})
    if base in _JUDGED:
        return _judged(base, value, threshold, spec)
    if base in ("similar", "rouge-n", "levenshtein"):
        return _reference(base, value, threshold)
    if base in ("latency", "cost"):
        if not isinstance(threshold, int | float):
            return Mapped(unmapped=f"{base} needs a numeric `threshold`")
        option = "max_ms" if base == "latency" else "max_usd"
        return Mapped({"type": base, option: threshold})
    if base == "assert-set":
        return _assert_set(spec, threshold)
    return Mapped(unmapped=_ADVICE.get(base, _DEFAULT_ADVICE))


def _same(base: str, value: JSON) -> Mapped:
    if not isinstance(value, str):
        if base == "equals" and value is not None:
            return Mapped(
                unmapped="equals with a JSON value: put it in the test's "
                "expected_output and use `equals` without a value"
            )
        return Mapped(unmapped=f"{base} needs a string `value`")
    if base == "regex":
        problem = _re2_problem(value)
        if problem:
            return Mapped(
                unmapped=f"the pattern cannot run on RE2 ({problem}); rewrite it "
                "without lookaround or backreferences"
            )
    return Mapped({"type": base, "value": value})


def _judged(base: str, value: JSON, threshold: JSON, spec: dict[str, JSON]) -> Mapped:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        value = "\n".join(f"- {v}" for v in value)
    if base != "answer-relevance" and not (isinstance(value, str) and value.strip()):
        return Mapped(unmapped=f"{base} needs its criterion as a string `value`")
    prompt = _JUDGED[base].format(value=value)
    bar = threshold if isinstance(threshold, int | float) else 0.5
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


def _reference(base: str, value: JSON, threshold: JSON) -> Mapped:
    if not isinstance(value, str):
        return Mapped(unmapped=f"{base} needs the reference text as `value`")
    if base == "rouge-n":
        bar = threshold if isinstance(threshold, int | float) else 0.75
        return Mapped({"type": "rouge", "variant": "rouge1", "value": value, "min_score": bar})
    if base == "similar":
        bar = threshold if isinstance(threshold, int | float) else 0.75
        note = "similar (embedding cosine) is approximated by `similarity` (edit-distance ratio)"
        grader: dict[str, JSON] = {"type": "similarity", "value": value, "min_score": bar}
        return Mapped(grader, approximated=[note])
    distance = threshold if isinstance(threshold, int | float) else 5
    bar = round(max(0.0, 1.0 - distance / max(len(value), 1)), 4)
    note = (
        f"levenshtein distance ≤ {distance} is approximated by normalised similarity ≥ "
        f"{bar} against the {len(value)}-character reference"
    )
    grader = {"type": "similarity", "method": "levenshtein", "value": value, "min_score": bar}
    return Mapped(grader, approximated=[note])


def _assert_set(spec: dict[str, JSON], threshold: JSON) -> Mapped:
    members = spec.get("assert")
    if not isinstance(members, list) or not members:
        return Mapped(unmapped="assert-set needs an `assert` list")
    graders: list[JSON] = []
    approximated: list[str] = []
    for member in members:
        inner = map_assertion(member, {})
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
