"""Whether a document is an AgentV eval file, and AgentV's `{{ var }}` test variables.

A document is AgentV's when it uses a key or shape only AgentV has; assay suites never match,
so they are never rewritten (see assay.interop.agentv._rewrite).
"""

from __future__ import annotations

import re

from assay.config._yaml import LocPath
from assay.results import JSON

__all__ = [
    "GRADER_MARKER_KEYS",
    "V4_KEYS",
    "V4_TEST_KEYS",
    "V5_KEYS",
    "agentv_marker",
    "is_message_list",
    "mixed_marker",
    "one_test_marker",
    "tests_marker",
    "v5_marker",
]

_ROLES = frozenset({"system", "user", "assistant", "tool"})
_SUITE_MARKERS = (
    "$schema",
    "requires",
    "suite",
    "dataset",
    "input",
    "input_files",
    "preprocessors",
    "category",
    "version",
    "author",
    "license",
    "eval_cases",
    "evalcases",
    "governance",
    "metadata",
)
_TEST_MARKERS = (
    "criteria",
    "conversation_id",
    "input_files",
    "vars",
    "depends_on",
    "on_dependency_failure",
    "mode",
)
_GRADER_MARKERS = (
    "criteria",
    "minimums",
    "argsMatch",
    "script",
    "include",
    "flags",
    "budget",
)
_TEST_MARKER_SET = frozenset(_TEST_MARKERS)
GRADER_MARKER_KEYS = frozenset(_GRADER_MARKERS)
"""Keys whose presence in a grader mapping marks it AgentV's (its other marks are its type)."""
_VAR = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")


def _has_grader_marker(specs: JSON) -> bool:
    # Every dataset test is asked this as it loads: set lookups rather than a key-by-key scan,
    # and no call for an absent nested list (a plain grader has none).
    if not isinstance(specs, list):
        return False
    for spec in specs:
        if isinstance(spec, str):
            return True
        if isinstance(spec, dict):
            if not GRADER_MARKER_KEYS.isdisjoint(spec):
                return True
            kind = str(spec.get("type", "")).replace("_", "-")
            if kind in ("icontains-any", "icontains-all"):
                return True
            if kind == "llm-grader" and ("prompt" not in spec or "rubrics" in spec):
                return True
            nested = spec.get("assertions")
            if isinstance(nested, list) and _has_grader_marker(nested):
                return True
            nested = spec.get("evaluators")
            if isinstance(nested, list) and _has_grader_marker(nested):
                return True
    return False


def _has_message_marker(value: JSON) -> bool:
    """A single message mapping, an object input, or content blocks inside messages."""
    if isinstance(value, dict):
        return True
    if isinstance(value, list):
        return any(
            isinstance(m, dict)
            and not isinstance(m.get("content"), str)
            and not _assay_parts(m.get("content"))
            for m in value
        )
    return False


def _assay_parts(content: JSON) -> bool:
    """Content parts in assay's own (OpenAI's) shape, which mark no AgentV file (AgentV's
    content blocks carry a `value`; assay's suite model checks the part types)."""
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(p, dict) and "value" not in p and "type" in p for p in content)
    )


def _workspace_marker(workspace: JSON) -> bool:
    """A workspace written in a form assay's `workspace` does not have (its keys are AgentV's,
    so only AgentV's other forms mark a file)."""
    if isinstance(workspace, str):
        return True
    if not isinstance(workspace, dict):
        return False
    if any(key in workspace for key in ("mode", "docker", "path")):
        return True
    if workspace.get("isolation") == "shared":
        return True
    repos = workspace.get("repos")
    if isinstance(repos, list) and any(
        isinstance(r, dict) and ("base_commit" in r or "sparse" in r) for r in repos
    ):
        return True
    hooks = workspace.get("hooks")
    if isinstance(hooks, dict):
        for hook in hooks.values():
            if isinstance(hook, dict) and any(k in hook for k in ("script", "reset", "timeoutMs")):
                return True
    return False


