"""Convert a promptfoo config (`promptfooconfig.yaml`) into an assay suite (`assay import`).

promptfoo evaluates prompts × providers × tests. An assay run has one target, so each provider
becomes a named target of the suite (the first is the default; `assay run --target NAME`
picks another), and each prompt × test becomes a case whose `input` is the prompt rendered
with the test's `vars`, read the way promptfoo reads them (assay.interop.promptfoo._inputs).
Assertions map to graders (assay.interop.promptfoo._asserts), providers to targets
(assay.interop.promptfoo._providers). Everything left out or approximated is one located
warning with what to do, and counted. The conversion is pure data: the caller writes the
file. See docs/migrating-from-promptfoo.md.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.config._yaml import LocPath, Located, SourceMap, parse_yaml
from assay.errors import ConfigError, ConfigIssue
from assay.interop.promptfoo._asserts import Mapped, map_assertion
from assay.interop.promptfoo._inputs import (
    CodeReference,
    Unsupported,
    csv_test,
    expand_vars,
    load_var_file,
    make_env,
    read_csv,
    render_prompt,
    resolve_var_references,
)
from assay.interop.promptfoo._providers import DEFAULT_GRADER, judge_spec, map_provider
from assay.results import JSON

__all__ = ["ANSWERED", "Conversion", "convert_promptfoo"]

ANSWERED: dict[str, JSON] = {"type": "regex", "value": "(?s).*", "name": "answered"}
"""promptfoo passes a test without assertions when the provider answers without an error; in
assay a target error already makes the case an `error`, so this grader always passes."""

_IGNORED_TOP = {
    "outputPath": "pass --json or `assay report` to write results",
    "sharing": "assay keeps runs in its own store",
    "evaluateOptions": "pass run settings to `assay run` (e.g. --concurrency)",
    "env": "export the variables before `assay run`",
    "derivedMetrics": "assay reports its own run metrics",
    "extensions": "assay has no extension hooks",
    "nunjucksFilters": "assay renders prompts with standard Jinja2 filters only",
    "tracing": "assay reads traces a target returns (OpenTelemetry spans); no OTLP receiver",
    "writeLatestResults": "assay keeps every run in its store",
    "commandLineOptions": "pass the options to `assay run`",
    "outputs": "pass --json or `assay report` to write results",
}
_KNOWN_TOP = {
    "description",
    "prompts",
    "providers",
    "targets",
    "tests",
    "defaultTest",
    "scenarios",
    "redteam",
    "assertionTemplates",
    "$schema",
    "options",
    "metadata",
    *_IGNORED_TOP,
}
_ASSERTION_TYPES = frozenset(
    """answer-relevance bleu classifier contains contains-all contains-any contains-html
    contains-json contains-sql contains-xml context-faithfulness context-recall
    context-relevance conversation-relevance cost equals factuality finish-reason g-eval gleu
    guardrails icontains icontains-all icontains-any is-html is-json is-refusal is-sql
    is-valid-function-call is-valid-openai-function-call is-valid-openai-tools-call is-xml
    javascript latency levenshtein llm-rubric meteor model-graded-closedqa
    model-graded-factuality moderation perplexity perplexity-score pi python regex rouge-n
    ruby similar starts-with webhook word-count select-best max-score""".split()
)
_CODE_SUFFIXES = (".py", ".js", ".cjs", ".mjs", ".ts", ".cts", ".mts")
_TEST_OPTIONS = {"prefix", "suffix", "disableVarExpansion", "disableDefaultAsserts", "provider"}


@dataclass
class Conversion:
    """The converted suite (a mapping, keys in writing order) and what the reader should know:
    one warning per item left out or approximated, and how many of each."""

    suite: dict[str, JSON]
    warnings: list[ConfigIssue] = field(default_factory=list)
    left_out: int = 0
    approximated: int = 0


def _slug(text: str, default: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or default


@dataclass
class _Prompt:
    label: str
    raw: str
    path: LocPath


class _Converter:
    def __init__(self, path: Path, source: SourceMap, out: Path | None) -> None:
        self.base = path.parent
        self.out = out
        self.source = source
        self.errors: list[ConfigIssue] = []
        self.notes: dict[tuple[str, int | None, str, str], tuple[str, ConfigIssue]] = {}
        self.asserts_seen = 0
        self.asserts_mapped = 0
        self.unmapped_kinds: dict[str, int] = {}

    # -- reporting -------------------------------------------------------------------------

    def error(self, path: LocPath, message: str) -> None:
        self.errors.append(self.source.issue(path, message))

    def note(self, path: LocPath, message: str, *, kind: str = "left out") -> None:
        """One warning for one item left out (or approximated), located, deduplicated."""
        issue = self.source.issue(path, f"{kind}: {message}")
        key = (issue.file, issue.line, issue.path, issue.message)
        self.notes.setdefault(key, (kind, issue))

    def approx(self, path: LocPath, message: str) -> None:
        self.note(path, message, kind="approximated")

    # -- files -----------------------------------------------------------------------------

    def read(self, ref: str, path: LocPath) -> str | None:
        name = ref.removeprefix("file://")
        file = self.base / name
        try:
            return file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.error(path, f"cannot read '{name}' (looked at {file}): {exc}")
            return None

    def files(self, ref: str, path: LocPath) -> list[str]:
        """A `file://` reference with its glob expanded (relative names, sorted)."""
        name = ref.removeprefix("file://")
        if "://" in name or not any(c in name for c in "*?["):
            return [name]
        found = sorted(str(p.relative_to(self.base)) for p in self.base.glob(name))
        if not found:
            self.error(path, f"no file matches '{name}' (looked in {self.base})")
        return found

    def load_data(self, name: str, path: LocPath) -> tuple[JSON, SourceMap] | None:
        text = self.read(name, path)
        if text is None:
            return None
        try:  # bounded like a suite file: the referenced file is just as untrusted
            return parse_yaml(text, name, interpolate=False)
        except ConfigError as exc:
            self.error(path, f"'{name}' is not valid YAML or JSON: {exc}")
            return None

    # -- prompts ---------------------------------------------------------------------------

    def prompts(self, raw: JSON) -> list[_Prompt]:
        """The prompts, each with its label and raw template text."""
        if raw is None:
            return [_Prompt("prompt", "{{prompt}}", ())]
        if isinstance(raw, dict) and not ({"raw", "id"} & set(raw)):
            # the old mapping form: {file://path: label}
            items: list[tuple[LocPath, JSON]] = [
                (("prompts", k), {"id": k, "label": v}) for k, v in raw.items()
            ]
        elif isinstance(raw, list):
            items = [(("prompts", i), item) for i, item in enumerate(raw)]
        else:
            items = [(("prompts",), raw)]
        out: list[_Prompt] = []
        for i, (path, item) in enumerate(items):
            label = f"p{i + 1}"
            given_label = item.get("label") if isinstance(item, dict) else None
            if isinstance(given_label, str) and given_label:
                label = _slug(given_label, label)
            text = item.get("raw", item.get("id")) if isinstance(item, dict) else item
            if not isinstance(text, str):
                self.error(path, "a prompt must be text, a file:// path or {raw, label}")
                continue
            if isinstance(item, dict) and not given_label and isinstance(item.get("id"), str):
                label = _slug(Path(item["id"]).stem, label)
            out += self._prompt(text, label, path, bool(given_label))
        if not out and not self.errors:
            self.error(("prompts",), "no prompt could be converted (see the warnings)")
        return out

    def _prompt(self, text: str, label: str, path: LocPath, labelled: bool) -> list[_Prompt]:
        stripped = text.strip()
        if stripped.startswith(("exec:", "langfuse://", "portkey://", "helicone://")):
            self.note(
                path,
                f"prompt '{stripped[:60]}' is produced by a program or service at run time; "
                "render it to a text file and give its file:// path",
            )
            return []
        if not text.startswith("file://"):
            return [_Prompt(label, text, path)]
        ref = text.removeprefix("file://")
        if re.search(r"\.(py|js|cjs|mjs|ts)(:[\w.]+)?$", ref):
            self.note(
                path,
                f"prompt function '{ref}': promptfoo runs it for every test; render the prompt "
                "it builds to a text (or JSON chat) file and give its file:// path",
            )
            return []
        out: list[_Prompt] = []
        names = self.files(text, path)
        for name in names:
            suffix = Path(name).suffix.lower()
            content = self.read(name, path)
            if content is None:
                continue
            stem = label if labelled and len(names) == 1 else _slug(Path(name).stem, label)
            parts: list[tuple[str, str]]
            if suffix in (".yaml", ".yml"):
                import yaml

                try:
                    parts = [(stem, json.dumps(yaml.safe_load(content), ensure_ascii=False))]
                except yaml.YAMLError as exc:
                    self.error(path, f"'{name}' is not valid YAML: {exc}")
                    continue
            elif suffix == ".jsonl":
                lines = [ln for ln in content.splitlines() if ln.strip()]
                parts = [(f"{stem}-{n + 1}", ln) for n, ln in enumerate(lines)]
            elif suffix == ".csv":
                rows = read_csv(content)
                parts = []
                for n, (_, row) in enumerate(rows):
                    first = next(iter(row.values()), "") or ""
                    body = row.get("prompt", first) or ""
                    row_label = row.get("label") or f"{stem}-{n + 1}"
                    parts.append((_slug(row_label, f"{stem}-{n + 1}"), body))
            elif suffix in (".json", ".md", ".j2", ".jinja", ".jinja2"):
                parts = [(stem, content)]
            else:
                pieces = [p.strip() for p in re.split(r"\n-{3,}\n", content)]
                pieces = [p for p in pieces if p]
                parts = [
                    (f"{stem}-{n + 1}" if len(pieces) > 1 else stem, p)
                    for n, p in enumerate(pieces)
                ]
            out += [_Prompt(name_, body, path) for name_, body in parts]
        return out

    # -- providers -------------------------------------------------------------------------

    def providers(self, raw: JSON, key: str) -> dict[str, JSON]:
        if (
            isinstance(raw, str)
            and raw.startswith("file://")
            and raw.endswith((".yaml", ".yml", ".json"))
        ):
            loaded = self.load_data(raw.removeprefix("file://"), (key,))
            raw = loaded[0] if loaded else None
        items = raw if isinstance(raw, list) else [] if raw is None else [raw]
        targets: dict[str, JSON] = {}
        for i, item in enumerate(items):
            path: LocPath = (key, i) if isinstance(raw, list) else (key,)
            if isinstance(item, dict) and "id" not in item and len(item) == 1:
                # the old mapping form: {openai:gpt-4: {config: …}}
                ((ident, rest),) = item.items()
                item = {"id": ident, **(rest if isinstance(rest, dict) else {})}
            if (
                isinstance(item, str)
                and item.startswith("file://")
                and item.endswith((".yaml", ".yml", ".json"))
            ):
                loaded = self.load_data(item.removeprefix("file://"), path)
                if loaded is None:
                    continue
                nested = loaded[0] if isinstance(loaded[0], list) else [loaded[0]]
                for n, sub in enumerate(nested):
                    targets.update(
                        self._provider(sub, (*path, n), f"target-{i + 1}-{n + 1}", targets)
                    )
                continue
            targets.update(self._provider(item, path, f"target-{i + 1}", targets))
        return targets

    def _provider(
        self, item: JSON, path: LocPath, default: str, taken: dict[str, JSON]
    ) -> dict[str, JSON]:
        ident = item.get("id") if isinstance(item, dict) else item
        label = item.get("label") if isinstance(item, dict) else None
        config = item.get("config") if isinstance(item, dict) else None
        if not isinstance(ident, str):
            self.error(path, "a provider must be an id (`openai:gpt-4o-mini`) or {id, config}")
            return {}
        mapped = map_provider(
            ident, config if isinstance(config, dict) else {}, base=self.base, out=self.out
        )
        if mapped.target is None:
            self.note(
                path,
                f"provider '{ident}': {mapped.unmapped}; define the target yourself in the "
                "suite or assay.yaml (openai, anthropic, http, command, python)",
            )
            return {}
        for dropped in mapped.dropped:
            self.note((*path, "config"), f"provider '{ident}' {dropped}")
        for approximated in mapped.approximated:
            self.approx(path, f"provider '{ident}': {approximated}")
        if isinstance(item, dict):
            for key in item:
                if key in ("transform", "delay", "prompts", "env"):
                    self.note(
                        (*path, key),
                        f"provider '{ident}' `{key}`: not converted; "
                        + {
                            "transform": "apply it in the target (a python or command target)",
                            "delay": "set `--concurrency` to pace calls",
                            "prompts": "every prompt runs on every target; remove the cases "
                            "of the prompts this provider should not see",
                            "env": "export the variables before `assay run`",
                        }[key],
                    )
        name = _slug(str(label or ident), default)
        while name in taken:
            name += "-2"
        return {name: mapped.target}

    # -- tests -----------------------------------------------------------------------------

    def tests(self, raw: JSON) -> list[tuple[LocPath, dict[str, JSON]]]:
        if raw is None:
            return []
        if isinstance(raw, str | dict):
            raw = [raw]
        if not isinstance(raw, list):
            self.error(("tests",), "`tests` must be a list of tests or file:// paths")
            return []
        out: list[tuple[LocPath, dict[str, JSON]]] = []
        for i, item in enumerate(raw):
            path: LocPath = ("tests", i)
            if isinstance(item, dict) and (
                "path" in item and "vars" not in item and "assert" not in item
            ):
                self.note(
                    path,
                    "a test generator with `config` runs code; run it once and write "
                    "its tests to a YAML, JSONL or CSV file",
                )
            elif isinstance(item, dict):
                out.append((path, item))
            elif isinstance(item, str):
                for name in self.files(item, path):
                    out += self._test_file(name, path)
            else:
                self.error(path, "a test must be a mapping or a file:// path")
        return out

    def _test_file(self, ref: str, path: LocPath) -> list[tuple[LocPath, dict[str, JSON]]]:
        name = ref.removeprefix("file://")
        if name.startswith(("huggingface://", "https://", "http://")) or "docs.google.com" in name:
            self.note(
                path,
                f"tests from '{name}' are fetched at run time; download them to a "
                "CSV, JSONL or YAML file and give its path",
            )
            return []
        if re.search(r"\.(py|js|cjs|mjs|ts)(:[\w.]+)?$", name):
            self.note(
                path,
                f"tests generated by code ('{name}'); run it once and write its "
                "tests to a YAML, JSONL or CSV file",
            )
            return []
        suffix = Path(name).suffix.lower()
        if suffix in (".xlsx", ".xls"):
            self.note(path, f"'{name}' is a spreadsheet; save it as CSV and give that path")
            return []
        out: list[tuple[LocPath, dict[str, JSON]]] = []
        if suffix in (".csv", ".tsv"):
            text = self.read(name, path)
            if text is None:
                return []
            if suffix == ".tsv":
                text = text.replace("\t", ",")
            for n, (line, row) in enumerate(read_csv(text)):
                test, unread = csv_test(row, lambda k: k.removeprefix("not-") in _ASSERTION_TYPES)
                where: LocPath = (*path, n)
                self.source.entries[where] = Located(name, line)
                for column in unread:
                    self.note(where, f"CSV column {column} is not converted")
                out.append((where, test))
            return out
        if suffix == ".jsonl":
            text = self.read(name, path)
            if text is None:
                return []
            for n, line in enumerate(text.splitlines()):
                if not line.strip():
                    continue
                where = (*path, n)
                self.source.entries[where] = Located(name, n + 1)
                try:
                    test = json.loads(line)
                except json.JSONDecodeError as exc:
                    self.error(where, f"line {n + 1} of '{name}' is not JSON: {exc}")
                    continue
                if isinstance(test, dict):
                    out.append((where, test))
            return out
        loaded = self.load_data(name, path)
        if loaded is None:
            return []
        data, source = loaded
        if isinstance(data, dict):
            data = [data]
        if not isinstance(data, list) or not all(isinstance(t, dict) for t in data):
            self.error(path, f"'{name}' must hold a list of tests")
            return []
        self.source.graft(path, source)
        return [((*path, n), t) for n, t in enumerate(data) if isinstance(t, dict)]

    # -- graders ---------------------------------------------------------------------------

    def graders(self, asserts: JSON, variables: JSON, path: LocPath, templates: JSON) -> list[JSON]:
        values = variables if isinstance(variables, dict) else {}
        out: list[JSON] = []
        for i, spec in enumerate(asserts if isinstance(asserts, list) else []):
            spec = _template(spec, templates)
            mapped: Mapped = map_assertion(spec, values)
            kind = spec.get("type") if isinstance(spec, dict) else None
            where: LocPath = (*path, i)
            self.asserts_seen += 1
            if mapped.grader is None:
                self.note(where, f"assertion `{kind}`: {mapped.unmapped}")
                self.unmapped_kinds[str(kind)] = self.unmapped_kinds.get(str(kind), 0) + 1
            else:
                self.asserts_mapped += 1
                out.append(mapped.grader)
            for note in mapped.approximated:
                self.approx(where, note)
        return out


def _template(spec: JSON, templates: JSON) -> JSON:
    """An assertion given as `$ref: '#/assertionTemplates/name'`, resolved."""
    if isinstance(spec, dict) and isinstance(spec.get("$ref"), str) and isinstance(templates, dict):
        name = spec["$ref"].removeprefix("#/assertionTemplates/")
        found = templates.get(name)
        if isinstance(found, dict):
            return {**found, **{k: v for k, v in spec.items() if k != "$ref"}}
    return spec


def _refuse_code_config(path: Path, name: str) -> None:
    """A JavaScript or TypeScript config is a program, not data: say so (not "invalid YAML")."""
    if path.suffix.lower() in (".js", ".cjs", ".mjs", ".ts", ".cts", ".mts"):
        kind = "TypeScript" if "ts" in path.suffix.lower() else "JavaScript"
        raise ConfigError(
            [
                ConfigIssue(
                    name,
                    None,
                    "",
                    f"this is a {kind} promptfoo config: assay reads YAML and JSON configs, "
                    "not programs. Write the object it exports to a JSON file (e.g. `node -e "
                    f"\"import('./{path.name}').then(m => console.log(JSON.stringify(m.default, "
                    'null, 2)))" > promptfooconfig.json`, with `npx tsx` for TypeScript) and '
                    "import that file",
                )
            ]
        )


def convert_promptfoo(
    path: Path, *, display: str | None = None, output_dir: Path | None = None
) -> Conversion:
    """Convert the promptfoo config at `path` into an assay suite.

    `output_dir` is where the suite will be written: paths in targets (a provider's file, a
    command's working directory) are made relative to it.

    Raises:
        ConfigError: the file is missing, not YAML/JSON (a JavaScript config gets its own
            message), not a promptfoo config assay can read, or none of its assertions has an
            assay equivalent.
    """
    name = display or str(path)
    _refuse_code_config(path, name)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError([ConfigIssue(name, None, "", "file not found")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([ConfigIssue(name, None, "", f"cannot read file: {exc}")]) from None
    # promptfoo does not expand ${VAR} in its config: read it as written
    data, source = parse_yaml(text, name, interpolate=False)
    if not isinstance(data, dict):
        raise ConfigError([source.issue((), "a promptfoo config must be a mapping")])
    conv = _Converter(path, source, output_dir)
    _literal_dollars(conv, text, name)
    prompts = conv.prompts(data.get("prompts"))
    provider_key = "providers" if "providers" in data or "targets" not in data else "targets"
    if "providers" in data and "targets" in data:
        conv.note(
            ("targets",),
            "both `providers` and `targets` are given; promptfoo uses "
            "`providers`, and so does the converted suite",
        )
    targets = conv.providers(data.get(provider_key), provider_key)
    default = data.get("defaultTest")
    if isinstance(default, str) and default.startswith("file://"):
        loaded = conv.load_data(default.removeprefix("file://"), ("defaultTest",))
        default = loaded[0] if loaded else None
    default = default if isinstance(default, dict) else {}
    suite: dict[str, JSON] = {"name": _slug(str(data.get("description") or ""), "")}
    if not suite["name"]:
        suite["name"] = _slug(path.name.split(".")[0], "promptfoo")
    if isinstance(data.get("description"), str):
        suite["description"] = data["description"]
    if targets:
        suite["target"] = next(iter(targets))
        suite["targets"] = targets
    else:
        conv.note(
            (provider_key,),
            ("no provider could be converted" if data.get(provider_key) else "the config names no provider")
            + ", so the suite has no "
            "target: add one (`target:` in the suite, or `assay run --target NAME` with "
            "targets in assay.yaml)",
        )
    options = default.get("options")
    options = options if isinstance(options, dict) else {}
    judge: dict[str, JSON] | None = None
    if "provider" in options:
        judge, why = judge_spec(options["provider"])
        if why:
            conv.note(("defaultTest", "options", "provider"), f"{why}; set the suite's `judge`")
    # a promptfoo test passes only when every assertion passes
    suite["execution"] = {"aggregator": {"type": "threshold", "threshold": 1.0}}
    templates = data.get("assertionTemplates")
    # defaultTest assertions that use vars are rendered per case, the others once for the suite
    default_asserts = default.get("assert") if isinstance(default.get("assert"), list) else []
    templated = [a for a in default_asserts if "{{" in json.dumps(a)]  # type: ignore[union-attr]
    fixed = [a for a in default_asserts if a not in templated]  # type: ignore[union-attr]
    defaults = conv.graders(fixed, default.get("vars"), ("defaultTest", "assert"), templates)
    if defaults:
        suite["assertions"] = defaults
    suite["tests"] = _cases(conv, data, prompts, default, defaults, templates, templated)
    if _needs_judge(suite):
        suite_judge = judge if judge is not None else dict(DEFAULT_GRADER)
        if judge is None:
            conv.approx(
                (),
                f"no grading provider is set; the judge is promptfoo's default "
                f"grader, {DEFAULT_GRADER['provider']} {DEFAULT_GRADER['model']} "
                "(set `judge` to change it)",
            )
        suite = _with_judge(suite, suite_judge)
    for key, advice in _IGNORED_TOP.items():
        if key in data:
            conv.note((key,), f"`{key}` is not converted: {advice}")
    for key in data:
        if key not in _KNOWN_TOP:
            conv.note((key,), f"`{key}` is not a promptfoo key the converter knows; not converted")
    if "redteam" in data and not data.get("tests"):
        conv.note(
            ("redteam",),
            "red-team tests are generated by `promptfoo redteam generate`; "
            "import the file it writes (redteam.yaml) to get them",
        )
    if conv.asserts_seen and not conv.asserts_mapped:
        kinds = ", ".join(f"{k} ×{n}" for k, n in sorted(conv.unmapped_kinds.items()))
        raise ConfigError(
            [
                source.issue(
                    (),
                    f"none of the {conv.asserts_seen} assertions has an "
                    f"assay equivalent ({kinds}); the suite would check nothing promptfoo "
                    "checks. Rewrite them as assay graders (see "
                    "docs/migrating-from-promptfoo.md)",
                )
            ]
        )
    if conv.errors:
        raise ConfigError(conv.errors)
    warnings = [issue for _, issue in conv.notes.values()]
    if not suite["tests"]:
        reasons = [w for kind, w in conv.notes.values() if kind == "left out"]
        raise ConfigError(
            [
                source.issue(
                    ("tests",),
                    "no case could be converted, so there is no suite to write; the items "
                    "below say what was left out and what to do",
                ),
                *reasons,
            ]
        )
    left_out = sum(1 for kind, _ in conv.notes.values() if kind == "left out")
    return Conversion(suite, warnings, left_out, len(warnings) - left_out)


_DOLLAR = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}")


def _literal_dollars(conv: _Converter, text: str, name: str) -> None:
    """promptfoo keeps `${X}` as written; an assay suite reads it as an environment variable."""
    for number, line in enumerate(text.splitlines(), start=1):
        found = _DOLLAR.findall(line)
        if found and not line.lstrip().startswith("#"):
            issue = ConfigIssue(
                name,
                number,
                "",
                f"approximated: {', '.join(dict.fromkeys(found))} is text to promptfoo, but an "
                "assay suite reads `${NAME}` as an environment variable when it loads (an "
                "unset one is an error); set the variable, or reword the text in the suite",
            )
            conv.notes.setdefault((name, number, "", issue.message), ("approximated", issue))


def _needs_judge(suite: dict[str, JSON]) -> bool:
    text = json.dumps(suite)
    return '"type": "llm-grader"' in text or '"type": "factuality"' in text


def _with_judge(suite: dict[str, JSON], judge: dict[str, JSON]) -> dict[str, JSON]:
    out: dict[str, JSON] = {}
    for key, value in suite.items():
        if key == "execution":
            out["judge"] = judge
        out[key] = value
    return out


def _test_options(
    conv: _Converter, path: LocPath, default: dict[str, JSON], test: dict[str, JSON]
) -> dict[str, JSON]:
    """The test's options over defaultTest's; those the converter cannot carry are reported."""
    merged: dict[str, Any] = {}
    for where, options in (
        (("defaultTest", "options"), default.get("options")),
        ((*path, "options"), test.get("options")),
    ):
        if not isinstance(options, dict):
            continue
        merged.update(options)
        for key in options:
            if key not in _TEST_OPTIONS:
                conv.note(
                    (*where, key),
                    f"test option `{key}` is not converted; "
                    + _OPTION_ADVICE.get(key, "see docs/migrating-from-promptfoo.md"),
                )
    return merged


_OPTION_ADVICE = {
    "transform": "grade the raw output, or transform it in the target",
    "transformVars": "write the transformed vars into the tests",
    "storeOutputAs": "assay cases do not feed each other; use a multi-turn test (`turns`)",
    "runSerially": "pass `--concurrency 1` to `assay run`",
    "rubricPrompt": "write the judge's instructions into the llm-grader's `prompt`",
}


def _cases(
    conv: _Converter,
    data: dict[str, JSON],
    prompts: list[_Prompt],
    default: dict[str, JSON],
    defaults: list[JSON],
    templates: JSON,
    templated: list[JSON],
) -> list[JSON]:
    tests = conv.tests(data.get("tests"))
    tests += _scenario_tests(conv, data.get("scenarios"))
    if not tests and not conv.errors:
        # promptfoo runs each prompt once when there are no tests
        tests = [(("tests",), {})]
    cases: list[JSON] = []
    seen: set[str] = set()
    missing: set[str] = set()
    env = make_env(missing)
    for n, (path, test) in enumerate(tests):
        base = _slug(str(test.get("description") or ""), f"test-{n + 1}")
        options = _test_options(conv, path, default, test)
        skip_defaults = options.get("disableDefaultAsserts") is True
        own_vars = test.get("vars")
        if isinstance(own_vars, str) and own_vars.startswith("file://"):
            loaded = conv.load_data(own_vars.removeprefix("file://"), (*path, "vars"))
            own_vars = loaded[0] if loaded else {}
        merged: dict[str, JSON] = (
            dict(default["vars"]) if isinstance(default.get("vars"), dict) else {}
        )
        if isinstance(own_vars, dict):
            merged.update(own_vars)
        variants = (
            [merged] if options.get("disableVarExpansion") else expand_vars(merged, conv.base)
        )
        if isinstance(test.get("provider"), str | dict):
            conv.note(
                (*path, "provider"),
                "a test's own provider is not converted; every case runs on the suite's target",
            )
        if isinstance(test.get("providers"), list):
            conv.note(
                (*path, "providers"),
                "the test runs on every target in assay; run the "
                "suite with `--target NAME` for the providers it names",
            )
        judge = None
        if "provider" in (test.get("options") or {}):
            judge, why = judge_spec(test["options"]["provider"])  # type: ignore[index]
            if why:
                conv.note((*path, "options", "provider"), why)
        allowed = test.get("prompts")
        chosen = [
            p for p in prompts if not isinstance(allowed, list) or _prompt_allowed(p, allowed)
        ]
        for v, raw_vars in enumerate(variants):
            try:
                variables = _load_vars(conv, raw_vars, path)
            except CodeReference as exc:
                conv.note((*path, "vars"), f"the test is left out: {exc}")
                break
            except Unsupported as exc:
                conv.note((*path, "vars"), f"the test is left out: {exc}")
                break
            graders = conv.graders(test.get("assert"), variables, (*path, "assert"), templates)
            if templated and not skip_defaults:
                graders = (
                    conv.graders(templated, variables, ("defaultTest", "assert"), templates)
                    + graders
                )
            had_asserts = bool(test.get("assert")) or bool(templated and not skip_defaults)
            if judge is not None:
                graders = [_judged(g, judge) for g in graders]
            if not graders and (skip_defaults or not defaults):
                if had_asserts:
                    conv.note(
                        path,
                        "none of the test's assertions converted; the case only "
                        "checks that the target answers",
                    )
                graders = [dict(ANSWERED)]
            prefix = str(options.get("prefix") or "")
            suffix = str(options.get("suffix") or "")
            for prompt in chosen:
                case_id = base
                if len(variants) > 1:
                    case_id += f"-v{v + 1}"
                if len(chosen) > 1:
                    case_id += f"-{prompt.label}"
                while case_id in seen:
                    case_id += "-dup"
                missing.clear()
                try:
                    rendered = render_prompt(env, prefix + prompt.raw + suffix, variables)
                except Unsupported as exc:
                    conv.note(path, f"case '{case_id}' is left out: {exc}")
                    continue
                except Exception as exc:  # jinja2 errors: a syntax error, an unknown filter
                    conv.note(
                        path,
                        f"case '{case_id}' is left out: prompt '{prompt.label}' "
                        f"cannot be rendered ({type(exc).__name__}: {exc}); rewrite the "
                        "template in Jinja2 syntax",
                    )
                    continue
                if missing:
                    conv.approx(
                        path,
                        f"prompt '{prompt.label}' uses {', '.join(sorted(missing))}, "
                        "which the test does not set; promptfoo renders it empty, and "
                        "so does the case",
                    )
                seen.add(case_id)
                case: dict[str, JSON] = {"id": case_id}
                if isinstance(test.get("description"), str) and test["description"]:
                    case["description"] = test["description"]
                case["input"] = rendered
                case["assertions"] = copy.deepcopy(graders)
                execution: dict[str, JSON] = {}
                threshold = test.get("threshold", default.get("threshold"))
                if isinstance(threshold, int | float):
                    execution.update(aggregator={"type": "weighted_average"}, threshold=threshold)
                if skip_defaults and defaults:
                    execution["skip_defaults"] = True
                if execution:
                    case["execution"] = execution
                metadata: dict[str, JSON] = {"vars": _shown(variables), "prompt": prompt.label}
                for extra in (default.get("metadata"), test.get("metadata")):
                    if isinstance(extra, dict):
                        metadata.update(extra)
                case["metadata"] = metadata
                cases.append(case)
    return cases


def _shown(variables: dict[str, JSON]) -> dict[str, JSON]:
    """Vars kept in metadata; a base64 image is replaced by its size (it is in the input)."""
    return {
        k: (f"<{len(v)} base64 characters>" if isinstance(v, str) and len(v) > 20000 else v)
        for k, v in variables.items()
    }


def _judged(grader: JSON, judge: dict[str, JSON]) -> JSON:
    if isinstance(grader, dict) and grader.get("type") == "llm-grader" and "judge" not in grader:
        return {**grader, "judge": judge}
    return grader


def _prompt_allowed(prompt: _Prompt, allowed: list[JSON]) -> bool:
    for label in allowed:
        if not isinstance(label, str):
            continue
        slug = _slug(label.removesuffix(":*"), "")
        if prompt.label == slug or prompt.label.startswith(f"{slug}-"):
            return True
    return False


def _load_vars(conv: _Converter, variables: dict[str, JSON], path: LocPath) -> dict[str, JSON]:
    out: dict[str, JSON] = {}
    for key, value in variables.items():
        if isinstance(value, str) and value.startswith("file://"):
            out[key] = load_var_file(value, conv.base)
        else:
            out[key] = value
    return resolve_var_references(out)


def _scenario_tests(conv: _Converter, raw: JSON) -> list[tuple[LocPath, dict[str, JSON]]]:
    """promptfoo's scenarios: every `config` entry × every scenario test, merged."""
    out: list[tuple[LocPath, dict[str, JSON]]] = []
    for s, scenario in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(scenario, dict):
            continue
        datas = scenario.get("config") if isinstance(scenario.get("config"), list) else [{}]
        tests = scenario.get("tests") if isinstance(scenario.get("tests"), list) else [{}]
        for item in datas:  # type: ignore[union-attr]
            for t, test in enumerate(tests):  # type: ignore[arg-type]
                if not isinstance(item, dict) or not isinstance(test, dict):
                    continue
                merged: dict[str, JSON] = {**item, **test}
                merged["vars"] = {**(item.get("vars") or {}), **(test.get("vars") or {})}  # type: ignore[dict-item]
                merged["assert"] = [*(item.get("assert") or []), *(test.get("assert") or [])]  # type: ignore[misc]
                out.append((("scenarios", s, "tests", t), merged))
    return out
