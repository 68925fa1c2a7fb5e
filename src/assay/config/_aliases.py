"""Deprecated spellings (SPEC §1.2), rewritten to the canonical form before validation.

Each rewrite is reported as a located warning that names the replacement. The walk follows
the suite structure explicitly so free-form mappings (`metadata`, `expected_output`, target
replies) are never touched.
"""

from __future__ import annotations

from assay.config._yaml import LocPath, SourceMap
from assay.errors import ConfigIssue
from assay.results import JSON

__all__ = [
    "GRADER_KEYS_REWRITTEN",
    "GRADER_TYPE_ALIASES",
    "canonical_grader_type",
    "rewrite_project",
    "rewrite_suite",
    "rewrite_test",
]

GRADER_TYPE_ALIASES = {"llm-judge": "llm-grader", "code-judge": "code-grader"}
"""Deprecated grader type names (after `_` → `-`) and their replacements."""

_ASSERTION_ALIASES = ("evaluators", "assert")

_TEST_KEYS_REWRITTEN = frozenset({*_ASSERTION_ALIASES, "execution", "rubrics", "simulate"})
"""Keys of a test under which `_Rewriter.test` may rewrite something (besides `assertions`)."""
GRADER_KEYS_REWRITTEN = frozenset({*_ASSERTION_ALIASES, "assertions", "aggregator", "rubrics"})
"""Keys of a grader under which `_Rewriter.grader` may rewrite something (besides `type` and
`required`)."""


def canonical_grader_type(name: str) -> str:
    """`contains_all` → `contains-all`; deprecated names map to their replacement."""
    dashed = name.replace("_", "-")
    return GRADER_TYPE_ALIASES.get(dashed, dashed)


class _Rewriter:
    def __init__(self, source: SourceMap) -> None:
        self.source = source
        self.warnings: list[ConfigIssue] = []
        self.errors: list[ConfigIssue] = []

    def warn(self, path: LocPath, message: str) -> None:
        self.warnings.append(self.source.issue(path, message))

    def rename(self, mapping: dict[str, JSON], path: LocPath, old: str, new: str) -> None:
        if old not in mapping:
            return
        if new in mapping:
            self.errors.append(
                self.source.issue((*path, old), f"'{old}' and '{new}' are both set; keep '{new}'")
            )
            return
        mapping[new] = mapping.pop(old)
        self.source.rename((*path, old), (*path, new))
        self.warn((*path, old), f"'{old}' is deprecated; use '{new}'")

    def threshold(self, mapping: JSON, path: LocPath) -> None:
        """`pass_threshold` → `threshold`; a value above 1 is read on the 0–100 scale."""
        if not isinstance(mapping, dict) or "pass_threshold" not in mapping:
            return
        value = mapping["pass_threshold"]
        self.rename(mapping, path, "pass_threshold", "threshold")
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 1:
            mapping["threshold"] = value / 100.0
            self.warn(
                (*path, "threshold"), f"read pass_threshold {value} as threshold {value / 100}"
            )

    def assertions_key(self, mapping: dict[str, JSON], path: LocPath) -> None:
        for old in _ASSERTION_ALIASES:
            self.rename(mapping, path, old, "assertions")
        graders = mapping.get("assertions")
        if isinstance(graders, list):
            for i, grader in enumerate(graders):
                self.grader(grader, (*path, "assertions", i))

    def grader(self, spec: JSON, path: LocPath) -> None:
        if not isinstance(spec, dict):
            return
        kind = spec.get("type")
        if isinstance(kind, str):
            canonical = canonical_grader_type(kind)
            if canonical != kind.replace("_", "-"):
                self.warn((*path, "type"), f"grader type '{kind}' is deprecated; use '{canonical}'")
            spec["type"] = canonical
        required = spec.get("required")
        if isinstance(required, int | float) and not isinstance(required, bool):
            if "min_score" in spec:
                self.errors.append(
                    self.source.issue(
                        (*path, "required"),
                        "a numeric 'required' conflicts with 'min_score'; use required: true",
                    )
                )
                return
            spec["required"] = True
            spec["min_score"] = required
            self.warn(
                (*path, "required"),
                f"'required: {required}' is deprecated; use 'required: true' with "
                f"'min_score: {required}'",
            )
        if spec.get("type") == "rubrics":
            self.rubrics(spec.get("rubrics"), (*path, "rubrics"))
        aggregator = spec.get("aggregator")
        kind = aggregator.get("type") if isinstance(aggregator, dict) else None
        graders = ("code-grader", "llm-grader")  # a program or judge aggregator: grader types
        if isinstance(aggregator, dict) and isinstance(kind, str) and kind not in graders:
            aggregator["type"] = kind.replace("-", "_")
        self.assertions_key(spec, path)

    def rubrics(self, items: JSON, path: LocPath) -> None:
        if not isinstance(items, list):
            return
        for i, item in enumerate(items):
            if isinstance(item, dict) and "required_min_score" in item:
                old = item["required_min_score"]
                item_path = (*path, i)
                self.rename(item, item_path, "required_min_score", "min_score")
                if isinstance(old, int | float) and not isinstance(old, bool):
                    item["min_score"] = old / 10.0
                    self.warn(
                        (*item_path, "required_min_score"),
                        f"'required_min_score: {old}' (0–10) is deprecated; use "
                        f"'min_score: {old / 10}' (0–1)",
                    )

    def execution(self, mapping: dict[str, JSON], path: LocPath) -> None:
        self.threshold(mapping.get("execution"), (*path, "execution"))

    def test(self, test: JSON, path: LocPath) -> None:
        if not isinstance(test, dict):
            return
        self.assertions_key(test, path)
        self.execution(test, path)
        self.rubrics(test.get("rubrics"), (*path, "rubrics"))
        simulate = test.get("simulate")
        stops = simulate.get("stop_when") if isinstance(simulate, dict) else None
        if isinstance(stops, list):
            for i, grader in enumerate(stops):
                self.grader(grader, (*path, "simulate", "stop_when", i))


