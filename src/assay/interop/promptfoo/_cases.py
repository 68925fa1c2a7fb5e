"""promptfoo tests × prompts as assay cases, the way promptfoo's evaluator builds them.

Per test: `defaultTest` is merged in (vars, options, metadata, threshold; its assertions unless
`disableDefaultAsserts`), the vars expand into combinations, `file://` vars are loaded, and each
allowed prompt is rendered (with `prefix`/`suffix`). A test without assertions keeps promptfoo's
meaning: it passes when the provider answers (`ANSWERED`).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from assay.config._yaml import LocPath
from assay.interop.promptfoo._inputs import (
    Unsupported,
    expand_vars,
    load_var_file,
    make_env,
    render_prompt,
    resolve_var_references,
)
from assay.interop.promptfoo._prompt_programs import call_executable_prompt, call_js
from assay.interop.promptfoo._providers import judge_spec
from assay.interop.promptfoo._pycode import call_python
from assay.interop.promptfoo._reader import Prompt, Reader, TestRef, slug
from assay.results import JSON

__all__ = ["ANSWERED", "Defaults", "build_cases"]

ANSWERED: dict[str, JSON] = {"type": "regex", "value": "(?s).*", "name": "answered"}
"""promptfoo passes a test without assertions when the provider answers without an error; in
assay a target error already makes the case an `error`, so this grader always passes."""

_TEST_OPTIONS = {
    "prefix",
    "suffix",
    "disableVarExpansion",
    "disableDefaultAsserts",
    "provider",
    "transform",  # applied to the output before the assertions (`transform` graders)
    "postprocess",  # transform's old name
}
SCORING = (
    "assay scores a case with its aggregator (every grader must pass, or the weighted mean "
    "reaches the test's threshold); a custom scoring function has no equivalent, so the case "
    "keeps that rule"
)
_OPTION_ADVICE = {
    "transformVars": "write the transformed vars into the tests",
    "storeOutputAs": "assay cases do not feed each other; use a multi-turn test (`turns`)",
    "runSerially": "pass `--concurrency 1` to `assay run`",
    "rubricPrompt": "write the judge's instructions into the llm-grader's `prompt`",
}


@dataclass
class Defaults:
    """What `defaultTest` gives every test."""

    test: dict[str, JSON]
    graders: list[JSON]
    """Its assertions without vars: the suite's `assertions`."""
    templated: list[JSON]
    """Its assertions that use vars: rendered per case."""
    templates: JSON = None
    """The config's `assertionTemplates`."""


@dataclass
class _Test:
    """One promptfoo test, prepared: its options, variants, judge and prompts."""

    path: LocPath
    spec: dict[str, JSON]
    base_id: str
    options: dict[str, Any]
    variants: list[dict[str, JSON]]
    prompts: list[Prompt]
    judge: dict[str, JSON] | None = None
    graders: list[JSON] = field(default_factory=list)


