"""AgentV eval files (SPEC §2 compatibility), rewritten to assay's suite format before validation.

A document is read as an AgentV file when it uses a key or shape only AgentV has (`criteria`,
string assertions, message content blocks, `execution.target`, …); one located warning says so
and names that marker. Only then are AgentV's forms rewritten, including the few that are
valid assay with another meaning (tool-trajectory `any_order` and partial `args`, an
`expected_output` message list). Features assay lacks are located errors saying why; unknown
keys are left for validation, which rejects them with a "did you mean".
See docs/migrating-from-agentv.md.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from assay.config._yaml import LocPath, SourceMap
from assay.errors import ConfigIssue
from assay.interop._vars import substitute_vars
from assay.interop.agentv._detect import agentv_marker, is_message_list, tests_marker
from assay.interop.agentv._graders import GraderRewriter, rubric_items
from assay.interop.agentv._v5 import V5Reader, mixed_marker, v5_marker
from assay.interop.agentv._workspace import rewrite_workspace
from assay.results import JSON

__all__ = ["AgentVTests", "rewrite_agentv_suite"]

_DROPPED = ("$schema", "requires", "category", "version", "author", "license")
"""Catalogue metadata of AgentV files: it changes no result and assay has no place for it."""

_UNSUPPORTED = {
    "preprocessors": "assay graders read the target's text output; convert files to text in the "
    "target",
    "imports": "list the tests here, or point `tests:` at a YAML, JSONL or CSV file",
    "experiment": "put `threshold` under `execution` and pass other run settings to `assay run`",
    "depends_on": "assay runs every case independently",
    "on_dependency_failure": "assay runs every case independently",
    "window_size": "assay sends every turn with the whole conversation so far",
}
_EXECUTION_UNSUPPORTED = {
    "targets": "assay runs one target per run: run the suite once per target with --target",
    "cache": "use `assay run --no-cache` or `--cache-mode`",
    "budget_usd": "assay has no run budget; use a `cost` grader per case",
    "fail_on_error": "assay never counts an error as a pass; remove it",
}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:100] or "suite"


class _Suite(GraderRewriter):
    """Rewrites one AgentV document (or the tests of one dataset file)."""

    def __init__(self, source: SourceMap, base_dir: Path) -> None:
        super().__init__(source)
        self.base_dir = base_dir
        self.prefix: list[JSON] = []
        """Suite-level `input` messages, prepended to each test's input."""
        self.files: JSON = None
        """Suite-level `input_files`, the default of each test's."""
        self.promptless: list[JSON] = []
        """Suite-level llm-graders without a prompt: each test gets one with its criteria."""

    def unsupported(self, mapping: dict[str, JSON], path: LocPath, table: dict[str, str]) -> None:
        for key, why in table.items():
            if key in mapping:
                self.error((*path, key), f"AgentV's `{key}` is not supported by assay: {why}")

    # -- suite -----------------------------------------------------------------------------

    def workspace(self, data: dict[str, JSON], path: LocPath) -> None:
        if "workspace" in data:
            where = (*path, "workspace")
            data["workspace"] = rewrite_workspace(
                data["workspace"], where, self.base_dir, self.error, self.warn
            )

    def suite(self, data: dict[str, JSON]) -> None:
        self.unsupported(data, (), _UNSUPPORTED)
        self.workspace(data, ())
        for key in _DROPPED:
            data.pop(key, None)
        for old in ("suite", "dataset"):
            label = data.pop(old, None)
            if "name" not in data and isinstance(label, str):
                data["name"] = _slug(label)
        if "name" not in data:
            stem = Path(self.source.default_file).name.split(".")[0]
            data["name"] = _slug(stem)
            self.warn((), f"no `name`; using '{data['name']}' from the file name")
        if "eval_cases" in data and "tests" not in data:
            data["tests"] = data.pop("eval_cases")
            self.source.rename(("eval_cases",), ("tests",))
        self._suite_execution(data)
        if "input" in data:
            self.prefix = self.messages(data.pop("input"), ("input",))
        self.files = data.pop("input_files", None)
        for key in ("assertions", "evaluators"):
            if key in data:
                data[key] = self._suite_graders(data[key], (key,))
        tags = data.pop("tags", None)
        tests = data.get("tests")
        if isinstance(tests, list):
            for i, test in enumerate(tests):
                if isinstance(test, dict) and isinstance(tags, list):
                    test["tags"] = [*tags, *[t for t in _list(test.get("tags")) if t not in tags]]
                self.test(test, ("tests", i), data.get("target"))
        elif self.prefix or self.files is not None or self.promptless:
            self.error(
                ("tests",),
                "suite-level `input`, `input_files` and prompt-less llm-graders apply only to "
                "tests written in the suite file; move them into the tests",
            )

    def _suite_execution(self, data: dict[str, JSON]) -> None:
        execution = data.get("execution")
        if not isinstance(execution, dict):
            return
        self.unsupported(execution, ("execution",), _EXECUTION_UNSUPPORTED)
        target = execution.pop("target", None)
        if target is not None:
            if data.get("target", target) != target:
                self.error(("execution", "target"), "`target` and `execution.target` differ")
            data["target"] = target
            self.source.rename(("execution", "target"), ("target",))
        if "workers" in execution:
            execution["concurrency"] = execution.pop("workers")
        for key in ("evaluators", "assertions"):
            if key in execution:
                graders = _list(data.get("assertions")) + _list(execution.pop(key))
                data["assertions"] = graders

    def _suite_graders(self, specs: JSON, path: LocPath) -> JSON:
        rewritten = self.graders(specs, path)
        if not isinstance(rewritten, list):
            return rewritten
        kept = []
        for spec in rewritten:
            if isinstance(spec, dict) and spec.get("type") == "llm-grader" and "prompt" not in spec:
                self.promptless.append(spec)
            else:
                kept.append(spec)
        return kept

    # -- tests -----------------------------------------------------------------------------

    def test(self, test: JSON, path: LocPath, suite_target: JSON) -> None:
        if not isinstance(test, dict):
            return
        self.unsupported(test, path, _UNSUPPORTED)
        self.workspace(test, path)
        variables = test.pop("vars", None)
        if isinstance(variables, dict):
            for key in ("input", "criteria", "expected_output", "input_files", "turns"):
                if key in test:
                    test[key] = substitute_vars(test[key], variables)
            test.setdefault("metadata", {})
            if isinstance(test["metadata"], dict):
                test["metadata"].setdefault("vars", variables)
        if "conversation_id" in test:
            meta = test.setdefault("metadata", {})
            if isinstance(meta, dict):
                meta["conversation_id"] = test.pop("conversation_id")
        if test.get("mode") == "conversation":
            test.pop("mode")
        skip = self._test_execution(test, path, suite_target)
        self._input(test, path, skip)
        if is_message_list(test.get("expected_output")):
            test["expected_output"] = self._reference(test["expected_output"], path)
        if "rubrics" in test:
            test["rubrics"] = rubric_items(test["rubrics"], (*path, "rubrics"), self.error)
        key = next((k for k in ("assertions", "evaluators", "assert") if k in test), "assertions")
        if key in test:
            test[key] = self.graders(test[key], (*path, key))
        self._turns(test, path)
        self._criteria(test, path, key, skip)

    def _test_execution(self, test: dict[str, JSON], path: LocPath, suite_target: JSON) -> bool:
        execution = test.get("execution")
        if not isinstance(execution, dict):
            return False
        where = (*path, "execution")
        self.unsupported(execution, where, _EXECUTION_UNSUPPORTED)
        target = execution.pop("target", None)
        if target is not None and target != suite_target:
            self.error(
                (*where, "target"),
                f"assay runs one target per run, and this test names '{target}'; run it in a "
                "suite of its own (or with --target), or remove `execution.target`",
            )
        for key in ("evaluators", "assertions"):
            if key in execution:
                moved = self.graders(execution.pop(key), (*where, key))
                test["assertions"] = _list(test.get("assertions")) + _list(moved)
        return execution.get("skip_defaults") is True

    def _input(self, test: dict[str, JSON], path: LocPath, skip: bool) -> None:
        files = test.pop("input_files", None if skip else self.files)
        if "input" not in test:
            return
        raw = test["input"]
        if isinstance(files, list) and isinstance(raw, str):
            blocks: list[JSON] = [{"type": "file", "value": f} for f in files]
            raw = [{"role": "user", "content": [*blocks, {"type": "text", "value": raw}]}]
        messages = self.messages(raw, (*path, "input"))
        if not skip:
            messages = [*self.prefix, *messages]
        if len(messages) == 1 and isinstance(messages[0], dict):
            only = messages[0]
            if only.get("role") == "user" and isinstance(only.get("content"), str):
                test["input"] = only["content"]
                return
        test["input"] = messages

    def messages(self, value: JSON, path: LocPath) -> list[JSON]:
        """AgentV input (a string, one message, an object, or messages) as a message list."""
        if isinstance(value, str):
            return [{"role": "user", "content": value}]
        if isinstance(value, dict):
            if "role" in value:
                value = [value]
            else:
                return [{"role": "user", "content": json.dumps(value, ensure_ascii=False)}]
        if not isinstance(value, list):
            return [value]
        out: list[JSON] = []
        for i, message in enumerate(value):
            if isinstance(message, dict) and "content" in message:
                content = self.content(message["content"], (*path, i, "content"))
                out.append({**message, "content": content})
            else:
                out.append(message)
        return out

    def content(self, content: JSON, path: LocPath) -> JSON:
        """Content blocks as one text: text blocks as written, files inlined in `<file>` tags."""
        if isinstance(content, dict):
            return json.dumps(content, ensure_ascii=False)
        if not isinstance(content, list):
            return content
        parts: list[str] = []
        for i, block in enumerate(content):
            kind = block.get("type") if isinstance(block, dict) else None
            value = block.get("value") if isinstance(block, dict) else None
            if kind == "text" and isinstance(value, str):
                parts.append(value)
            elif kind == "file" and isinstance(value, str):
                parts.append(self._file(value, (*path, i, "value")))
            else:
                self.error(
                    (*path, i),
                    "a content block must be {type: text, value: ...} or {type: file, value: "
                    "path}; assay sends text only (images are not supported)",
                )
        return "\n\n".join(parts)

    def _file(self, name: str, path: LocPath) -> str:
        file = Path(name)
        if not file.is_absolute():
            file = self.base_dir / file
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.error(path, f"cannot read input file '{name}' (looked at {file}): {exc}")
            return ""
        return f'<file path="{name}">\n{text}\n</file>'

    def _reference(self, messages: list[JSON], path: LocPath) -> JSON:
        """The reference answer: the last assistant message's content."""
        replies = [m for m in messages if isinstance(m, dict) and m.get("role") == "assistant"]
        if not replies:
            self.error((*path, "expected_output"), "the expected messages have no assistant reply")
            return messages
        if len(messages) > 1:
            self.warn(
                (*path, "expected_output"),
                "assay compares the output with the last expected assistant message only",
            )
        content = replies[-1]["content"]
        if isinstance(content, list):
            return self.content(content, (*path, "expected_output", "content"))
        return content

    def _turns(self, test: dict[str, JSON], path: LocPath) -> None:
        turns = test.get("turns")
        if not isinstance(turns, list):
            return
        for i, turn in enumerate(turns):
            if not isinstance(turn, dict):
                continue
            where = (*path, "turns", i)
            if "expected_output" in turn:
                self.error(
                    (*where, "expected_output"),
                    "assay turns have no reference answer; state what the reply must do as "
                    "`assertions` or `expected_outcomes` of the turn",
                )
            if isinstance(turn.get("input"), list | dict):
                content = self.content(turn["input"], (*where, "input"))
                turn["input"] = content
            if "assertions" in turn:
                turn["assertions"] = self.graders(turn["assertions"], (*where, "assertions"))

    def _criteria(self, test: dict[str, JSON], path: LocPath, key: str, skip: bool) -> None:
        """`criteria` is graded by an llm-grader: the implicit one of a test without its own
        graders, or each llm-grader that gives no prompt (AgentV passes it the criteria)."""
        criteria = test.pop("criteria", None)
        if isinstance(criteria, str):
            test["criteria"] = criteria  # code graders read it (AgentV passes it to them)
        graders = test.get(key)
        own = graders if isinstance(graders, list) else []
        promptless = [g for g in own if isinstance(g, dict) and g.get("type") == "llm-grader"]
        promptless = [g for g in promptless if "prompt" not in g]
        inherited = [] if skip else [dict(g) for g in self.promptless]
        if not isinstance(criteria, str) or not criteria.strip():
            for grader in promptless + inherited:
                where = (*path, "criteria") if grader in promptless else ("assertions",)
                self.error(where, "this llm-grader has no `prompt` and the test no `criteria`")
            return
        for grader in promptless + inherited:
            grader["prompt"] = criteria
        if inherited:
            test[key] = [*own, *inherited]
        elif not own and "rubrics" not in test and "turns" not in test:
            test[key] = [{"type": "llm-grader", "name": "criteria", "prompt": criteria}]
            self.source.entries.setdefault((*path, key), self.source.locate((*path, "criteria")))
        elif not promptless and not any(
            isinstance(g, dict) and g.get("type") == "code-grader" for g in own
        ):
            self.warn(
                (*path, "criteria"),
                "no grader of this test reads `criteria`, so it is not graded; add "
                "`type: llm-grader` to its assertions, or remove it",
            )
            test.setdefault("description", criteria)