def rewrite_suite(data: JSON, source: SourceMap) -> tuple[list[ConfigIssue], list[ConfigIssue]]:
    """Rewrite a suite document in place; returns (warnings, errors)."""
    rewriter = _Rewriter(source)
    if isinstance(data, dict):
        rewriter.assertions_key(data, ())
        rewriter.execution(data, ())
        tests = data.get("tests")
        if isinstance(tests, list):
            for i, test in enumerate(tests):
                rewriter.test(test, ("tests", i))
    return rewriter.warnings, rewriter.errors


def rewrite_test(
    test: JSON, source: SourceMap, path: LocPath
) -> tuple[list[ConfigIssue], list[ConfigIssue]]:
    """Rewrite one test read from a dataset file, in place; returns (warnings, errors)."""
    if not _may_rewrite(test):
        return [], []
    rewriter = _Rewriter(source)
    rewriter.test(test, path)
    return rewriter.warnings, rewriter.errors


def _may_rewrite(test: JSON) -> bool:
    """Whether `_Rewriter.test` could change or report anything in `test`: False for a test in
    canonical form, which every dataset test is checked for as it loads (a 100,000-line
    dataset walked each test's graders in full to rewrite nothing)."""
    if not isinstance(test, dict):
        return False
    if not _TEST_KEYS_REWRITTEN.isdisjoint(test):
        return True
    graders = test.get("assertions")
    if not isinstance(graders, list):
        return False
    for grader in graders:
        if not isinstance(grader, dict):
            continue
        if not GRADER_KEYS_REWRITTEN.isdisjoint(grader):
            return True
        kind = grader.get("type")
        if isinstance(kind, str) and (
            "_" in kind or kind in GRADER_TYPE_ALIASES or kind == "rubrics"
        ):
            return True
        required = grader.get("required")
        if isinstance(required, int | float) and not isinstance(required, bool):
            return True
    return False


def rewrite_project(data: JSON, source: SourceMap) -> tuple[list[ConfigIssue], list[ConfigIssue]]:
    """Rewrite a project config (`assay.yaml`) in place; returns (warnings, errors)."""
    rewriter = _Rewriter(source)
    rewriter.threshold(data, ())
    return rewriter.warnings, rewriter.errors
