"""AgentV grader spellings, rewritten to assay's graders (see docs/migrating-from-agentv.md).

Only shapes whose meaning assay has are rewritten; an AgentV feature assay lacks is a located
error that says why and what to do, and anything unknown is left for validation to reject.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from assay._paths import could_be_path
from assay.config._yaml import LocPath, SourceMap
from assay.errors import ConfigIssue
from assay.graders import grader_types
from assay.interop.agentv._custom_types import custom_assertion, custom_command
from assay.interop.agentv._files import FILE_SCHEME, SearchRoots
from assay.results import JSON

__all__ = [
    "PREPROCESSORS_IGNORED",
    "GraderRewriter",
    "canonical_type",
    "fill_criteria",
    "rubric_items",
    "uses_criteria",
    "with_criteria",
]

_RENAMES: dict[str, dict[str, str]] = {
    "latency": {"threshold": "max_ms"},
    "cost": {"budget": "max_usd"},
    "token-usage": {"max_input": "max_prompt", "max_output": "max_completion"},
}
"""AgentV option names with the same meaning under another assay name, per grader type."""

_UNSUPPORTED_OPTIONS: dict[str, dict[str, str]] = {
    "llm-grader": {
        "config": "assay passes no extra configuration to judge prompts",
    },
}

PREPROCESSORS_IGNORED = (
    "AgentV's `preprocessors` turn the file blocks of a target's output into text for the "
    "graders and pass text through unchanged; assay targets answer text, so they never apply "
    "and are ignored"
)

_PROMPT_SUFFIXES = frozenset({".md", ".txt", ".j2", ".jinja", ".jinja2", ".prompt"})
"""Suffixes that make a one-word `prompt:` look like a file meant (AgentV reads it as text)."""

_AGENTV_VARIABLE = re.compile(
    r"\{\{\s*(criteria|metadata_json|rubrics|rubrics_json|file_changes|tool_calls)\s*\}\}"
)
"""Prompt variables AgentV has and assay's judge prompts do not (input, output,
expected_output and metadata are the same in both)."""
_NO_ASSAY_VARIABLE = {
    "rubrics": "give rubric items as a `type: rubrics` grader",
    "rubrics_json": "give rubric items as a `type: rubrics` grader",
    "file_changes": "assay does not record a workspace's changes",
    "tool_calls": "grade tool calls with a `tool-trajectory` grader",
}
_CRITERIA = re.compile(r"\{\{\s*criteria\s*\}\}")
_OUTPUT = re.compile(r"\{\{\s*output\s*\}\}")


def uses_criteria(spec: JSON) -> bool:
    """Whether an llm-grader's prompt shows AgentV's `{{ criteria }}` (the test's), or a
    composite has such a member at any depth."""
    if isinstance(spec, dict) and spec.get("type") == "composite":
        return any(uses_criteria(m) for m in _list(spec.get("assertions")))
    return (
        isinstance(spec, dict)
        and spec.get("type") == "llm-grader"
        and isinstance(spec.get("prompt"), str)
        and bool(_CRITERIA.search(str(spec["prompt"])))
    )


def fill_criteria(spec: JSON, criteria: str) -> JSON:
    """A copy of `spec` whose prompts (a composite's members' too) show the test's criteria;
    the suite-level grader it came from is left as written, for the next test."""
    if not isinstance(spec, dict):
        return spec
    if spec.get("type") == "composite":
        members = [fill_criteria(m, criteria) for m in _list(spec.get("assertions"))]
        return {**spec, "assertions": members}
    if uses_criteria(spec):
        return {**spec, "prompt": with_criteria(str(spec["prompt"]), criteria)}
    return spec


def with_criteria(prompt: str, criteria: str) -> str:
    """`prompt` with the test's criteria written in, as text (never as template code)."""
    shown = "{% raw %}" + criteria.replace("{% endraw %}", "") + "{% endraw %}" if criteria else ""
    return _CRITERIA.sub(lambda _: shown, prompt)


_PASS_THROUGH = frozenset({"code-grader"})
"""Grader types whose unknown options AgentV passes on (to the grader's program)."""

_IGNORED_OPTIONS: dict[str, dict[str, str]] = {
    "llm-grader": {
        "target": "AgentV asks that target (from .agentv/targets.yaml) to grade; assay asks the "
        "suite's judge (`judge:`, or `--judge-model`); give this grader `judge: {model: ...}` "
        "for another one",
        "max_steps": "AgentV lets an agent target grade in up to this many steps; assay asks "
        "the judge once",
        "maxSteps": "AgentV lets an agent target grade in up to this many steps; assay asks "
        "the judge once",
    },
}
"""AgentV options that choose how a grader is run, not what it checks: read, not applied,
and said with a warning."""

_CODE_GRADER_KEYS = frozenset(
    {"name", "type", "command", "cwd", "weight", "required", "min_score", "negate", "config"}
    | {"target", "preprocessors", "protocol", "judge_proxy"}
)
"""What AgentV reads of a code-grader; it hands every other key to the grader in `config`."""

_COMMON_KEYS = frozenset({"weight", "required", "min_score", "negate"})
"""The options AgentV reads on any assertion, a custom one included."""

_INSENSITIVE = {"icontains-any": "contains-any", "icontains-all": "contains-all"}


def canonical_type(kind: str) -> str:
    """`llm_judge` → `llm-judge`… then AgentV's and assay's deprecated names to canonical."""
    dashed = kind.replace("_", "-")
    return {"llm-judge": "llm-grader", "code-judge": "code-grader"}.get(dashed, dashed)


def rubric_items(
    items: JSON,
    path: LocPath,
    error: Callable[[LocPath, str], None],
    warn: Callable[[LocPath, str], None],
) -> JSON:
    """AgentV rubric criteria (strings, or items with optional `id`, `operator` and
    `score_ranges` as a `{low: outcome}` map) as assay rubric items; other shapes are left
    for validation."""
    if not isinstance(items, list):
        return items
    out: list[JSON] = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            out.append({"id": f"criterion-{i + 1}", "outcome": item})
            continue
        if not isinstance(item, dict):
            out.append(item)
            continue
        entry = {"id": f"criterion-{i + 1}", **item}
        if "outcome" not in entry and isinstance(entry["id"], str) and "score_ranges" in entry:
            # a score-range item may go without `outcome`: its bands say what is judged
            entry["outcome"] = entry["id"].replace("_", " ").replace("-", " ")
        if "operator" in entry:
            _operator(entry, (*path, i, "operator"), error, warn)
        bands = entry.get("score_ranges")
        if isinstance(bands, dict):
            entry["score_ranges"] = _bands_from_map(bands, (*path, i, "score_ranges"), error)
        out.append(entry)
    return out


_CONTRADICTION = "The answer makes no claim that contradicts this (it need not mention it): "


def _operator(
    entry: dict[str, JSON],
    path: LocPath,
    error: Callable[[LocPath, str], None],
    warn: Callable[[LocPath, str], None],
) -> None:
    """AgentV's rubric operators are guidance to the judge: `correctness` (the answer must
    support the outcome) is what a rubric item means anyway; `contradiction` (satisfied
    unless the answer contradicts it) is said in the outcome itself."""
    operator = entry.pop("operator")
    if operator == "correctness":
        return
    if operator != "contradiction":
        error(
            path,
            f"unknown rubric operator {operator!r}; AgentV's are correctness and contradiction",
        )
        return
    outcome = entry.get("outcome")
    if isinstance(outcome, str):
        entry["outcome"] = _CONTRADICTION + outcome
        warn(
            path,
            "assay's rubric judge has no operators: this item's outcome now says what "
            f'AgentV\'s contradiction guard asks ("{_CONTRADICTION}…")',
        )


def _bands_from_map(
    bands: dict[str, JSON], path: LocPath, error: Callable[[LocPath, str], None]
) -> JSON:
    """`{0: a, 3: b, 10: c}` → bands [0, 2], [3, 9], [10, 10]: each starts at its key."""
    lows: list[tuple[int, JSON]] = []
    for key, outcome in bands.items():
        try:
            lows.append((int(key), outcome))
        except ValueError:
            error((*path, key), f"score band key '{key}' is not an integer from 0 to 10")
            return bands
    lows.sort(key=lambda pair: pair[0])
    out: list[JSON] = []
    for n, (low, outcome) in enumerate(lows):
        high = lows[n + 1][0] - 1 if n + 1 < len(lows) else 10
        out.append({"score_range": [low, high], "outcome": outcome})
    return out


class GraderRewriter:
    """Rewrites one assertions list at a time; errors are collected, warnings too."""

    def __init__(self, source: SourceMap, base_dir: Path) -> None:
        self.source = source
        self.base_dir = base_dir
        self.roots = SearchRoots(base_dir)
        self.criterion_warned = False
        """Whether the file's custom-prompt difference was said (once per file)."""
        self.warnings: list[ConfigIssue] = []
        self.errors: list[ConfigIssue] = []

    def error(self, path: LocPath, message: str) -> None:
        issue = self.source.issue(path, message)
        if issue not in self.errors:  # a suite-level problem met again by every test
            self.errors.append(issue)

    def warn(self, path: LocPath, message: str) -> None:
        self.warnings.append(self.source.issue(path, message))

    def graders(self, specs: JSON, path: LocPath) -> JSON:
        """An assertions list: plain strings fold into one `rubrics` grader where the first
        string stood (AgentV reads them as rubric criteria); each mapping is rewritten."""
        if not isinstance(specs, list):
            return specs
        out: list[JSON] = []
        criteria: list[JSON] = []
        rubric: dict[str, JSON] = {"type": "rubrics", "rubrics": criteria}
        for i, spec in enumerate(specs):
            if isinstance(spec, str):
                if not spec.strip():
                    continue  # AgentV skips an empty criterion
                if not criteria:
                    out.append(rubric)
                    self.source.entries.setdefault(
                        (*path, len(out) - 1), self.source.locate((*path, i))
                    )
                criteria.append({"id": f"criterion-{len(criteria) + 1}", "outcome": spec.strip()})
            else:
                out.append(self.grader(spec, (*path, i)))
        if len(criteria) > 1:
            # AgentV weighs the grader of N plain strings N, so each string counts as much as
            # any other assertion of the list (SPEC is silent on plain strings: AgentV's rule)
            rubric["weight"] = len(criteria)
        return out

    def grader(self, spec: JSON, path: LocPath) -> JSON:
        if not isinstance(spec, dict):
            return spec
        if "include" in spec:
            self.error(
                (*path, "include"),
                "assertion templates (`include`) are not supported by assay; copy the "
                "assertions into this list",
            )
            return spec
        spec = dict(spec)
        raw = spec.get("type")
        if not isinstance(raw, str):
            return spec
        kind = spec["type"] = canonical_type(raw)
        for option, why in _UNSUPPORTED_OPTIONS.get(kind, {}).items():
            scripted = option == "config" and isinstance(spec.get("prompt"), dict)
            if option in spec and not scripted:  # a script prompt's program gets `config`
                self.error((*path, option), f"AgentV's `{option}` is not supported: {why}")
        if kind in ("llm-grader", "code-grader") and "preprocessors" in spec:
            del spec["preprocessors"]
            self.warn((*path, "preprocessors"), PREPROCESSORS_IGNORED)
        for option, why in _IGNORED_OPTIONS.get(kind, {}).items():
            if option in spec:
                self.warn((*path, option), f"`{option}` is not applied: {why}")
                del spec[option]
        for old, new in _RENAMES.get(kind, {}).items():
            if old in spec and new not in spec:
                spec[new] = spec.pop(old)
                self.source.rename((*path, old), (*path, new))
        if kind in _INSENSITIVE:
            spec["type"] = _INSENSITIVE[kind]
            spec["case_sensitive"] = False
        elif kind not in grader_types():
            return self._custom(spec, kind, path)
        handler = {
            "regex": self._regex_flags,
            "llm-grader": self._llm_grader,
            "rubrics": self._rubrics,
            "code-grader": self._code_grader,
            "tool-trajectory": self._trajectory,
            "composite": self._composite,
            "field-accuracy": self._field_accuracy,
            "transform": self._transform,
        }.get(kind)
        spec = spec if handler is None else handler(spec, path)
        self._ignored_options(spec, path)
        return spec

    def _custom(self, spec: dict[str, JSON], kind: str, path: LocPath) -> dict[str, JSON]:
        """A type no grader has is AgentV's custom assertion when a script of that name is
        found by its convention (assay.interop.agentv._custom_types); otherwise validation
        says the type is unknown."""
        script = custom_assertion(self.base_dir, kind)
        if script is None:
            return spec
        grader: dict[str, JSON] = {
            "type": "code-grader",
            "name": spec.get("name", kind),
            "command": custom_command(kind, script),
            "cwd": ".",
            "protocol": "agentv",
        }
        for key, value in spec.items():
            if key in _COMMON_KEYS:
                grader[key] = value
            elif key not in ("type", "name"):
                self.warn(
                    (*path, key),
                    f"AgentV passes no options to a custom assertion ('{kind}' runs "
                    f"{script.name}), and neither does assay",
                )
        return grader

    def _ignored_options(self, spec: JSON, path: LocPath) -> None:
        """Drop, with a warning, options a grader does not have: AgentV ignores them (a
        code-grader's go to its program as configuration, which assay.interop leaves be)."""
        if not isinstance(spec, dict) or spec.get("type") in _PASS_THROUGH:
            return
        kind = spec.get("type")
        model = grader_types().get(kind) if isinstance(kind, str) else None
        if model is None:
            return  # an unknown type: validation says so
        known = set(model.model_fields) | {
            f.alias for f in model.model_fields.values() if f.alias is not None
        }
        for key in [k for k in spec if k not in known]:
            self.warn(
                (*path, key),
                f"AgentV ignores `{key}` on a {kind} grader, and so does assay",
            )
            del spec[key]

    def _rubrics(self, spec: dict[str, JSON], path: LocPath) -> dict[str, JSON]:
        if "criteria" in spec and "rubrics" not in spec:
            spec["rubrics"] = rubric_items(
                spec.pop("criteria"), (*path, "criteria"), self.error, self.warn
            )
            self.source.rename((*path, "criteria"), (*path, "rubrics"))
        return spec

    def _regex_flags(self, spec: dict[str, JSON], path: LocPath) -> dict[str, JSON]:
        flags = spec.pop("flags", None)
        if flags == "i":
            spec["case_sensitive"] = False
        elif flags not in (None, ""):
            self.error(
                (*path, "flags"),
                f"regex flags '{flags}' are not supported; assay supports only 'i' (or write "
                "(?s) / (?m) inside the pattern)",
            )
        return spec

    def _llm_grader(self, spec: dict[str, JSON], path: LocPath) -> dict[str, JSON]:
        prompt = spec.get("prompt")
        if isinstance(prompt, str):
            spec["prompt"] = self._prompt(prompt, (*path, "prompt"))
        if isinstance(prompt, dict):
            self._script_prompt(spec, prompt, (*path, "prompt"))
        judge: dict[str, JSON] = {}
        for option in ("model", "temperature"):
            if option in spec:
                judge[option] = spec.pop(option)
        if judge:
            existing = spec.get("judge")
            spec["judge"] = {**judge, **existing} if isinstance(existing, dict) else judge
        if "rubrics" in spec:
            rubrics = rubric_items(spec.pop("rubrics"), (*path, "rubrics"), self.error, self.warn)
            if "prompt" in spec:
                self.error(
                    (*path, "rubrics"),
                    "an llm-grader with both `prompt` and `rubrics` has no assay equivalent; "
                    "split it into an llm-grader and a `type: rubrics` grader",
                )
            spec.pop("type")
            return {"type": "rubrics", "rubrics": rubrics, **spec}
        return spec

    def _script_prompt(self, spec: dict[str, JSON], prompt: dict[str, JSON], path: LocPath) -> None:
        """AgentV's `prompt: {command: [...], config}`: a program prints the judge's whole
        request at grading time (assay's `prompt_command`); the prompt's `config`, else the
        grader's, is handed to it."""
        command = prompt.get("command", prompt.get("script"))
        if not isinstance(command, list | str) or not command:
            self.error(path, "a script prompt needs `command` (the program and its script)")
            return
        del spec["prompt"]
        spec["prompt_command"] = command
        self.source.rename(path, (*path[:-1], "prompt_command"))
        config = prompt.get("config", spec.pop("config", None))
        if config is not None:
            spec["prompt_config"] = config
        unknown = sorted(set(prompt) - {"command", "script", "config"})
        for key in unknown:
            self.warn((*path, key), f"AgentV ignores `{key}` in a script prompt, and so does assay")

    def _prompt(self, prompt: str, path: LocPath) -> str:
        """AgentV 4.6+: `file://path` is a file, found on the search roots; any other text is
        the prompt itself, even when it names a file."""
        if prompt.startswith(FILE_SCHEME):
            name = prompt.removeprefix(FILE_SCHEME)
            found = self.roots.find(name)
            if found is None:
                self.error(
                    path,
                    f"prompt file '{name}' not found (looked at {self.roots.looked_at(name)})",
                )
                return prompt
            try:
                text = found.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                self.error(path, f"cannot read prompt file '{name}' ({found}): {exc}")
                return prompt
            self._whole_request(text, path)
            if not _AGENTV_VARIABLE.search(text):
                return f"{FILE_SCHEME}{found}"
            # the file's text, inline, its AgentV variables in assay's terms
            return self._variables(text if "\n" in text.strip() else f"{text}\n", path)
        self._whole_request(prompt, path)
        if _AGENTV_VARIABLE.search(prompt):
            return self._variables(prompt, path)
        text = prompt.strip()
        if not could_be_path(text) or any(c.isspace() for c in text):
            return prompt
        named = self.roots.find(text)
        if named is None and Path(text).suffix not in _PROMPT_SUFFIXES:
            return prompt
        self.warn(
            path,
            f"AgentV (since 4.6) reads a bare `prompt:` as inline text, so the judge is given "
            f"the text '{text}' itself, not a file's; assay does the same. Write "
            f"`prompt: file://{text}` to grade with the file",
        )
        # as Jinja raw text it renders as written, and assay never reads it as a path
        return "{% raw %}" + prompt + "{% endraw %}"

    def _whole_request(self, text: str, path: LocPath) -> None:
        """Once per file: AgentV sends a custom prompt as the judge's whole request, so one
        that does not show `{{ output }}` never shows the judge the answer; assay sets it in
        its judge template as the criterion (SPEC §5.1)."""
        if self.criterion_warned or _OUTPUT.search(text):
            return
        self.criterion_warned = True
        self.warn(
            path,
            "AgentV sends an llm-grader's own prompt as the judge's whole request, so a prompt "
            "without `{{ output }}` never shows the judge the answer; assay judges it as the "
            "criterion of its judge template, which shows the input, the answer and the "
            "reference (SPEC §5.1)",
        )

    def _variables(self, text: str, path: LocPath) -> str:
        """AgentV's prompt variables as assay's: `metadata_json` is `metadata`; `criteria`
        stays, for the test's criteria to be written in (see `uses_criteria`); the others
        have no assay value and are errors."""
        for match in _AGENTV_VARIABLE.finditer(text):
            name = match.group(1)
            if name in _NO_ASSAY_VARIABLE:
                self.error(
                    path,
                    f"the prompt uses AgentV's `{{{{ {name} }}}}`, which assay's judge prompts "
                    f"do not have ({_NO_ASSAY_VARIABLE[name]})",
                )
        return _AGENTV_VARIABLE.sub(
            lambda m: "{{ metadata }}" if m.group(1) == "metadata_json" else m.group(0), text
        )

    def _code_grader(self, spec: dict[str, JSON], path: LocPath) -> dict[str, JSON]:
        if "script" in spec:
            if "command" in spec:
                self.error((*path, "script"), "give `command` or `script`, not both")
            else:
                spec["command"] = spec.pop("script")
                self.source.rename((*path, "script"), (*path, "command"))
        command = spec.get("command")
        if isinstance(command, str):
            spec["command"] = ["sh", "-lc", command]  # AgentV runs a command string in a shell
        # AgentV runs code graders in the eval file's directory, workspace or not; its
        # contract (exit-code replies, options it does not know passed on as `config`)
        spec.setdefault("cwd", ".")
        spec["protocol"] = "agentv"
        if "target" in spec:
            self._target_proxy(spec, (*path, "target"))
        extra = {k: spec.pop(k) for k in list(spec) if k not in _CODE_GRADER_KEYS}
        config = spec.get("config")
        if extra:
            spec["config"] = {**extra, **config} if isinstance(config, dict) else extra
        return spec

    def _judge_aggregator(self, aggregator: dict[str, JSON], path: LocPath) -> JSON:
        """AgentV's `{type: llm-grader, prompt}` aggregator: `file://` names a file (found on
        the search roots), any other text is the prompt itself, even a file's name."""
        out = {**aggregator, "type": "llm-grader"}
        prompt = aggregator.get("prompt")
        if not isinstance(prompt, str):
            return out
        if prompt.startswith(FILE_SCHEME):
            name = prompt.removeprefix(FILE_SCHEME)
            found = self.roots.find(name)
            if found is None:
                where = self.roots.looked_at(name)
                self.error((*path, "prompt"), f"prompt file '{name}' not found (looked at {where})")
            else:
                out["prompt"] = f"{FILE_SCHEME}{found}"
        elif could_be_path(prompt.strip()) and self.roots.find(prompt.strip()) is not None:
            self.warn(
                (*path, "prompt"),
                f"AgentV reads a bare aggregator `prompt:` as inline text, so the judge is given "
                f"the text '{prompt.strip()}' itself, not the file's; assay does the same. Write "
                f"`prompt: file://{prompt.strip()}` to aggregate with the file",
            )
        return out

    def _program_aggregator(self, aggregator: dict[str, JSON], path: LocPath) -> JSON:
        """AgentV's `{type: code-grader, path: "node agg.js"}` aggregator: the command (a
        string runs in a shell, as AgentV runs it) in the eval file's directory."""
        if canonical_type(str(aggregator["type"])) == "llm-grader":
            return self._judge_aggregator(aggregator, path)
        out = {k: v for k, v in aggregator.items() if k not in ("path", "script", "command")}
        out["type"] = "code-grader"
        command = next(
            (aggregator[k] for k in ("path", "command", "script") if k in aggregator), None
        )
        for key in ("path", "script"):
            if key in aggregator:
                self.source.rename((*path, key), (*path, "command"))
        if isinstance(command, str):
            command = ["sh", "-c", command]
        if command is not None:
            out["command"] = command
        out.setdefault("cwd", ".")
        return out

    def _target_proxy(self, spec: dict[str, JSON], path: LocPath) -> None:
        """AgentV's `target: {max_calls}` (or `true`) gives the grader's program its grader
        model through a local proxy: assay's `judge_proxy`, serving the run's judge."""
        target = spec.pop("target")
        self.source.rename(path, (*path[:-1], "judge_proxy"))
        if target is True or target == {}:
            spec["judge_proxy"] = {}
        elif isinstance(target, dict) and set(target) == {"max_calls"}:
            spec["judge_proxy"] = {"max_calls": target["max_calls"]}
        else:
            # AgentV warns and runs the grader without a proxy
            self.warn(
                path,
                "AgentV ignores a code-grader `target` that is not `true` or `{max_calls: N}`, "
                "and so does assay",
            )

    def _transform(self, spec: dict[str, JSON], path: LocPath) -> dict[str, JSON]:
        """A v5 output transform's wrapper: its grader is an AgentV one too."""
        if "assertion" in spec:
            spec["assertion"] = self.grader(spec["assertion"], (*path, "assertion"))
        return spec

    def _trajectory(self, spec: dict[str, JSON], path: LocPath) -> dict[str, JSON]:
        _snake_case(spec)
        default_match = spec.pop("args_match", None)
        if default_match is not None and not self._args_match_ok(
            default_match, (*path, "args_match")
        ):
            default_match = None
        if spec.get("mode") == "any_order":
            # AgentV's any_order ignores order and allows other calls: assay's superset
            spec["mode"] = "superset"
        minimums = spec.pop("minimums", None)
        expected = spec.get("expected")
        if isinstance(minimums, dict) and expected is not None:
            self.error((*path, "minimums"), "give `expected` or `minimums`, not both")
        elif isinstance(minimums, dict):
            # at least N calls of a tool: N expected calls, matched in any order
            spec["expected"] = [
                {"tool": tool}
                for tool, count in minimums.items()
                for _ in range(count if isinstance(count, int) else 0)
            ]
        elif isinstance(expected, list):
            spec["expected"] = [
                self._expected_call(call, (*path, "expected", i), default_match)
                for i, call in enumerate(expected)
            ]
        return spec

    def _expected_call(self, call: JSON, path: LocPath, default_match: JSON) -> JSON:
        """An expected call, its `args_match` in assay's terms. AgentV (4.42) compares `args`
        exactly unless told otherwise; its `superset` (the call may add keys) is assay's
        `subset`, and a key list compares only the listed keys (dotted paths allowed)."""
        if not isinstance(call, dict):
            return call
        call = dict(call)
        _snake_case(call)
        for key in [k for k in call if k not in _EXPECTED_CALL_KEYS]:
            self.warn(
                (*path, key),
                f"AgentV ignores `{key}` in an expected tool call, and so does assay",
            )
            del call[key]
        if call.get("args") == "any":
            call.pop("args")
            call.pop("args_match", None)
            return call
        match = call.get("args_match", default_match)
        if match is not None and not self._args_match_ok(match, (*path, "args_match")):
            return call
        args = call.get("args")
        if isinstance(match, list):
            if isinstance(args, dict):
                call["args"] = _only_paths(args, [str(m) for m in match])
            match = "superset"
        if match == "superset":
            if isinstance(args, dict) and any(isinstance(v, dict) for v in args.values()):
                self.warn(
                    (*path, "args"),
                    "AgentV compares a nested object argument exactly; assay's `subset` lets "
                    "the call add keys inside it too",
                )
            match = "subset"
        if "args" in call:
            call["args_match"] = match if match is not None else "exact"
        elif match == "ignore":
            call["args_match"] = "ignore"
        else:
            call.pop("args_match", None)
        return call

    def _args_match_ok(self, match: JSON, path: LocPath) -> bool:
        if match in ("exact", "superset", "ignore"):
            return True
        if isinstance(match, list) and match and all(isinstance(m, str) and m for m in match):
            return True
        if match == "subset":
            why = (
                "AgentV's subset (the call may leave out expected keys but add none) has no "
                "assay equivalent; use superset (the call may add keys) or exact"
            )
        else:
            why = f"args_match {match!r} is not one of AgentV's; use exact, superset, ignore "
            why += "or a list of argument names"
        self.error(path, why)
        return False

    def _field_accuracy(self, spec: dict[str, JSON], path: LocPath) -> dict[str, JSON]:
        """AgentV's dotted field paths as JSONPath, its date format tokens as strptime's; a
        field a test's expected_output lacks matches in that test, as in AgentV."""
        spec["missing_expected"] = "pass"
        for i, field in enumerate(_list(spec.get("fields"))):
            if not isinstance(field, dict):
                continue
            where = (*path, "fields", i)
            name = field.get("path")
            if isinstance(name, str) and not name.startswith("$"):
                field["path"] = _json_path(name)
            formats = field.get("formats")
            if isinstance(formats, list):
                field["formats"] = [_strptime(f) if isinstance(f, str) else f for f in formats]
            required = field.pop("required", True)
            if required is False:
                self.warn(
                    (*where, "required"),
                    "AgentV leaves an optional field the output lacks out of the score; assay "
                    "counts it as a mismatch",
                )
        return spec

    def _composite(self, spec: dict[str, JSON], path: LocPath) -> dict[str, JSON]:
        for old in ("evaluators", "assert"):
            if old in spec and "assertions" not in spec:
                spec["assertions"] = spec.pop(old)
                self.source.rename((*path, old), (*path, "assertions"))
        members = spec["assertions"] = self.graders(spec.get("assertions"), (*path, "assertions"))
        aggregator = spec.get("aggregator")
        if not isinstance(aggregator, dict):
            return spec
        kind = aggregator.get("type")
        if isinstance(kind, str) and canonical_type(kind) in ("code-grader", "llm-grader"):
            spec["aggregator"] = self._program_aggregator(aggregator, (*path, "aggregator"))
            return spec
        weights = aggregator.get("weights")
        if kind != "weighted_average":
            return spec
        given = weights if isinstance(weights, dict) else {}
        for i, member in enumerate(_list(members)):
            if (
                not isinstance(member, dict)
                or "weight" not in member
                or member.get("name") in given
            ):
                continue  # a member the aggregator names gets the aggregator's weight below
            theirs = 1.0
            if member["weight"] != theirs:
                self.warn(
                    (*path, "assertions", i, "weight"),
                    "AgentV's composite ignores a member's own `weight` (it weighs members by "
                    "the aggregator's `weights`, 1 when unnamed); assay weighs them by their own "
                    f"(SPEC §1.3), so this member counts {member['weight']} here and {theirs} "
                    "in AgentV",
                )
        if not isinstance(weights, dict):
            return spec
        # per-member weights of the aggregator are the members' own `weight` in assay
        spec["aggregator"] = {k: v for k, v in aggregator.items() if k != "weights"}
        named = {m.get("name"): m for m in _list(members) if isinstance(m, dict)}
        for name, weight in weights.items():
            member = named.get(name)
            if member is None:
                known = ", ".join(str(n) for n in named if n) or "none has a name"
                self.error(
                    (*path, "aggregator", "weights", name),
                    f"no member grader is named '{name}'; members: {known}",
                )
            else:
                member["weight"] = weight
        return spec


def _list(value: JSON) -> list[JSON]:
    return value if isinstance(value, list) else []


_EXPECTED_CALL_KEYS = frozenset({"tool", "args", "args_match", "max_duration_ms"})
"""The keys of an expected tool call that AgentV reads."""


def _only_paths(args: dict[str, JSON], paths: list[str]) -> dict[str, JSON]:
    """`args` cut down to the (dotted) `paths` it has: what an AgentV key list compares."""
    out: dict[str, JSON] = {}
    for dotted in paths:
        node: JSON = args
        parts = dotted.split(".")
        found = True
        for part in parts:
            found = isinstance(node, dict) and part in node
            if not found:
                break
            assert isinstance(node, dict)
            node = node[part]
        if not found:
            continue  # AgentV skips a listed key the expected call does not give
        place = out
        for part in parts[:-1]:
            nxt = place.setdefault(part, {})
            place = nxt if isinstance(nxt, dict) else {}
        place[parts[-1]] = node
    return out


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INDEX = re.compile(r"^(.*?)((?:\[\d+\])*)$")


def _json_path(dotted: str) -> str:
    """`supplier.name` / `items[0].sku` (AgentV's paths) as JSONPath: `$.supplier.name`."""
    out = "$"
    for part in dotted.split("."):
        match = _INDEX.match(part)
        name, indexes = (match.group(1), match.group(2)) if match else (part, "")
        if name:
            out += f".{name}" if _IDENTIFIER.fullmatch(name) else f"[{json.dumps(name)}]"
        out += indexes
    return out


_DATE_TOKENS = (
    ("YYYY", "%Y"),
    ("MMM", "%b"),
    ("MM", "%m"),
    ("DD", "%d"),
    ("HH", "%H"),
    ("mm", "%M"),
    ("ss", "%S"),
    ("Z", "%z"),
)


def _strptime(tokens: str) -> str:
    """An AgentV date format (`DD-MMM-YYYY`) as a strptime one (`%d-%b-%Y`); one already
    written with `%` is kept."""
    if "%" in tokens:
        return tokens
    out, i = "", 0
    while i < len(tokens):
        for token, directive in _DATE_TOKENS:
            if tokens.startswith(token, i):
                out += directive
                i += len(token)
                break
        else:
            out += tokens[i]
            i += 1
    return out


def _snake_case(mapping: dict[str, JSON]) -> None:
    for camel, snake in (("argsMatch", "args_match"), ("maxDurationMs", "max_duration_ms")):
        if camel in mapping and snake not in mapping:
            mapping[snake] = mapping.pop(camel)
