"""AgentV v5 `assert` entries as AgentV v4 graders, which the v4 rewriter then makes assay's.

v5 writes promptfoo-style assertions (`llm-rubric`, `script`, `trajectory:*`, `assert-set`,
`skill-used`, `metric`, `threshold`); underneath they are the v4 graders, so each is turned
into its v4 spelling and the v4 rewriter (assay.interop.agentv._graders) does the rest.
promptfoo types v4 never had go through assay.interop.promptfoo._asserts. What has no
equivalent is a located error that says why.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from assay.config._yaml import LocPath
from assay.interop._vars import substitute_vars
from assay.interop.agentv._custom_types import custom_assertion
from assay.interop.agentv._v5_transform import TransformWrapper, wrap_one
from assay.interop.promptfoo._asserts import judge_of, map_assertion
from assay.results import JSON

__all__ = ["V5Asserts"]

_V4_TYPES = frozenset(
    {
        "contains",
        "contains-any",
        "contains-all",
        "icontains",
        "icontains-any",
        "icontains-all",
        "starts-with",
        "ends-with",
        "regex",
        "equals",
        "field-accuracy",
        "latency",
        "cost",
        "token-usage",
        "execution-metrics",
        "rubrics",
        "llm-grader",
        "llm-judge",
        "code-grader",
        "code-judge",
        "composite",
        "tool-trajectory",
        "skill-trigger",
    }
)
"""Types whose v5 spelling is the v4 one: handed to the v4 rewriter as written."""

_UNSUPPORTED = {
    "trajectory:step-count": "assay does not count agent steps; use execution-metrics "
    "`max_tool_calls` or a code-grader",
    "trajectory:goal-success": "write the goal as an llm-rubric assertion",
    # promptfoo's mapping runs these through wrapper scripts that `assay import promptfoo`
    # writes beside the converted suite; a v5 file is read in place, with nowhere to put them.
    "javascript": "rewrite the check as a code-grader (a Python `function` or a `command`)",
    "python": "rewrite the check as a code-grader (a Python `function` or a `command`)",
}

_SCRIPT_KEYS = frozenset(
    {
        "type",
        "command",
        "cwd",
        "config",
        "target",
        "name",
        "weight",
        "required",
        "min_score",
        "negate",
    }
)

Report = Callable[[LocPath, str], None]


class V5Asserts:
    """Converts v5 assertion lists; `error` and `warn` report located problems."""

    def __init__(self, error: Report, warn: Report, base_dir: Path | None = None) -> None:
        self.error = error
        self.warn = warn
        self.base_dir = base_dir
        """The eval file's directory, where custom assertion types are looked up from."""

    def convert(self, specs: JSON, path: LocPath, context: dict[str, JSON]) -> JSON:
        """A v5 `assert` list (strings stay strings: v4 folds them into one rubric), with
        `{{ var }}` rendered from `context`."""
        if not isinstance(specs, list):
            return specs
        out: list[JSON] = []
        for i, spec in enumerate(specs):
            converted = self.one(substitute_vars(spec, context), (*path, i))
            if converted is not None:
                out.append(converted)
        return out

    def one(self, spec: JSON, path: LocPath) -> JSON:
        if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
            return spec
        spec = dict(spec)
        raw: str = spec["type"]
        kind = raw.replace("_", "-") if ":" not in raw else raw
        negate = kind.startswith("not-")
        base = kind.removeprefix("not-")
        if "transform" in spec:
            # the assertion grades the output its transform makes (AgentV's evaluator transform)
            transform = spec.pop("transform")
            wrapper = TransformWrapper(self.base_dir or Path(), self.error)
            command = wrapper.command(transform, (*path, "transform"))
            inner = self.one(spec, path)
            return None if command is None or inner is None else wrap_one(inner, command)
        if "metric" in spec:
            spec.setdefault("name", spec.pop("metric"))
        if base == "skill-used":
            spec["_not"], negate = negate, False
        if negate and base == "trajectory:tool-used" and isinstance(spec.get("value"), list):
            # none of the tools is used: each one negated, all must hold
            members = [
                self.one({"type": raw, "value": tool}, path) for tool in _list(spec["value"])
            ]
            grader: dict[str, JSON] = {"type": "composite", "assertions": members}
            grader["aggregator"] = {"type": "threshold", "threshold": 1.0}
            return self._common(spec, grader)
        converted = self._typed(base, spec, path)
        if converted is None:
            return None
        if negate:
            converted["negate"] = True
        return converted

    def _typed(self, base: str, spec: dict[str, JSON], path: LocPath) -> dict[str, JSON] | None:
        if base in _UNSUPPORTED:
            self.error((*path, "type"), f"`{base}` is not supported by assay: {_UNSUPPORTED[base]}")
            return None
        if base in ("llm-rubric", "agent-rubric"):
            return self._rubric(base, spec, path)
        if base == "script":
            return self._script(spec, path)
        if base.startswith("trajectory:"):
            return self._trajectory(base, spec, path)
        if base == "skill-used":
            value = spec.pop("value", None)
            spec.update(type="skill-trigger", skill=value, should_trigger=not spec.pop("_not"))
            return spec
        if base == "assert-set":
            return self._set(spec, path)
        if base == "is-json" and "value" not in spec:
            spec["type"] = "is-json"
            return spec
        if base in _V4_TYPES or (
            self.base_dir is not None and custom_assertion(self.base_dir, base) is not None
        ):
            # a custom type (AgentV's .agentv/assertions/) the v4 rewriter resolves
            spec["type"] = base
            return spec
        return self._promptfoo(base, spec, path)

    def _common(self, spec: dict[str, JSON], grader: dict[str, JSON]) -> dict[str, JSON]:
        """v5's shared keys: `name` (from `metric`), weight, required, min_score."""
        for key in ("name", "weight", "required", "min_score"):
            if key in spec:
                grader[key] = spec[key]
        threshold = spec.get("threshold")
        if isinstance(threshold, int | float) and "min_score" not in grader:
            grader["min_score"] = threshold
        return grader

    def _rubric(self, base: str, spec: dict[str, JSON], path: LocPath) -> dict[str, JSON] | None:
        if base == "agent-rubric":
            self.warn(
                (*path, "type"),
                "agent-rubric is judged by assay's llm judge in one call, without tools",
            )
        value = spec.get("value")
        prompt = spec.get("prompt")
        judge, target = self._judge(spec)
        if prompt is not None:
            if isinstance(value, list):
                self.error(
                    (*path, "value"),
                    "an llm-rubric with both a `prompt` and rubric items has no assay "
                    "equivalent; split it into two assertions",
                )
                return None
            if value is not None:
                self.warn(
                    (*path, "value"),
                    "this llm-rubric has a `prompt`; its `value` is not sent to the judge",
                )
            grader = self._common(spec, {"type": "llm-grader", "prompt": prompt})
        elif isinstance(value, str | list) and value:
            # v4's llm-grader `rubrics` (strings or items) become an assay rubrics grader
            items = value if isinstance(value, list) else [value]
            grader = self._common(spec, {"type": "llm-grader", "rubrics": items})
        else:
            self.warn(
                path,
                f"this {base} has no `value` or `prompt`, so AgentV skips it; assay does too",
            )
            return None
        if judge is not None:
            grader["judge"] = judge
        if target is not None:
            grader["target"] = target
        return grader

    @staticmethod
    def _judge(spec: dict[str, JSON]) -> tuple[dict[str, JSON] | None, JSON]:
        """A grading `provider`: a model id is an assay judge; a label is v4's grader
        `target` (a named target that judges)."""
        provider = spec.get("provider")
        if provider is None:
            return None, None
        judge = judge_of(provider)
        if judge is not None:
            return judge, None
        label = (
            provider.get("label", provider.get("id")) if isinstance(provider, dict) else provider
        )
        return None, label

    def _script(self, spec: dict[str, JSON], path: LocPath) -> dict[str, JSON]:
        if "provider" in spec:
            # v5's script `provider` (an LLM proxy for the script) is v4's `target`
            spec["target"] = spec.pop("provider")
        spec["type"] = "code-grader"
        spec.pop("threshold", None)
        # AgentV passes a script's other keys to it as `config`, as v4 did
        extra = {k: spec.pop(k) for k in list(spec) if k not in _SCRIPT_KEYS}
        if extra:
            config = spec.get("config")
            spec["config"] = {**extra, **(config if isinstance(config, dict) else {})}
        return spec

    def _trajectory(
        self, base: str, spec: dict[str, JSON], path: LocPath
    ) -> dict[str, JSON] | None:
        value = spec.get("value")
        where = (*path, "value")
        grader = self._common(spec, {"type": "tool-trajectory"})
        if base == "trajectory:tool-used":
            if isinstance(value, list) and all(isinstance(v, str) for v in value) and value:
                # every listed tool is used (negated: each is not used)
                grader.update(mode="superset", expected=[{"tool": v} for v in value])
                return grader
            name, low = _tool_and_min(value)
            if name is None:
                self.error(where, "trajectory:tool-used needs a tool name or {name, min}")
                return None
            if isinstance(value, dict) and "max" in value:
                self.error(
                    (*where, "max"),
                    "assay's tool-trajectory has no maximum call count; use execution-metrics "
                    "`max_tool_calls` or a code-grader",
                )
                return None
            grader.update(mode="superset", expected=[{"tool": name}] * max(low, 1))
            return grader
        if base == "trajectory:tool-sequence":
            mode, steps = _sequence(value)
            if steps is None:
                self.error(where, "trajectory:tool-sequence needs `steps` (tool names)")
                return None
            if mode not in ("exact", "in_order"):
                self.error((*where, "mode"), f"sequence mode {mode!r}: use exact or in_order")
                return None
            grader.update(mode=mode, expected=[{"tool": step} for step in steps])
            return grader
        if base == "trajectory:tool-args-match":
            if not isinstance(value, dict) or not isinstance(value.get("name"), str):
                self.error(where, "trajectory:tool-args-match needs {name, args}")
                return None
            mode = value.get("mode", "partial")
            if mode not in ("partial", "exact"):
                self.error((*where, "mode"), f"args mode {mode!r}: use partial or exact")
                return None
            call: dict[str, JSON] = {"tool": value["name"], "args": value.get("args", {})}
            call["args_match"] = "exact" if mode == "exact" else "superset"  # AgentV v4 terms
            grader.update(mode="superset", expected=[call])
            return grader
        self.error((*path, "type"), f"unknown trajectory assertion '{base}'")
        return None

    def _set(self, spec: dict[str, JSON], path: LocPath) -> dict[str, JSON] | None:
        members = spec.get("assert")
        if not isinstance(members, list) or not members:
            self.error(path, "assert-set needs an `assert` list")
            return None
        converted = self.convert(members, (*path, "assert"), {})
        grader = self._common(spec, {"type": "composite", "assertions": converted})
        if "min_score" not in grader:
            # promptfoo's set passes only when every member passes
            grader["aggregator"] = {"type": "threshold", "threshold": 1.0}
        return grader

    def _promptfoo(self, base: str, spec: dict[str, JSON], path: LocPath) -> dict[str, JSON] | None:
        mapped = map_assertion({**spec, "type": base}, {})
        if mapped.grader is None:
            self.error((*path, "type"), f"`{base}` is not supported by assay: {mapped.unmapped}")
            return None
        for note in mapped.approximated:
            self.warn((*path, "type"), note)
        return self._common(spec, mapped.grader)


def _list(value: JSON) -> list[JSON]:
    return list(value) if isinstance(value, list) else []


def _tool_and_min(value: JSON) -> tuple[str | None, int]:
    if isinstance(value, str):
        return value, 1
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        low = value.get("min", 1)
        return value["name"], low if isinstance(low, int) else 1
    return None, 0


def _sequence(value: JSON) -> tuple[JSON, list[str] | None]:
    mode: JSON = "in_order"
    steps: JSON = value
    if isinstance(value, dict):
        mode = value.get("mode", "in_order")
        steps = value.get("steps")
    if not isinstance(steps, list):
        return mode, None
    names = [s if isinstance(s, str) else s.get("name") for s in steps if isinstance(s, str | dict)]
    if len(names) != len(steps) or not all(isinstance(n, str) for n in names):
        return mode, None
    return mode, [str(n) for n in names]