def _list(value: JSON) -> list[JSON]:
    return list(value) if isinstance(value, list) else []


def _announce(source: SourceMap, marker: LocPath) -> ConfigIssue:
    shown = ".".join(str(p) for p in marker)
    return source.issue(
        marker,
        f"read as an AgentV eval file (`{shown}` is AgentV's); AgentV's forms are "
        "rewritten to assay's, see docs/migrating-from-agentv.md",
    )


def rewrite_agentv_suite(
    data: dict[str, JSON], source: SourceMap, base_dir: Path
) -> tuple[list[ConfigIssue], list[ConfigIssue]]:
    """Rewrite an AgentV suite document in place (nothing happens to an assay suite);
    returns (warnings, errors)."""
    v5 = v5_marker(data)
    if v5 is not None:
        return _rewrite_v5(data, source, base_dir, v5)
    marker = agentv_marker(data)
    if marker is None:
        return [], []
    rewriter = _Suite(source, base_dir)
    rewriter.suite(data)
    return [_announce(source, marker), *rewriter.warnings], rewriter.errors


def _rewrite_v5(
    data: dict[str, JSON], source: SourceMap, base_dir: Path, marker: LocPath
) -> tuple[list[ConfigIssue], list[ConfigIssue]]:
    """A v5 document: converted to the v4 shape (assay.interop.agentv._v5), then rewritten
    as a v4 one; a file mixing v4 and v5 keys is one error."""
    shown = ".".join(str(p) for p in marker)
    announce = source.issue(
        marker,
        f"read as an AgentV v5 eval file (`{shown}` is v5's); AgentV's forms are rewritten to "
        "assay's, see docs/migrating-from-agentv.md#v5",
    )
    reader = V5Reader(source, base_dir)
    mixed = mixed_marker(data)
    if mixed:
        reader.mixed(marker, mixed)
        return [announce], reader.errors
    reader.convert(data)
    rewriter = _Suite(source, base_dir)
    rewriter.suite(data)
    return [announce, *reader.warnings, *rewriter.warnings], [*reader.errors, *rewriter.errors]