class _Builder:
    def __init__(self, reader: Reader, defaults: Defaults) -> None:
        self.reader = reader
        self.defaults = defaults
        self.seen: set[str] = set()
        self.missing: set[str] = set()
        self.env = make_env(self.missing)
        self.cases: list[JSON] = []

    def options(self, path: LocPath, test: dict[str, JSON]) -> dict[str, Any]:
        """The test's options over defaultTest's; each one not carried over is a note."""
        merged: dict[str, Any] = {}
        for where, options in (
            (("defaultTest", "options"), self.defaults.test.get("options")),
            ((*path, "options"), test.get("options")),
        ):
            if not isinstance(options, dict):
                continue
            merged.update(options)
            for key in options:
                if key not in _TEST_OPTIONS:
                    advice = _OPTION_ADVICE.get(key, "see docs/migrating-from-promptfoo.md")
                    self.reader.note(
                        (*where, key), f"test option `{key}` is not converted; {advice}"
                    )
        return merged

    def prepare(self, n: int, path: LocPath, test: dict[str, JSON], prompts: list[Prompt]) -> _Test:
        options = self.options(path, test)
        own = test.get("vars")
        if isinstance(own, str) and own.startswith("file://"):
            loaded = self.reader.load_data(own.removeprefix("file://"), (*path, "vars"))
            own = loaded[0] if loaded else {}
        given = self.defaults.test.get("vars")
        merged: dict[str, JSON] = {**(given if isinstance(given, dict) else {})}
        merged.update(own if isinstance(own, dict) else {})
        expand = not options.get("disableVarExpansion")
        allowed = test.get("prompts")
        prepared = _Test(
            path,
            test,
            slug(str(test.get("description") or ""), f"test-{n + 1}"),
            options,
            expand_vars(merged, self.reader.base) if expand else [merged],
            [p for p in prompts if not isinstance(allowed, list) or _allowed(p, allowed)],
        )
        own_options = test.get("options")
        if isinstance(own_options, dict) and "provider" in own_options:
            prepared.judge, why = judge_spec(own_options["provider"])
            if why:
                self.reader.note((*path, "options", "provider"), why)
        if "assertScoringFunction" in test:
            self.reader.note((*path, "assertScoringFunction"), SCORING)
        for key, message in (
            (
                "provider",
                "a test's own provider is not converted; every case runs on the suite's target",
            ),
            (
                "providers",
                "the test runs on every target in assay; run the suite with "
                "`--target NAME` for the providers it names",
            ),
        ):
            if test.get(key) is not None:
                self.reader.note((*path, key), message)
        return prepared

    def graders(self, test: _Test, variables: dict[str, JSON]) -> list[JSON]:
        skip = test.options.get("disableDefaultAsserts") is True
        templated = [] if skip else self.defaults.templated
        templates = self.defaults.templates
        own = output_transform(test.spec)  # its own (or old-named) transform over defaultTest's
        transform = own if own is not None else output_transform(self.defaults.test)
        graders = self.reader.graders(
            templated, variables, ("defaultTest", "assert"), templates, transform
        )
        graders += self.reader.graders(
            test.spec.get("assert"), variables, (*test.path, "assert"), templates, transform
        )
        differs = transform != output_transform(self.defaults.test)
        if self.defaults.graders and not skip and differs:
            self.reader.approx(
                (*test.path, "options", "transform"),
                "the defaultTest assertions grade this test's output through "
                "defaultTest's transform, not this one",
            )
        if test.judge is not None:
            graders = [_judged(g, test.judge) for g in graders]
        if not graders and (skip or not self.defaults.graders):
            if test.spec.get("assert") or templated:
                self.reader.note(
                    test.path,
                    "none of the test's assertions converted; the case only checks that the "
                    "target answers",
                )
            graders = [dict(ANSWERED)]
        return graders

    def add(self, test: _Test) -> None:
        for v, raw_vars in enumerate(test.variants):
            try:
                variables = _load_vars(self.reader, raw_vars, test.path)
            except Unsupported as exc:
                self.reader.note((*test.path, "vars"), f"the test is left out: {exc}")
                return
            test.graders = self.graders(test, variables)
            for prompt in test.prompts:
                case_id = test.base_id
                if len(test.variants) > 1:
                    case_id += f"-v{v + 1}"
                if len(test.prompts) > 1:
                    case_id += f"-{prompt.label}"
                while case_id in self.seen:
                    case_id += "-dup"
                rendered = self.render(test, prompt, variables, case_id)
                if rendered is not None:
                    self.seen.add(case_id)
                    self.cases.append(self.case(test, case_id, rendered, prompt, variables))

    def render(
        self, test: _Test, prompt: Prompt, variables: dict[str, JSON], case_id: str
    ) -> JSON | None:
        """The case input, or None (with a note) when the prompt cannot be carried over."""
        prefix = str(test.options.get("prefix") or "")
        suffix = str(test.options.get("suffix") or "")
        self.missing.clear()
        try:
            raw = prompt.raw if prompt.function is None else self.call(prompt.function, variables)
            rendered = render_prompt(self.env, prefix + raw + suffix, variables)
        except Unsupported as exc:
            self.reader.note(test.path, f"case '{case_id}' is left out: {exc}")
            return None
        except Exception as exc:  # jinja2 errors: a syntax error, an unknown filter
            self.reader.note(
                test.path,
                f"case '{case_id}' is left out: prompt '{prompt.label}' cannot be rendered "
                f"({type(exc).__name__}: {exc}); rewrite the template in Jinja2 syntax",
            )
            return None
        if self.missing:
            self.reader.approx(
                test.path,
                f"prompt '{prompt.label}' uses {', '.join(sorted(self.missing))}, which the "
                "test does not set; promptfoo renders it empty, and so does the case",
            )
        return rendered

    def call(self, function: str, variables: dict[str, JSON]) -> str:
        """A Python or JavaScript prompt function's prompt for these vars, as promptfoo takes
        it: a string, `{prompt, config}` (the prompt), or anything else as its JSON; an
        executable prompt's output. All see promptfoo's context: the vars and the first
        provider's `{id, label}`.

        Raises:
            Unsupported: the call fails.
        """
        context: dict[str, JSON] = {"vars": variables, "provider": self.reader.default_provider}
        if function.startswith("exec:"):
            return call_executable_prompt(self.reader.base, function, context)
        if ".py" in function:
            result = call_python(self.reader.base, function, [context], "prompt")
        else:
            result = call_js(self.reader.base, function, [context])
        if isinstance(result, dict) and "prompt" in result:
            result = result["prompt"]
        return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)

    def case(
        self, test: _Test, case_id: str, rendered: JSON, prompt: Prompt, variables: dict[str, JSON]
    ) -> dict[str, JSON]:
        case: dict[str, JSON] = {"id": case_id}
        description = test.spec.get("description")
        if isinstance(description, str) and description:
            case["description"] = description
        case["input"] = rendered
        case["assertions"] = copy.deepcopy(test.graders)
        execution: dict[str, JSON] = {}
        threshold = test.spec.get("threshold", self.defaults.test.get("threshold"))
        if isinstance(threshold, int | float):
            execution.update(aggregator={"type": "weighted_average"}, threshold=threshold)
        if test.options.get("disableDefaultAsserts") is True and self.defaults.graders:
            execution["skip_defaults"] = True
        if execution:
            case["execution"] = execution
        metadata: dict[str, JSON] = {"vars": _shown(variables), "prompt": prompt.label}
        for extra in (self.defaults.test.get("metadata"), test.spec.get("metadata")):
            if isinstance(extra, dict):
                metadata.update(extra)
        case["metadata"] = metadata
        return case


