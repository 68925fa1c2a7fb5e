"""Convert a promptfoo config (`promptfooconfig.yaml`) into an assay suite (`assay import`).

promptfoo evaluates prompts × providers × tests. An assay run has one target, so each provider
becomes a named target of the suite (the first is the default; `assay run --target NAME`
picks another), and each prompt × test becomes a case whose `input` is the prompt rendered
with the test's `vars`. Assertions map to graders (assay.interop.promptfoo._asserts); what has no
equivalent is listed in one warning with what to do. The conversion is pure data: the caller
writes the file. See docs/migrating-from-promptfoo.md.
"""

from __future__ import annotations

import copy
import csv
import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from assay.config._yaml import LocPath, SourceMap, format_path, load_yaml, parse_yaml
from assay.errors import ConfigError, ConfigIssue
from assay.interop.promptfoo._asserts import Mapped, Where, judge_of, map_assertion, with_transform
from assay.interop.promptfoo._scripts import wrapper_files
from assay.results import JSON

__all__ = ["Conversion", "convert_promptfoo"]

_IGNORED_TOP = {
    "outputPath": "pass --json or `assay report` to write results",
    "sharing": "assay keeps runs in its own store",
    "evaluateOptions": "pass run settings to `assay run` (e.g. --concurrency)",
    "env": "export the variables before `assay run`",
    "scenarios": "write the scenario's tests out as tests",
    "derivedMetrics": "assay reports its own run metrics",
    "redteam": "assay does not generate adversarial tests",
    "extensions": "assay has no extension hooks",
    "nunjucksFilters": "assay renders prompts with standard Jinja2 filters only",
}
_CHAT_PROVIDERS = {
    "openai": ("openai", None, None),
    "anthropic": ("anthropic", None, None),
    "ollama": ("openai", "http://localhost:11434/v1", None),
}
_CONFIG = {
    "temperature": "temperature",
    "max_tokens": "max_tokens",
    "top_p": "top_p",
    "seed": "seed",
    "stop": "stop",
    "apiBaseUrl": "base_url",
    "apiKeyEnvar": "api_key_env",
}
_SCORING = (
    "assay scores a case with its aggregator (every grader must pass, or the weighted mean "
    "reaches the test's threshold); a custom scoring function has no equivalent, so the case "
    "keeps that rule"
)


@dataclass
class Conversion:
    """The converted suite (a mapping, keys in writing order) and what the reader should know."""

    suite: dict[str, JSON]
    warnings: list[ConfigIssue] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    """Helper files the suite's commands run (the promptfoo script wrappers), to write beside
    it: path relative to the suite → text."""


