"""Reading a promptfoo config's parts (prompts, providers, tests, assertions) and reporting,
one located warning per item, what could not be carried over.

`Reader` holds the config's source map (test files graft their own, so a warning about a CSV
row names the CSV file and line), the errors that stop the conversion and the notes that do
not: each note is one item left out or approximated, with what to do.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from assay.config._yaml import Located, LocPath, SourceMap, parse_yaml
from assay.errors import ConfigError, ConfigIssue
from assay.interop.promptfoo._asserts import Mapped, Where, map_assertion, with_transform
from assay.interop.promptfoo._inputs import Unsupported, csv_test, read_csv
from assay.interop.promptfoo._prompt_programs import call_js
from assay.interop.promptfoo._providers import MappedProvider, map_provider
from assay.interop.promptfoo._pycode import call_python
from assay.results import JSON

__all__ = ["Prompt", "Reader", "TestRef", "slug"]

TestRef = tuple[LocPath, dict[str, JSON]]
"""A test and where it was written."""

_ASSERTION_TYPES = frozenset(
    [
        "answer-relevance",
        "bleu",
        "classifier",
        "contains",
        "contains-all",
        "contains-any",
        "contains-html",
        "contains-json",
        "contains-sql",
        "contains-xml",
        "context-faithfulness",
        "context-recall",
        "context-relevance",
        "conversation-relevance",
        "cost",
        "equals",
        "factuality",
        "finish-reason",
        "g-eval",
        "gleu",
        "guardrails",
        "icontains",
        "icontains-all",
        "icontains-any",
        "is-html",
        "is-json",
        "is-refusal",
        "is-sql",
        "is-valid-function-call",
        "is-valid-openai-function-call",
        "is-valid-openai-tools-call",
        "is-xml",
        "javascript",
        "latency",
        "levenshtein",
        "llm-rubric",
        "meteor",
        "model-graded-closedqa",
        "model-graded-factuality",
        "moderation",
        "perplexity",
        "perplexity-score",
        "pi",
        "python",
        "regex",
        "rouge-n",
        "ruby",
        "similar",
        "starts-with",
        "webhook",
        "word-count",
        "select-best",
        "max-score",
    ]
)
_CODE_REF = re.compile(r"\.(py|js|cjs|mjs|ts)(:[\w.]+)?$")
_DATA_FILE = (".yaml", ".yml", ".json")
_PROVIDER_KEYS = {
    "transform": "apply it in the target (a python or command target)",
    "delay": "set `--concurrency` to pace calls",
    "prompts": "every prompt runs on every target; remove the cases of the prompts this "
    "provider should not see",
    "env": "export the variables before `assay run`",
}


def slug(text: str, default: str) -> str:
    """`text` as a lower-case id (`a-z0-9-`), or `default` when nothing is left."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or default


@dataclass
class Prompt:
    """One prompt: its label (part of case ids) and its raw template text, or the Python
    prompt function (`file.py:function`) that builds it for each case."""

    label: str
    raw: str
    function: str | None = None


def _known_assertion(kind: str) -> bool:
    return kind.removeprefix("not-") in _ASSERTION_TYPES


def _prompt_parts(name: str, content: str, stem: str) -> list[tuple[str, str]]:
    """The prompts one prompt file holds, as (label, raw text), by its extension.

    Raises:
        ValueError: a YAML prompt file that is not valid YAML.
    """
    suffix = Path(name).suffix.lower()
    if suffix in (".yaml", ".yml"):
        import yaml

        try:
            return [(stem, json.dumps(yaml.safe_load(content), ensure_ascii=False))]
        except yaml.YAMLError as exc:
            raise ValueError(f"'{name}' is not valid YAML: {exc}") from None
    if suffix == ".jsonl":
        lines = [ln for ln in content.splitlines() if ln.strip()]
        return [(f"{stem}-{n + 1}", ln) for n, ln in enumerate(lines)]
    if suffix == ".csv":
        parts = []
        for n, (_, row) in enumerate(read_csv(content)):
            body = row.get("prompt", next(iter(row.values()), "")) or ""
            parts.append((slug(row.get("label") or "", f"{stem}-{n + 1}"), body))
        return parts
    if suffix in (".json", ".md", ".j2", ".jinja", ".jinja2"):
        return [(stem, content)]
    pieces = [p.strip() for p in re.split(r"\n-{3,}\n", content) if p.strip()]
    return [(f"{stem}-{n + 1}" if len(pieces) > 1 else stem, p) for n, p in enumerate(pieces)]