def build_cases(
    reader: Reader,
    tests: list[TestRef] | None,
    prompts: list[Prompt],
    defaults: Defaults,
    filters: Mapping[str, Callable[..., JSON]] | None = None,
) -> list[JSON]:
    """Every test × variant × prompt as a case; what cannot be carried over is a note.
    `tests` is None when the config gives none: promptfoo then runs each prompt once.
    `filters` are the config's own template filters (`nunjucksFilters`)."""
    if tests is None:
        tests = [(("tests",), {})]
    builder = _Builder(reader, defaults)
    builder.env.filters.update(filters or {})
    for n, (path, test) in enumerate(tests):
        builder.add(builder.prepare(n, path, test, prompts))
    return builder.cases


def scenario_tests(raw: JSON) -> list[TestRef]:
    """promptfoo's scenarios: every `config` entry × every scenario test, merged."""
    out: list[TestRef] = []
    for s, scenario in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(scenario, dict):
            continue
        datas = scenario.get("config")
        tests = scenario.get("tests")
        for item in datas if isinstance(datas, list) else [{}]:
            for t, test in enumerate(tests if isinstance(tests, list) else [{}]):
                if isinstance(item, dict) and isinstance(test, dict):
                    out.append((("scenarios", s, "tests", t), _merged(item, test)))
    return out


def _merged(item: dict[str, JSON], test: dict[str, JSON]) -> dict[str, JSON]:
    def mapping(value: JSON) -> dict[str, JSON]:
        return value if isinstance(value, dict) else {}

    def listed(value: JSON) -> list[JSON]:
        return value if isinstance(value, list) else []

    merged: dict[str, JSON] = {**item, **test}
    merged["vars"] = {**mapping(item.get("vars")), **mapping(test.get("vars"))}
    merged["assert"] = [*listed(item.get("assert")), *listed(test.get("assert"))]
    return merged


def _shown(variables: dict[str, JSON]) -> dict[str, JSON]:
    """Vars kept in metadata; a long base64 file is replaced by its size (it is in the input)."""
    return {
        k: (f"<{len(v)} base64 characters>" if isinstance(v, str) and len(v) > 20000 else v)
        for k, v in variables.items()
    }


def _judged(grader: JSON, judge: dict[str, JSON]) -> JSON:
    if isinstance(grader, dict) and grader.get("type") == "llm-grader" and "judge" not in grader:
        return {**grader, "judge": judge}
    return grader


def _allowed(prompt: Prompt, allowed: list[JSON]) -> bool:
    """A test's `prompts:` filter: labels, `group` for `group-…`, `group:*`."""
    for label in allowed:
        if isinstance(label, str):
            wanted = slug(label.removesuffix(":*"), "")
            if prompt.label == wanted or prompt.label.startswith(f"{wanted}-"):
                return True
    return False


def _load_vars(reader: Reader, variables: dict[str, JSON], path: LocPath) -> dict[str, JSON]:
    """`file://` vars loaded as promptfoo loads them (a Python var's `get_var` called once,
    now), then `{{ var }}` references resolved.

    Raises:
        Unsupported: a var computed by JavaScript, a PDF, an unreadable file, a failing call.
    """
    out: dict[str, JSON] = {}
    for key, value in variables.items():
        if isinstance(value, str) and re.search(r"^file://.+\.py(:\w+)?$", value):
            result = call_python(reader.base, value, [key, "", {**variables, **out}], "get_var")
            if not isinstance(result, dict) or "output" not in result:
                raise Unsupported(f"'{value}' returned no `output` ({str(result)[:80]})")
            out[key] = result["output"]
            reader.approx(
                (*path, "vars", key),
                f"the variable was computed by '{value}' once, now (promptfoo calls it for "
                "every case, with the prompt); import again to refresh it",
            )
        elif isinstance(value, str) and value.startswith("file://"):
            out[key] = load_var_file(value, reader.base)
        else:
            out[key] = value
    return resolve_var_references(out)


def output_transform(test: JSON) -> JSON:
    """A test's output transform (`options.transform`, or its old name `postprocess`)."""
    options = test.get("options") if isinstance(test, dict) else None
    if not isinstance(options, dict):
        return None
    return options.get("transform", options.get("postprocess"))