class AgentVTests:
    """AgentV rewriting of a dataset file's tests, one test at a time as they are read.

    A dataset is AgentV's when any of its tests uses a form only AgentV has; then every test
    is rewritten. The reader looks for the first marker with `marker`, and when tests before
    it went by unrewritten it reads the dataset again, rewriting from the first test.
    """

    def __init__(
        self, source: SourceMap, base_dir: Path, announce: ConfigIssue, suite_target: JSON = None
    ) -> None:
        """`source` locates the test being rewritten (its paths start with the test's index);
        `announce` is the warning `announcement` made where the dataset first uses AgentV."""
        self._rewriter = _Suite(source, base_dir)
        self._target = suite_target
        self._announce = announce

    @staticmethod
    def marker(test: JSON, index: int) -> LocPath | None:
        """Where test `index` uses a form only AgentV has (`(index, key)`), or None."""
        found = tests_marker([test], ())
        return None if found is None else (index, *found[1:])

    @staticmethod
    def announcement(source: SourceMap, marker: LocPath) -> ConfigIssue:
        """The warning that the dataset is read as AgentV's, located at `marker`."""
        return _announce(source, marker)

    def rewrite(self, test: JSON, index: int) -> None:
        """Rewrite test `index` in place."""
        self._rewriter.test(test, (index,), self._target)

    @property
    def warnings(self) -> list[ConfigIssue]:
        """The announcement, then every rewrite's warnings in order."""
        return [self._announce, *self._rewriter.warnings]

    @property
    def errors(self) -> list[ConfigIssue]:
        """Every rewrite's errors in order."""
        return self._rewriter.errors
