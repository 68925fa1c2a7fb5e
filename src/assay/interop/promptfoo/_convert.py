"""Convert a promptfoo config (`promptfooconfig.yaml`) into an assay suite (`assay import`).

promptfoo evaluates prompts × providers × tests. An assay run has one target, so each provider
becomes a named target of the suite (the first is the default; `assay run --target NAME`
picks another), and each prompt × test becomes a case whose `input` is the prompt rendered
with the test's `vars`, read the way promptfoo reads them (assay.interop.promptfoo._inputs,
_cases). Assertions map to graders (_asserts), providers to targets (_providers). Everything
left out or approximated is one located warning with what to do, and counted. The conversion
is pure data: the caller writes the file. See docs/migrating-from-promptfoo.md.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from assay.config._yaml import parse_yaml
from assay.errors import ConfigError, ConfigIssue
from assay.interop.promptfoo._cases import (
    ANSWERED,
    SCORING,
    Defaults,
    build_cases,
    output_transform,
    scenario_tests,
)
from assay.interop.promptfoo._filters import custom_filters
from assay.interop.promptfoo._providers import DEFAULT_GRADER, judge_spec
from assay.interop.promptfoo._reader import Reader, slug
from assay.interop.promptfoo._scripts import wrapper_files
from assay.results import JSON

__all__ = ["ANSWERED", "Conversion", "convert_promptfoo"]

_IGNORED_TOP = {
    "outputPath": "pass --json or `assay report` to write results",
    "sharing": "assay keeps runs in its own store",
    "evaluateOptions": "pass run settings to `assay run` (e.g. --concurrency)",
    "env": "export the variables before `assay run`",
    "derivedMetrics": "assay reports its own run metrics",
    "extensions": "assay has no extension hooks",
    "tracing": "assay reads traces a target returns (OpenTelemetry spans); no OTLP receiver",
    "writeLatestResults": "assay keeps every run in its store",
    "commandLineOptions": "pass the options to `assay run`",
    "outputs": "pass --json or `assay report` to write results",
}
_KNOWN_TOP = {
    "nunjucksFilters",
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
    "metadata",
    *_IGNORED_TOP,
}
_DOLLAR = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}")


@dataclass
class Conversion:
    """The converted suite (a mapping, keys in writing order) and what the reader should know:
    one warning per item left out or approximated, and how many of each."""

    suite: dict[str, JSON]
    warnings: list[ConfigIssue] = field(default_factory=list)
    left_out: int = 0
    approximated: int = 0
    files: dict[str, str] = field(default_factory=dict)
    """Helper files the suite's commands run (the promptfoo script wrappers), to write beside
    it: path relative to the suite → text."""


def _refuse_code_config(path: Path, name: str) -> None:
    """A JavaScript or TypeScript config is a program, not data: say so (not "invalid YAML")."""
    if path.suffix.lower() in (".js", ".cjs", ".mjs", ".ts", ".cts", ".mts"):
        kind = "TypeScript" if "ts" in path.suffix.lower() else "JavaScript"
        message = (
            f"this is a {kind} promptfoo config: assay reads YAML and JSON configs, not "
            "programs. Write the object it exports to a JSON file (e.g. `node -e "
            f"\"import('./{path.name}').then(m => console.log(JSON.stringify(m.default, null, "
            '2)))" > promptfooconfig.json`, with `npx tsx` for TypeScript) and import that file'
        )
        raise ConfigError([ConfigIssue(name, None, "", message)])


def _read(path: Path, name: str) -> tuple[str, dict[str, JSON], Reader]:
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
    return text, data, Reader(path, source, None)


def convert_promptfoo(
    path: Path, *, display: str | None = None, output_dir: Path | None = None
) -> Conversion:
    """Convert the promptfoo config at `path` into an assay suite.

    `output_dir` is where the suite will be written: paths in targets (a provider's file, a
    command's working directory) are made relative to it.

    Raises:
        ConfigError: the file is missing, not YAML/JSON (a JavaScript config gets its own
            message), not a promptfoo config assay can read, none of its assertions has an
            assay equivalent, or none of its cases can be converted.
    """
    name = display or str(path)
    text, data, reader = _read(path, name)
    reader.out = output_dir
    suite: dict[str, JSON] = {
        "name": slug(str(data.get("description") or ""), "")
        or slug(path.name.split(".")[0], "promptfoo")
    }
    if isinstance(data.get("description"), str):
        suite["description"] = data["description"]
    reader.default_provider = _provider_context(data.get("providers", data.get("targets")))
    prompts = reader.prompts(data.get("prompts"))
    reader.declared_tools(data.get("providers", data.get("targets")))
    _targets(reader, data, suite)
    default = data.get("defaultTest")
    if isinstance(default, str) and default.startswith("file://"):
        loaded = reader.load_data(default.removeprefix("file://"), ("defaultTest",))
        default = loaded[0] if loaded else None
    defaults = _defaults(reader, default if isinstance(default, dict) else {}, data)
    # a promptfoo test passes only when every assertion passes
    suite["execution"] = {"aggregator": {"type": "threshold", "threshold": 1.0}}
    if defaults.graders:
        suite["assertions"] = defaults.graders
    tests = reader.tests(data.get("tests")) + scenario_tests(data.get("scenarios"))
    given = data.get("tests") or data.get("scenarios")
    filters = custom_filters(reader, data.get("nunjucksFilters"))
    suite["tests"] = build_cases(reader, tests if given else None, prompts, defaults, filters)
    suite = _judge(reader, suite, defaults.test)
    _top_level_notes(reader, data)
    _literal_dollars(reader, text, name)
    _refuse_empty(reader, suite)
    warnings = [issue for _, issue in reader.notes.values()]
    left_out = sum(1 for kind, _ in reader.notes.values() if kind == "left out")
    files = {**wrapper_files(), **reader.code_files} if reader.scripts else {}
    return Conversion(suite, warnings, left_out, len(warnings) - left_out, files)


def _provider_context(providers: JSON) -> dict[str, JSON]:
    """The first provider as promptfoo shows it to prompt functions: `{id, label}`."""
    first = providers[0] if isinstance(providers, list) and providers else providers
    if isinstance(first, str):
        return {"id": first}
    if isinstance(first, dict) and isinstance(first.get("id"), str):
        label = first.get("label")
        return {"id": first["id"], **({"label": label} if isinstance(label, str) else {})}
    return {}


def _targets(reader: Reader, data: dict[str, JSON], suite: dict[str, JSON]) -> None:
    key = "providers" if "providers" in data or "targets" not in data else "targets"
    if "providers" in data and "targets" in data:
        reader.note(
            ("targets",),
            "both `providers` and `targets` are given; promptfoo uses `providers`, and so "
            "does the converted suite",
        )
    targets = reader.providers(data.get(key), key)
    if targets:
        suite["target"] = next(iter(targets))
        suite["targets"] = targets
        return
    named = "no provider could be converted" if data.get(key) else "the config names no provider"
    reader.note(
        (key,),
        f"{named}, so the suite has no target: add one (`target:` in the suite, or "
        "`assay run --target NAME` with targets in assay.yaml)",
    )


def _defaults(reader: Reader, default: dict[str, JSON], data: dict[str, JSON]) -> Defaults:
    """defaultTest: assertions that use vars are rendered per case, the others once."""
    given = default.get("assert")
    asserts = given if isinstance(given, list) else []
    templated = [a for a in asserts if "{{" in json.dumps(a)]
    fixed = [a for a in asserts if "{{" not in json.dumps(a)]
    if "assertScoringFunction" in default:
        reader.note(("defaultTest", "assertScoringFunction"), SCORING)
    templates = data.get("assertionTemplates")
    graders = reader.graders(
        fixed,
        default.get("vars"),
        ("defaultTest", "assert"),
        templates,
        transform=output_transform(default),
    )
    return Defaults(default, graders, templated, templates)


def _judge(reader: Reader, suite: dict[str, JSON], default: dict[str, JSON]) -> dict[str, JSON]:
    """The suite with its judge: defaultTest.options.provider, else promptfoo's default
    grader when a grader needs one (`judge` goes before `execution`)."""
    options = default.get("options")
    judge: dict[str, JSON] | None = None
    if isinstance(options, dict) and "provider" in options:
        judge, why = judge_spec(options["provider"])
        if why:
            reader.note(("defaultTest", "options", "provider"), f"{why}; set the suite's `judge`")
    if not _needs_judge(suite):
        return suite
    if judge is None:
        judge = dict(DEFAULT_GRADER)
        reader.approx(
            (),
            "no grading provider is set; the judge is promptfoo's default grader, "
            f"{DEFAULT_GRADER['provider']} {DEFAULT_GRADER['model']} (set `judge` to change it)",
        )
    out: dict[str, JSON] = {}
    for key, value in suite.items():
        if key == "execution":
            out["judge"] = judge
        out[key] = value
    return out


def _needs_judge(suite: dict[str, JSON]) -> bool:
    """Whether a grader of the suite asks the default judge (as `assay validate` decides)."""
    from pydantic import TypeAdapter, ValidationError

    from assay.graders import Composite, Grader, GraderSpec

    adapter: TypeAdapter[object] = TypeAdapter(GraderSpec)
    seen: set[str] = set()

    def asks(grader: object) -> bool:
        if isinstance(grader, Composite):
            return any(asks(member) for member in grader.assertions)
        return isinstance(grader, Grader) and grader.wants_default_judge

    def listed(value: JSON) -> list[JSON]:
        return value if isinstance(value, list) else []

    specs = listed(suite.get("assertions"))
    for test in listed(suite.get("tests")):
        if isinstance(test, dict):
            specs = specs + listed(test.get("assertions"))
    for spec in specs:
        key = json.dumps(spec, sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        try:
            if asks(adapter.validate_python(spec)):
                return True
        except ValidationError:
            continue
    return False


def _top_level_notes(reader: Reader, data: dict[str, JSON]) -> None:
    for key, advice in _IGNORED_TOP.items():
        if key in data:
            reader.note((key,), f"`{key}` is not converted: {advice}")
    for key in data:
        if key not in _KNOWN_TOP:
            reader.note(
                (key,),
                f"`{key}` is not a promptfoo key the converter knows; check its spelling, or "
                "carry it over by hand",
            )
    if "redteam" in data and not data.get("tests"):
        reader.note(
            ("redteam",),
            "red-team tests are generated by `promptfoo redteam generate`; import the file "
            "it writes (redteam.yaml) to get them",
        )


def _refuse_empty(reader: Reader, suite: dict[str, JSON]) -> None:
    """No empty suite, and none that checks nothing promptfoo checks."""
    source = reader.source
    reasons = [w for kind, w in reader.notes.values() if kind == "left out"]
    if reader.errors:  # the items left out say why (e.g. why no prompt could be converted)
        raise ConfigError([*reader.errors, *reasons])
    if reader.asserts_seen and not reader.asserts_mapped:
        kinds = ", ".join(f"{k} ×{n}" for k, n in sorted(reader.unmapped_kinds.items()))
        raise ConfigError(
            [
                source.issue(
                    (),
                    f"none of the {reader.asserts_seen} assertions has an assay equivalent "
                    f"({kinds}); the suite would check nothing promptfoo checks. Rewrite them "
                    "as assay graders (see docs/migrating-from-promptfoo.md)",
                )
            ]
        )
    if not suite["tests"]:
        message = (
            "no case could be converted, so there is no suite to write; the items below say "
            "what was left out and what to do"
        )
        raise ConfigError([source.issue(("tests",), message), *reasons])


def _literal_dollars(reader: Reader, text: str, name: str) -> None:
    """promptfoo keeps `${X}` as written; an assay suite reads it as an environment variable
    (except in inline code the suite keeps in a file beside it, `Reader.code_files`)."""
    for number, line in enumerate(text.splitlines(), start=1):
        found = _DOLLAR.findall(line)
        moved = any(
            line.strip() in code or code.strip() in line for code in reader.code_files.values()
        )
        if found and not moved and not line.lstrip().startswith("#"):
            message = (
                f"approximated: {', '.join(dict.fromkeys(found))} is text to promptfoo, but an "
                "assay suite reads `${NAME}` as an environment variable when it loads (an "
                "unset one is an error); set the variable, or reword the text in the suite"
            )
            reader.add("approximated", ConfigIssue(name, number, "", message))
