"""promptfoo `assert` entries as assay graders (see docs/migrating-from-promptfoo.md).

A promptfoo test passes when every assertion passes, each against its own `threshold`; the
converted suite folds graders with the `threshold` aggregator at 1.0 and gives each grader its
promptfoo threshold as `min_score`, so the verdicts agree. Assertions with no assay equivalent
are reported (with what to do), never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from assay.graders.moderation import CATEGORIES as MODERATION_CATEGORIES
from assay.interop._vars import substitute_vars
from assay.interop.promptfoo._formats import (
    is_json,
    split_values,
    sql,
    tool_calls,
    value_list,
    word_count,
    xml,
)
from assay.interop.promptfoo._mapped import Mapped
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
_TRACED = (
    "promptfoo reads it from the OpenTelemetry spans the provider exports to promptfoo's own "
    "OTLP receiver during the call; assay runs no receiver and keeps no span names, so a "
    "converted check would see no trace. Have the provider return its tool calls (or `spans`) "
    "in its output and check them with `tool-trajectory` or `execution-metrics`"
)
for _kind in (
    "trajectory:tool-used",
    "trajectory:tool-args-match",
    "trajectory:tool-sequence",
    "trajectory:step-count",
    "trace-span-count",
    "trace-span-duration",
    "trace-error-spans",
):
    _ADVICE[_kind] = _TRACED
_ADVICE["conversation-relevance"] = (
    "promptfoo judges every response of the conversation (`_conversation`, else the one "
    "exchange) against a sliding window of the turns before it and scores the share judged "
    "relevant; assay has no such grader: write an llm-grader (or `rubrics`) over the transcript"
)
_ADVICE["search-rubric"] = (
    "promptfoo's judge searches the web to check the rubric against current facts; assay's "
    "judges do not search, so an llm-grader would judge from the model's memory: write one "
    "with the facts in the criterion, or a code-grader that looks them up"
)
_DEFAULT_ADVICE = "assay has no equivalent grader; write a code-grader or an llm-grader for it"
_NOT_RENDERED = ("transform", "assert")
"""Keys promptfoo does not render with the test's vars (the set's members render on their own)."""


def judge_of(provider: JSON) -> dict[str, JSON] | None:
    """A grading `provider` (`openai:gpt-4o`, `{id: ...}`) as an assay judge spec."""
    ident = provider.get("id") if isinstance(provider, dict) else provider
    if not isinstance(ident, str):
        return None
    parts = ident.split(":")
    if parts[0] not in ("openai", "anthropic") or len(parts) < 2:
        return None
    return {"provider": parts[0], "model": parts[-1]}


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
    code_files: dict[str, str] = field(default_factory=dict)
    """Inline code written beside the suite (`--code-file`): relative path → text."""


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
    where.code_files.update(command.files)
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
        values = value_list(value)
        if isinstance(values, str) or not values:
            return Mapped(unmapped=f"{base} {values or 'needs at least one value'}")
        grader: dict[str, JSON] = {"type": kind, "value": list(values)}
        if not sensitive:
            grader["case_sensitive"] = False
        return Mapped(grader)
    if base in ("is-json", "contains-json"):
        return is_json(base, value, where.base)
    if base in ("is-xml", "contains-xml"):
        return xml(base, value)
    if base in ("is-sql", "contains-sql"):
        return sql(base, value)
    if base in _JUDGED:
        return _judged(base, value, threshold, spec)
    if base.startswith("similar"):
        return _similar(base, value, threshold, negate)
    if base in ("rouge-n", "bleu", "levenshtein"):
        return _reference(base, value, threshold, negate)
    if base == "moderation":
        return _moderation(value, spec.get("provider"))
    if base == "word-count":
        return word_count(value)
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
        where.code_files.update(command.files)
        grader: dict[str, JSON] = {"type": "code-grader", "command": list(command.argv)}
        if command.memory_mb is None:
            grader["memory_mb"] = None
        return Mapped(grader)
    if base in _TOOL_CALLS:
        return tool_calls(where.tools)
    if base in ("latency", "cost"):
        if not isinstance(threshold, int | float):
            return Mapped(unmapped=f"{base} needs a numeric `threshold`")
        option = "max_ms" if base == "latency" else "max_usd"
        return Mapped({"type": base, option: threshold})
    if base == "assert-set":
        return _assert_set(spec, threshold, variables, where)
    if base == "finish-reason":
        value = spec.get("value")
        if not isinstance(value, str) or not value:
            return Mapped(unmapped="finish-reason needs the expected reason as a string `value`")
        return Mapped({"type": "finish-reason", "value": value})
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


def _judged(base: str, value: JSON, threshold: JSON, spec: dict[str, JSON]) -> Mapped:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        value = "\n".join(f"- {v}" for v in value)
    if base != "answer-relevance" and not (isinstance(value, str) and value.strip()):
        return Mapped(
            unmapped=f"{base} needs its criterion as a string `value` (a rubric given only "
            "through `rubricPrompt`, a grading conversation whose judge answers `{pass, score, "
            "reason}`, has no assay form: write it as an llm-grader `prompt` that shows "
            "`{{ output }}`)"
        )
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
    return Mapped({"type": "rouge", "variant": "rouge1", "value": value, "min_score": bar})


def _similar(base: str, value: JSON, threshold: JSON, negate: bool) -> Mapped:
    """promptfoo's `similar`: the cosine of the output's and the reference's embeddings
    (OpenAI's text-embedding-3-large by default) against the threshold (0.75)."""
    if not isinstance(value, str):
        return Mapped(unmapped=f"{base} needs the reference text as `value`")
    bar = _bar(threshold, _CONTINUOUS_BAR["similar"], negate)
    grader: dict[str, JSON] = {
        "type": "semantic-similarity",
        "value": value,
        "model": "text-embedding-3-large",
        "min_score": bar,
    }
    metric = base.partition(":")[2]
    if metric in ("dot", "euclidean"):
        note = f"similar:{metric} is measured as the cosine of the embeddings"
        return Mapped(grader, approximated=[note])
    return Mapped(grader)


def _moderation(value: JSON, provider: JSON) -> Mapped:
    """promptfoo's `moderation`: OpenAI's moderation endpoint, failing on the categories in
    `value` (default: every category). Another classifier (`provider`, e.g. Llama Guard) is
    approximated by OpenAI's on every category, and left out when `value` names its own."""
    ident = provider.get("id") if isinstance(provider, dict) else provider
    if isinstance(ident, str) and not ident.startswith("openai:"):
        if value is not None:
            return Mapped(
                unmapped=f"moderation by `{ident}` on its own categories ({value}) has no "
                "equivalent: assay's `moderation` grader asks OpenAI's moderation endpoint, "
                "whose categories differ; name OpenAI's categories, or write a code-grader "
                "that calls that classifier"
            )
        return Mapped(
            {"type": "moderation"},
            approximated=[
                f"moderation by `{ident}` is checked by OpenAI's moderation endpoint on every "
                "category: another classifier, which may flag other outputs"
            ],
        )
    if value is None:
        return Mapped({"type": "moderation"})
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names) or not names:
        return Mapped(unmapped="moderation's `value` is a list of category names")
    unknown = [n for n in names if n not in MODERATION_CATEGORIES]
    if unknown:
        return Mapped(unmapped=f"unknown moderation categories: {', '.join(unknown)}")
    return Mapped({"type": "moderation", "categories": list(names)})


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