def _slug(text: str, default: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or default


class _Converter:
    def __init__(self, path: Path, source: SourceMap, out: Path | None = None) -> None:
        self.base = path.parent
        self.out = self.base if out is None else out
        """The suite's directory: script paths are written relative to it."""
        self.source = source
        self.errors: list[ConfigIssue] = []
        self.warnings: list[ConfigIssue] = []
        self.unmapped: list[str] = []
        self.approximated: list[str] = []
        self.tools: JSON = None
        """The default provider's declared tools, for is-valid-openai-tools-call."""
        self.scripts: list[str] = []
        """Script assertions and transforms mapped: the suite needs the wrappers."""

    def error(self, path: LocPath, message: str) -> None:
        self.errors.append(self.source.issue(path, message))

    def where(self, path: LocPath) -> str:
        line = self.source.locate(path).line
        return f"line {line} {format_path(path)}" if line else format_path(path)

    # -- files -----------------------------------------------------------------------------

    def read(self, ref: str, path: LocPath) -> str | None:
        name = ref.removeprefix("file://")
        file = self.base / name
        try:
            return file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.error(path, f"cannot read '{name}' (looked at {file}): {exc}")
            return None

    # -- prompts ---------------------------------------------------------------------------

    def prompts(self, raw: JSON) -> list[tuple[str, JSON]]:
        """(label, template) pairs; a template is text or a list of chat messages."""
        items = raw if isinstance(raw, list) else [raw]
        out: list[tuple[str, JSON]] = []
        for i, item in enumerate(items):
            path: LocPath = ("prompts", i) if isinstance(raw, list) else ("prompts",)
            label = f"p{i + 1}"
            if isinstance(item, dict):
                label = _slug(str(item.get("label") or item.get("id") or ""), label)
            text = item.get("raw", item.get("id")) if isinstance(item, dict) else item
            if not isinstance(text, str):
                self.error(path, "a prompt must be text, a file:// path or {raw, label}")
                continue
            if not text.startswith("file://"):
                out.append((label, _chat_or_text(text)))
                continue
            suffix = Path(text).suffix
            if suffix in (".py", ".js", ".ts", ".mjs", ".cjs"):
                self.error(
                    path,
                    "prompt functions are not supported; render the prompt to a "
                    "text file and give its file:// path",
                )
                continue
            content = self.read(text, path)
            if content is None:
                continue
            parts = (
                [p.strip() for p in content.split("\n---\n")] if suffix != ".json" else [content]
            )
            for n, part in enumerate(parts):
                name = f"{_slug(Path(text).stem, label)}{f'-{n + 1}' if len(parts) > 1 else ''}"
                out.append((name, _chat_or_text(part)))
        return out

    # -- providers -------------------------------------------------------------------------

    def providers(self, raw: JSON) -> dict[str, JSON]:
        items = raw if isinstance(raw, list) else [] if raw is None else [raw]
        targets: dict[str, JSON] = {}
        for i, item in enumerate(items):
            path: LocPath = ("providers", i) if isinstance(raw, list) else ("providers",)
            ident = item.get("id") if isinstance(item, dict) else item
            label = item.get("label") if isinstance(item, dict) else None
            config = item.get("config") if isinstance(item, dict) else None
            if not isinstance(ident, str):
                self.error(path, "a provider must be an id (`openai:gpt-4o-mini`) or {id, config}")
                continue
            spec = self._target(ident, config if isinstance(config, dict) else {}, path)
            if spec is not None:
                targets[_slug(str(label or ident), f"target-{i + 1}")] = spec
        return targets

    def _target(self, ident: str, config: dict[str, JSON], path: LocPath) -> JSON:
        parts = ident.split(":")
        kind = _CHAT_PROVIDERS.get(parts[0])
        if kind is None or len(parts) < 2 or parts[1] in ("embedding", "embeddings"):
            self.unmapped.append(
                f"{self.where(path)} provider '{ident}': no assay target type; define the "
                "target yourself in assay.yaml (python, command, http, openai, …)"
            )
            return None
        target_type, base_url, _ = kind
        spec: dict[str, JSON] = {"type": target_type, "model": parts[-1]}
        if base_url is not None:
            spec.update(base_url=base_url, api_key_env=None)
        ignored = []
        for key, value in config.items():
            if key in _CONFIG:
                spec[_CONFIG[key]] = value
            else:
                ignored.append(key)
        if ignored:
            self.unmapped.append(
                f"{self.where(path)} provider '{ident}' config {', '.join(ignored)}: not "
                "carried over; set the matching target options by hand"
            )
        return spec

    # -- tests -----------------------------------------------------------------------------

    def tests(self, raw: JSON) -> list[tuple[LocPath, dict[str, JSON]]]:
        if isinstance(raw, str):
            raw = [raw]
        if not isinstance(raw, list):
            self.error(("tests",), "`tests` must be a list of tests or file:// paths")
            return []
        out: list[tuple[LocPath, dict[str, JSON]]] = []
        for i, item in enumerate(raw):
            if isinstance(item, dict):
                out.append((("tests", i), item))
            elif isinstance(item, str):
                out += [((*("tests", i), n), t) for n, t in enumerate(self._test_file(item, i))]
            else:
                self.error(("tests", i), "a test must be a mapping or a file:// path")
        return out

    def _test_file(self, ref: str, i: int) -> list[dict[str, JSON]]:
        text = self.read(ref, ("tests", i))
        if text is None:
            return []
        if ref.endswith(".csv"):
            return [_csv_test(row) for row in csv.DictReader(text.splitlines())]
        try:  # bounded like a suite file: the referenced file is just as untrusted
            loaded, _ = parse_yaml(text, ref, interpolate=False)
        except ConfigError as exc:
            self.error(("tests", i), f"'{ref}' is not valid YAML or JSON: {exc}")
            return []
        if not isinstance(loaded, list) or not all(isinstance(t, dict) for t in loaded):
            self.error(("tests", i), f"'{ref}' must hold a list of tests")
            return []
        return loaded

    def vars_of(self, test: dict[str, JSON], defaults: JSON, path: LocPath) -> list[JSON]:
        """The test's variables (defaults first); list values expand into one set per item."""
        merged: dict[str, JSON] = dict(defaults) if isinstance(defaults, dict) else {}
        own = test.get("vars")
        if isinstance(own, dict):
            merged.update(own)
        for key, value in merged.items():
            if isinstance(value, str) and value.startswith("file://"):
                if Path(value).suffix in (".py", ".js", ".ts"):
                    self.error(
                        (*path, "vars", key),
                        "variables computed by code are not supported; write the value out",
                    )
                else:
                    merged[key] = self.read(value, (*path, "vars", key))
        lists = [k for k, v in merged.items() if isinstance(v, list)]
        if not lists:
            return [merged]
        combos = itertools.product(*(merged[k] for k in lists))
        return [{**merged, **dict(zip(lists, combo, strict=True))} for combo in combos]

    def graders(
        self, asserts: JSON, variables: JSON, path: LocPath, transform: JSON = None
    ) -> list[JSON]:
        """The mapped graders; a test's output `transform` wraps each (promptfoo runs it once
        on the output, before every assertion)."""
        values = variables if isinstance(variables, dict) else {}
        where = Where(base=self.base, out=self.out, tools=self.tools, scripts=self.scripts)
        out: list[JSON] = []
        for i, spec in enumerate(asserts if isinstance(asserts, list) else []):
            mapped: Mapped = map_assertion(spec, values, where)
            kind = spec.get("type") if isinstance(spec, dict) else None
            at = self.where((*path, i))
            grader = mapped.grader
            if grader is not None and transform is not None:
                wrapped = with_transform(grader, transform, where)
                if isinstance(wrapped, str):
                    mapped = Mapped(unmapped=f"the test's `transform` cannot run: {wrapped}")
                grader = None if isinstance(wrapped, str) else wrapped
            if grader is None:
                self.unmapped.append(f"{at} `{kind}`: {mapped.unmapped}")
            else:
                out.append(grader)
            self.approximated += [f"{at}: {note}" for note in mapped.approximated]
        return out

    def test_options(
        self, test: dict[str, JSON], default: dict[str, JSON], path: LocPath, has_defaults: bool
    ) -> JSON:
        """The test's output transform (its own, else defaultTest's); reports the options and
        the scoring function that are not carried over."""
        options = test.get("options")
        options = options if isinstance(options, dict) else {}
        left_out = [key for key in options if key not in ("transform", "postprocess")]
        if left_out:
            self.unmapped.append(
                f"{self.where((*path, 'options'))}: test options "
                f"({', '.join(left_out)}) are not converted"
            )
        own = _option(test, "transform")
        transform = own if own is not None else _option(default, "transform")
        if has_defaults and transform != _option(default, "transform"):
            self.approximated.append(
                f"{self.where((*path, 'options', 'transform'))}: the defaultTest assertions "
                "grade this test's output through defaultTest's transform, not this one"
            )
        if "assertScoringFunction" in test:
            self.unmapped.append(f"{self.where((*path, 'assertScoringFunction'))}: {_SCORING}")
        return transform

    def declared_tools(self, providers: JSON) -> None:
        """Keep the first provider's `tools` (or `functions`), read from file:// if need be."""
        first = providers[0] if isinstance(providers, list) and providers else providers
        config = first.get("config") if isinstance(first, dict) else None
        if not isinstance(config, dict):
            return
        key = "tools" if "tools" in config else "functions"
        tools = config.get(key)
        if isinstance(tools, str) and tools.startswith("file://"):
            text = self.read(tools, ("providers", 0, "config", key))
            try:
                tools = parse_yaml(text, tools, interpolate=False)[0] if text else None
            except ConfigError:
                tools = None
        if isinstance(tools, list) and all(isinstance(t, dict) for t in tools):
            self.tools = tools


def _chat_or_text(text: str) -> JSON:
    """A prompt that is a JSON list of {role, content} messages is a chat prompt."""
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            parsed = json.loads(stripped)
        except json.JSONDecodeError:
            return text
        if isinstance(parsed, list) and all(
            isinstance(m, dict) and {"role", "content"} <= set(m) for m in parsed
        ):
            return parsed
    return text


def _csv_test(row: dict[str, str]) -> dict[str, JSON]:
    """promptfoo's CSV tests: columns are vars; `__expected…` hold `type: value` assertions."""
    test: dict[str, JSON] = {"vars": {}}
    asserts: list[JSON] = []
    for column, cell in row.items():
        if column.startswith("__expected") and cell:
            kind, sep, value = cell.partition(":")
            known = re.fullmatch(r"(not-)?[a-z][a-z-]*", kind.strip()) is not None
            if sep and known:
                asserts.append({"type": kind.strip(), "value": value.strip()})
            else:
                asserts.append({"type": "equals", "value": cell})
        elif column == "__description":
            test["description"] = cell
        elif not column.startswith("__"):
            test["vars"][column] = cell
    test["assert"] = asserts
    return test


def _option(test: dict[str, JSON], key: str) -> JSON:
    """One of a test's `options` (`transform`, or its old name `postprocess`, …), or None."""
    options = test.get("options")
    if not isinstance(options, dict):
        return None
    if key == "transform" and "transform" not in options:
        return options.get("postprocess")
    return options.get(key)


def _render(template: JSON, variables: JSON) -> JSON:
    """Render a prompt (text or messages) with Jinja2, which reads promptfoo's Nunjucks."""
    from jinja2 import StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    env = SandboxedEnvironment(undefined=StrictUndefined, keep_trailing_newline=True)
    env.filters["dump"] = lambda v: json.dumps(v, ensure_ascii=False)
    values = variables if isinstance(variables, dict) else {}
    if isinstance(template, list):
        return [
            {**m, "content": env.from_string(str(m["content"])).render(values)}
            for m in template
            if isinstance(m, dict)
        ]
    return env.from_string(str(template)).render(values)


def convert_promptfoo(
    path: Path, *, display: str | None = None, output_dir: Path | None = None
) -> Conversion:
    """Convert the promptfoo config at `path` into an assay suite to be written in
    `output_dir` (default: the config's directory), which `file://` script paths are made
    relative to.

    Raises:
        ConfigError: the file is missing, not YAML, or not a promptfoo config assay can read.
    """
    data, source = load_yaml(path, display=display)
    if not isinstance(data, dict):
        raise ConfigError([source.issue((), "a promptfoo config must be a mapping")])
    for key in ("prompts", "tests"):
        if key not in data:
            raise ConfigError([source.issue((key,), f"missing `{key}`")])
    conv = _Converter(path, source, output_dir)
    prompts = conv.prompts(data["prompts"])
    targets = conv.providers(data.get("providers"))
    conv.declared_tools(data.get("providers"))
    default = data.get("defaultTest")
    default = default if isinstance(default, dict) else {}
    suite: dict[str, JSON] = {"name": _slug(str(data.get("description") or ""), "")}
    if not suite["name"]:
        suite["name"] = _slug(path.name.split(".")[0], "promptfoo")
    if isinstance(data.get("description"), str):
        suite["description"] = data["description"]
    if targets:
        suite["target"] = next(iter(targets))
        suite["targets"] = targets
    if "assertScoringFunction" in default:
        conv.unmapped.append(f"{conv.where(('defaultTest', 'assertScoringFunction'))}: {_SCORING}")
    options = default.get("options")
    judge = judge_of(options.get("provider")) if isinstance(options, dict) else None
    if judge is not None:
        suite["judge"] = judge
    # a promptfoo test passes only when every assertion passes
    suite["execution"] = {"aggregator": {"type": "threshold", "threshold": 1.0}}
    defaults = conv.graders(
        default.get("assert"),
        default.get("vars"),
        ("defaultTest", "assert"),
        _option(default, "transform"),
    )
    if defaults:
        suite["assertions"] = defaults
    suite["tests"] = _cases(conv, data, prompts, default, bool(defaults))
    for key, advice in _IGNORED_TOP.items():
        if key in data:
            conv.warnings.append(source.issue((key,), f"`{key}` is not converted: {advice}"))
    if conv.errors:
        raise ConfigError(conv.errors)
    conv.warnings += _summaries(conv, source)
    return Conversion(suite, conv.warnings, wrapper_files() if conv.scripts else {})


def _summaries(conv: _Converter, source: SourceMap) -> list[ConfigIssue]:
    """One warning listing what was left out (with what to do), one what was approximated."""
    out: list[ConfigIssue] = []
    for items, title in (
        (conv.unmapped, "item(s) have no assay equivalent and were left out"),
        (conv.approximated, "item(s) were approximated"),
    ):
        unique = list(dict.fromkeys(items))  # vars lists repeat a test's assertions
        if unique:
            lines = "\n  - ".join(unique)
            out.append(
                ConfigIssue(source.default_file, None, "", f"{len(unique)} {title}:\n  - {lines}")
            )
    return out


def _cases(
    conv: _Converter,
    data: dict[str, JSON],
    prompts: list[tuple[str, JSON]],
    default: dict[str, JSON],
    has_defaults: bool,
) -> list[JSON]:
    cases: list[JSON] = []
    seen: set[str] = set()
    for n, (path, test) in enumerate(conv.tests(data["tests"])):
        base = _slug(str(test.get("description") or ""), f"test-{n + 1}")
        transform = conv.test_options(test, default, path, has_defaults)
        variants = conv.vars_of(test, default.get("vars"), path)
        for v, variables in enumerate(variants):
            graders = conv.graders(test.get("assert"), variables, (*path, "assert"), transform)
            if not graders and not has_defaults:
                conv.unmapped.append(
                    f"{conv.where(path)}: the test has no assertion assay can "
                    "run, so it was left out"
                )
                break
            for label, template in prompts:
                case_id = base
                if len(variants) > 1:
                    case_id += f"-v{v + 1}"
                if len(prompts) > 1:
                    case_id += f"-{label}"
                while case_id in seen:
                    case_id += "-dup"
                seen.add(case_id)
                try:
                    rendered = _render(template, variables)
                except Exception as exc:  # jinja2 errors: an undefined var, a syntax error
                    conv.error(
                        path, f"prompt '{label}' cannot be rendered with this test's vars: {exc}"
                    )
                    continue
                case: dict[str, JSON] = {"id": case_id}
                if isinstance(test.get("description"), str):
                    case["description"] = test["description"]
                case["input"] = rendered
                case["assertions"] = copy.deepcopy(graders)
                threshold = test.get("threshold")
                if isinstance(threshold, int | float):
                    case["execution"] = {
                        "aggregator": {"type": "weighted_average"},
                        "threshold": threshold,
                    }
                metadata: dict[str, JSON] = {"vars": variables, "prompt": label}
                if isinstance(test.get("metadata"), dict):
                    metadata.update(test["metadata"])
                case["metadata"] = metadata
                cases.append(case)
    return cases