class Reader:
    """Reads one promptfoo config's parts, collecting errors and notes."""

    def __init__(self, path: Path, source: SourceMap, out: Path | None) -> None:
        self.base = path.parent
        self.out = out
        self.source = source
        self.errors: list[ConfigIssue] = []
        self.notes: dict[tuple[str, int | None, str, str], tuple[str, ConfigIssue]] = {}
        self.asserts_seen = 0
        self.asserts_mapped = 0
        self.unmapped_kinds: dict[str, int] = {}
        self.tools: JSON = None
        """The default provider's declared tools, for is-valid-openai-tools-call."""
        self.scripts: list[str] = []
        """Script assertions and transforms mapped: the suite needs the wrappers beside it."""
        self.code_files: dict[str, str] = {}
        """Inline assertion code written beside the suite, for the wrappers to read."""
        self.default_provider: dict[str, JSON] = {}
        """The first provider's `{id, label}`: what prompt functions see as `provider`."""

    # -- reporting -------------------------------------------------------------------------

    def error(self, path: LocPath, message: str) -> None:
        """A problem that stops the conversion (exit 2)."""
        self.errors.append(self.source.issue(path, message))

    def note(self, path: LocPath, message: str, *, kind: str = "left out") -> None:
        """One warning for one item left out (or approximated), located, deduplicated (a
        test whose vars expand repeats its assertions)."""
        self.add(kind, self.source.issue(path, f"{kind}: {message}"))

    def approx(self, path: LocPath, message: str) -> None:
        """One warning for one item carried over approximately."""
        self.note(path, message, kind="approximated")

    def add(self, kind: str, issue: ConfigIssue) -> None:
        """Record a located note once."""
        self.notes.setdefault((issue.file, issue.line, issue.path, issue.message), (kind, issue))

    # -- files -----------------------------------------------------------------------------

    def read(self, ref: str, path: LocPath) -> str | None:
        """A file's text (relative to the config), or None after an error."""
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
        """A YAML or JSON file, read as written (no `${VAR}` expansion)."""
        text = self.read(name, path)
        if text is None:
            return None
        try:  # bounded like a suite file: the referenced file is just as untrusted
            return parse_yaml(text, name, interpolate=False)
        except ConfigError as exc:
            self.error(path, f"'{name}' is not valid YAML or JSON: {exc}")
            return None

    # -- prompts ---------------------------------------------------------------------------

    def prompts(self, raw: JSON) -> list[Prompt]:
        """The prompts; promptfoo's default `{{prompt}}` when the config gives none."""
        if raw is None:
            return [Prompt("prompt", "{{prompt}}")]
        items: list[tuple[LocPath, JSON]]
        if isinstance(raw, dict) and not ({"raw", "id"} & set(raw)):
            # the old mapping form: {file://path: label}
            items = [(("prompts", k), {"id": k, "label": v}) for k, v in raw.items()]
        elif isinstance(raw, list):
            items = [(("prompts", i), item) for i, item in enumerate(raw)]
        else:
            items = [(("prompts",), raw)]
        out: list[Prompt] = []
        for i, (path, item) in enumerate(items):
            label = f"p{i + 1}"
            given = item.get("label") if isinstance(item, dict) else None
            text = item.get("raw", item.get("id")) if isinstance(item, dict) else item
            if not isinstance(text, str):
                self.error(path, "a prompt must be text, a file:// path or {raw, label}")
                continue
            if isinstance(given, str) and given:
                label = slug(given, label)
            elif isinstance(item, dict) and isinstance(item.get("id"), str):
                label = slug(Path(item["id"]).stem, label)
            out += self._prompt(text, label, path, bool(given))
        if not out and not self.errors:
            self.error(("prompts",), "no prompt could be converted (see the warnings)")
        return out

    def _prompt(self, text: str, label: str, path: LocPath, labelled: bool) -> list[Prompt]:
        stripped = text.strip()
        if stripped.startswith("exec:"):
            self.approx(
                path,
                f"executable prompt `{stripped[:60]}` is run once per case, now, with "
                "promptfoo's context (vars, and the first provider), and what it prints written "
                "into the case (promptfoo runs it on every eval, per provider); import again "
                "to refresh it",
            )
            return [Prompt(label, "", stripped)]
        if stripped.startswith(("langfuse://", "portkey://", "helicone://")):
            self.note(
                path,
                f"prompt '{stripped[:60]}' is produced by a program or service at run time; "
                "render it to a text file and give its file:// path",
            )
            return []
        if not text.startswith("file://"):
            return [Prompt(label, text)]
        ref = text.removeprefix("file://")
        code = _CODE_REF.search(ref)
        if code and code.group(1) != "ts":
            runs = "" if code.group(1) == "py" else " (by Node.js)"
            self.approx(
                path,
                f"prompt function '{ref}' is called{runs} once per case, now, with promptfoo's "
                "context (vars, and the first provider), and what it returns written into the "
                "case (promptfoo calls it on every eval, per provider); import again to "
                "refresh it",
            )
            stem = ref[: code.start()] + (code.group(2) or "").replace(":", "-")
            name = label if labelled else slug(stem, label)
            return [Prompt(name, "", ref)]
        if code:
            self.note(
                path,
                f"prompt function '{ref}': a TypeScript function needs promptfoo's TypeScript "
                "loader; compile it to JavaScript (it then converts), or render the prompt it "
                "builds to a text (or JSON chat) file and give its file:// path",
            )
            return []
        out: list[Prompt] = []
        names = self.files(text, path)
        for name in names:
            content = self.read(name, path)
            if content is None:
                continue
            stem = label if labelled and len(names) == 1 else slug(Path(name).stem, label)
            try:
                out += [Prompt(n, body) for n, body in _prompt_parts(name, content, stem)]
            except ValueError as exc:
                self.error(path, str(exc))
        return out

    # -- providers -------------------------------------------------------------------------

    def providers(self, raw: JSON, key: str) -> dict[str, JSON]:
        """Named targets for the providers (`key` is `providers` or `targets`)."""
        if isinstance(raw, str) and raw.startswith("file://") and raw.endswith(_DATA_FILE):
            loaded = self.load_data(raw.removeprefix("file://"), (key,))
            raw = loaded[0] if loaded else None
        items = raw if isinstance(raw, list) else [] if raw is None else [raw]
        targets: dict[str, JSON] = {}
        for i, item in enumerate(items):
            path: LocPath = (key, i) if isinstance(raw, list) else (key,)
            if isinstance(item, dict) and "id" not in item and len(item) == 1:
                # the old mapping form: {openai:gpt-4: {config: …}}
                ((ident, rest),) = item.items()
                item = {"id": ident, **(rest if isinstance(rest, dict) else {})}  # noqa: PLW2901
            if isinstance(item, str) and item.startswith("file://") and item.endswith(_DATA_FILE):
                loaded = self.load_data(item.removeprefix("file://"), path)
                nested = loaded[0] if loaded else []
                for n, sub in enumerate(nested if isinstance(nested, list) else [nested]):
                    self._provider(sub, (*path, n), f"target-{i + 1}-{n + 1}", targets)
                continue
            self._provider(item, path, f"target-{i + 1}", targets)
        return targets

    def _provider(self, item: JSON, path: LocPath, default: str, targets: dict[str, JSON]) -> None:
        ident = item.get("id") if isinstance(item, dict) else item
        config = item.get("config") if isinstance(item, dict) else None
        if not isinstance(ident, str):
            self.error(path, "a provider must be an id (`openai:gpt-4o-mini`) or {id, config}")
            return
        mapped = map_provider(
            ident, config if isinstance(config, dict) else {}, base=self.base, out=self.out
        )
        self._provider_notes(ident, mapped, item, path)
        if mapped.target is None:
            return
        label = item.get("label") if isinstance(item, dict) else None
        name = slug(str(label or ident), default)
        while name in targets:
            name += "-2"
        targets[name] = mapped.target

    def _provider_notes(
        self, ident: str, mapped: MappedProvider, item: JSON, path: LocPath
    ) -> None:
        if mapped.target is None:
            self.note(
                path,
                f"provider '{ident}': {mapped.unmapped}; define the target yourself in the "
                "suite or assay.yaml (openai, anthropic, http, command, python)",
            )
            return
        for dropped in mapped.dropped:
            self.note((*path, "config"), f"provider '{ident}' {dropped}")
        for approximated in mapped.approximated:
            self.approx(path, f"provider '{ident}': {approximated}")
        for key in item if isinstance(item, dict) else {}:
            if key in _PROVIDER_KEYS:
                self.note(
                    (*path, key),
                    f"provider '{ident}' `{key}`: not converted; {_PROVIDER_KEYS[key]}",
                )

    # -- tests -----------------------------------------------------------------------------

    def tests(self, raw: JSON) -> list[TestRef]:
        """The tests, inline or from files (globs, YAML, JSON, JSONL, CSV)."""
        if raw is None:
            return []
        single = isinstance(raw, str | dict)
        items = [raw] if single else raw
        if not isinstance(items, list):
            self.error(("tests",), "`tests` must be a list of tests or file:// paths")
            return []
        out: list[TestRef] = []
        for i, item in enumerate(items):
            path: LocPath = ("tests",) if single else ("tests", i)
            if isinstance(item, dict) and "path" in item and not {"vars", "assert"} & set(item):
                config = item.get("config")
                out += self._generated(str(item["path"]), path, [config] if config else [])
            elif isinstance(item, dict):
                out.append((path, item))
            elif isinstance(item, str):
                for name in self.files(item, path):
                    out += self._test_file(name, path)
            else:
                self.error(path, "a test must be a mapping or a file:// path")
        return out

    def _test_file(self, ref: str, path: LocPath) -> list[TestRef]:
        name = ref.removeprefix("file://")
        suffix = Path(name).suffix.lower()
        if name.startswith(("huggingface://", "https://", "http://")) or "docs.google" in name:
            self.note(
                path,
                f"tests from '{name}' are fetched at run time; download them to a "
                "CSV, JSONL or YAML file and give its path",
            )
        elif _CODE_REF.search(name):
            return self._generated(name, path, [])
        elif suffix in (".xlsx", ".xls"):
            self.note(path, f"'{name}' is a spreadsheet; save it as CSV and give that path")
        elif suffix in (".csv", ".tsv"):
            return self._csv_tests(name, path)
        elif suffix == ".jsonl":
            return self._jsonl_tests(name, path)
        else:
            return self._yaml_tests(name, path)
        return []

    def _generated(self, ref: str, path: LocPath, args: list[JSON]) -> list[TestRef]:
        """Tests a Python or JavaScript generator returns, called once now (JavaScript by
        Node.js; TypeScript is a note)."""
        name = ref.removeprefix("file://")
        code = _CODE_REF.search(name)
        if code is None or code.group(1) == "ts":
            self.note(
                path,
                f"tests generated by TypeScript ('{name}'); compile it to JavaScript (it then "
                "converts), or run it once and write its tests to a YAML, JSONL or CSV file",
            )
            return []
        try:
            if code.group(1) == "py":
                tests = call_python(self.base, name, args, "generate_tests")
            else:
                tests = call_js(self.base, name, args)
        except Unsupported as exc:
            self.note(path, f"tests generated by '{name}' are left out: {exc}")
            return []
        if not isinstance(tests, list) or not all(isinstance(t, dict) for t in tests):
            self.note(path, f"'{name}' did not return a list of tests; they are left out")
            return []
        self.approx(
            path,
            f"the tests '{name}' generates were generated once, now, and written into the "
            "suite (promptfoo calls it on every eval); import again to refresh them",
        )
        return [((*path, n), t) for n, t in enumerate(tests) if isinstance(t, dict)]

    def _csv_tests(self, name: str, path: LocPath) -> list[TestRef]:
        text = self.read(name, path)
        if text is None:
            return []
        if name.lower().endswith(".tsv"):
            text = text.replace("\t", ",")
        out: list[TestRef] = []
        for n, (line, row) in enumerate(read_csv(text)):
            test, unread = csv_test(row, _known_assertion)
            where: LocPath = (*path, n)
            self.source.entries[where] = Located(name, line)
            for column in unread:
                self.note(
                    where,
                    f"CSV column {column} is not converted; put its value in the case by hand",
                )
            out.append((where, test))
        return out

    def _jsonl_tests(self, name: str, path: LocPath) -> list[TestRef]:
        text = self.read(name, path)
        out: list[TestRef] = []
        for n, line in enumerate((text or "").splitlines()):
            if not line.strip():
                continue
            where: LocPath = (*path, n)
            self.source.entries[where] = Located(name, n + 1)
            try:
                test = json.loads(line)
            except json.JSONDecodeError as exc:
                self.error(where, f"line {n + 1} of '{name}' is not JSON: {exc}")
                continue
            if isinstance(test, dict):
                out.append((where, test))
        return out

    def _yaml_tests(self, name: str, path: LocPath) -> list[TestRef]:
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

    def where(self) -> Where:
        """What assertions may refer to: the config's directory, the suite's, the tools."""
        return Where(
            base=self.base,
            out=self.out,
            tools=self.tools,
            scripts=self.scripts,
            code_files=self.code_files,
        )

    def graders(
        self,
        asserts: JSON,
        variables: JSON,
        path: LocPath,
        templates: JSON,
        transform: JSON = None,
    ) -> list[JSON]:
        """The assertions as graders; each one left out or approximated is a note. A test's
        output `transform` wraps each (promptfoo runs it once on the output, before every
        assertion)."""
        values = variables if isinstance(variables, dict) else {}
        where = self.where()
        out: list[JSON] = []
        for i, given in enumerate(asserts if isinstance(asserts, list) else []):
            spec = _template(given, templates)
            mapped: Mapped = map_assertion(spec, values, where)
            kind = spec.get("type") if isinstance(spec, dict) else None
            at: LocPath = (*path, i)
            self.asserts_seen += 1
            grader = mapped.grader
            if grader is not None and transform is not None:
                wrapped = with_transform(grader, transform, where)
                if isinstance(wrapped, str):
                    mapped = Mapped(unmapped=f"the test's `transform` cannot run: {wrapped}")
                grader = None if isinstance(wrapped, str) else wrapped
            if grader is None:
                self.note(at, f"assertion `{kind}`: {mapped.unmapped}")
                self.unmapped_kinds[str(kind)] = self.unmapped_kinds.get(str(kind), 0) + 1
            else:
                self.asserts_mapped += 1
                out.append(grader)
            for note in mapped.approximated:
                self.approx(at, note)
        return out

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


def _template(spec: JSON, templates: JSON) -> JSON:
    """An assertion given as `$ref: '#/assertionTemplates/name'`, resolved."""
    if isinstance(spec, dict) and isinstance(spec.get("$ref"), str) and isinstance(templates, dict):
        found = templates.get(str(spec["$ref"]).removeprefix("#/assertionTemplates/"))
        if isinstance(found, dict):
            return {**found, **{k: v for k, v in spec.items() if k != "$ref"}}
    return spec