def agentv_marker(data: JSON, tests_key: str = "tests") -> LocPath | None:
    """Where the document first uses a form only AgentV has, or None for an assay suite."""
    if not isinstance(data, dict):
        return None
    for key in _SUITE_MARKERS:
        if key in data:
            return (key,)
    if _workspace_marker(data.get("workspace")):
        return ("workspace",)
    execution = data.get("execution")
    if isinstance(execution, dict):
        for key in (
            "target",
            "workers",
            "evaluators",
            "assertions",
            "targets",
            "cache",
            "budget_usd",
            "fail_on_error",
            "trials",
        ):
            if key in execution:
                return ("execution", key)
    for key in ("assertions", "evaluators"):
        if _has_grader_marker(data.get(key)):
            return (key,)
    tests = data.get(tests_key)
    found = tests_marker(tests, (tests_key,)) if isinstance(tests, list) else None
    if found is None and "name" not in data and tests_key in data:
        return ()  # AgentV names a suite after its file; an assay suite must have a name
    return found


def tests_marker(tests: list[JSON], prefix: LocPath) -> LocPath | None:
    """Where the first of `tests` uses a form only AgentV has (`(*prefix, i, key)`), or None."""
    for i, test in enumerate(tests):
        if isinstance(test, dict):
            key = one_test_marker(test)
            if key is not None:
                return (*prefix, i, key)
    return None


def one_test_marker(test: dict[str, JSON]) -> str | None:
    """The key where one test uses a form only AgentV has, or None. Every dataset test is
    asked this as it loads, so each check looks only at keys the test has."""
    if not _TEST_MARKER_SET.isdisjoint(test):
        return next(key for key in _TEST_MARKERS if key in test)
    workspace = test.get("workspace")
    if workspace is not None and _workspace_marker(workspace):
        return "workspace"
    execution = test.get("execution")
    if isinstance(execution, dict) and ("target" in execution or "evaluators" in execution):
        return "execution"
    for key in ("assertions", "evaluators", "assert"):
        specs = test.get(key)
        if isinstance(specs, list) and _has_grader_marker(specs):
            return key
    value = test.get("input")
    if not isinstance(value, str) and _has_message_marker(value):
        return "input"
    value = test.get("expected_output")
    if isinstance(value, list) and is_message_list(value):
        return "expected_output"
    rubrics = test.get("rubrics")
    if isinstance(rubrics, list) and any(isinstance(r, str) for r in rubrics):
        return "rubrics"
    return None


def is_message_list(value: JSON) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(m, dict) and m.get("role") in _ROLES and "content" in m for m in value)
    )


V5_KEYS = (
    "prompts",
    "providers",
    "default_test",
    "evaluate_options",
    "environment",
    "extensions",
    "scenarios",
    "derived_metrics",
    "output_path",
    "nunjucks_filters",
    "timeout_seconds",
    "defaults",
)
"""Top-level keys only AgentV v5 has (assay suites and v4 files use none of them; v5's
top-level `assert` is not one: assay reads it as the deprecated `assertions`)."""

V4_KEYS = (
    "execution",
    "target",
    "targets",
    "input",
    "expected_output",
    "eval_cases",
    "evalcases",
    "assertions",
    "evaluators",
)
"""Top-level keys of v4 that v5 removed (AgentV v5 rejects them)."""

V4_TEST_KEYS = ("input", "expected_output", "assertions", "evaluators")


_WEAK_V5_KEYS = frozenset({"defaults"})
"""v5 keys that a v4 file may hold too (v4 ignores them, with a warning): alone beside v4 keys
they do not make a file v5."""


def v5_marker(data: JSON) -> LocPath | None:
    """Where the document first uses a key only AgentV v5 has, or None."""
    if not isinstance(data, dict):
        return None
    found = [key for key in data if key in V5_KEYS]
    if set(found) <= _WEAK_V5_KEYS and mixed_marker(data):
        return None  # a v4 file with a key v4 ignores (AgentV v4.42's own examples have these)
    return (found[0],) if found else None


def mixed_marker(data: dict[str, JSON]) -> list[LocPath]:
    """Every v4-only key in a v5 document (top level, then inline tests)."""
    found: list[LocPath] = [(key,) for key in V4_KEYS if key in data]
    tests = data.get("tests")
    if isinstance(tests, list):
        for i, test in enumerate(tests):
            if isinstance(test, dict):
                found += [("tests", i, key) for key in V4_TEST_KEYS if key in test]
    return found
