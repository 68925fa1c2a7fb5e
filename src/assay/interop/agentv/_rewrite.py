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

import base64
import difflib
import json
import re
from collections.abc import Sequence
from pathlib import Path

from assay._content import MAX_IMAGE_BYTES, image_type
from assay.config._yaml import LocPath, SourceMap
from assay.errors import ConfigError, ConfigIssue
from assay.interop._vars import substitute_vars
from assay.interop.agentv._detect import (
    agentv_marker,
    is_message_list,
    mixed_marker,
    one_test_marker,
    v5_marker,
)
from assay.interop.agentv._env_vars import interpolate_env
from assay.interop.agentv._graders import (
    PREPROCESSORS_IGNORED,
    GraderRewriter,
    fill_criteria,
    rubric_items,
    uses_criteria,
)
from assay.interop.agentv._semantics import semantic_warnings
from assay.interop.agentv._tests import gather_tests, is_agentv_dataset
from assay.interop.agentv._workspace import rewrite_workspace
from assay.results import JSON

TARGET_ALIASES = "x-agentv-target-aliases"
"""Where the rewrite leaves `execution.targets`' `use_target` entries for the targets lookup
(which removes it): {name: target it delegates to}."""

__all__ = ["TARGET_ALIASES", "AgentVTests", "rewrite_agentv_suite"]

_DROPPED = ("$schema", "requires", "category", "version", "author", "license")
"""Catalogue metadata of AgentV files: it changes no result and assay has no place for it."""

_UNSUPPORTED = {
    "imports": "list the tests here, or point `tests:` at a YAML, JSONL or CSV file",
    "experiment": "put `threshold` under `execution` and pass other run settings to `assay run`",
    "depends_on": "assay runs every case independently",
    "on_dependency_failure": "assay runs every case independently",
    "window_size": "assay sends every turn with the whole conversation so far",
}
_SUITE_KEYS = frozenset(
    {
        *("$schema", "name", "description", "category", "version", "author", "tags", "license"),
        *("requires", "input", "input_files", "tests", "eval_cases", "evalcases", "target"),
        *("execution", "assertions", "evaluators", "assert", "evaluator", "preprocessors"),
        *("workspace", "metadata", "governance"),
    }
)
"""The top-level fields AgentV v4 reads (its validator warns that any other is ignored)."""
_TEST_KEYS = frozenset(
    {
        *("id", "vars", "criteria", "expected_outcome", "input", "input_files"),
        *("expected_output", "assertions", "evaluators", "assert", "evaluator", "rubrics"),
        *("execution", "workspace", "metadata", "conversation_id", "suite", "depends_on"),
        *("on_dependency_failure", "mode", "turns", "aggregation", "on_turn_failure"),
        "window_size",
    }
)
"""The test fields AgentV v4 reads."""
_ASSAY_SUITE_KEYS = frozenset({"judge", "targets", "regression", "plugins"})
"""assay's own top-level keys: kept in an AgentV file (AgentV would ignore them)."""
_V5_KEYS = frozenset(
    {
        *("providers", "prompts", "graders", "defaults", "environment", "model", "policy"),
        *("experiment", "repeat", "runs", "early_exit", "timeout_seconds", "threshold"),
        *("evaluate_options", "default_test", "scenarios", "derived_metrics", "output_path"),
        *("env", "nunjucks_filters", "extensions", "on_run_complete", "expected_output"),
    }
)
"""AgentV v5's top-level keys: in a document with v5's `providers` or `prompts` they are not
v4's to drop (v5 refuses an unknown top-level key; the v5 reading is another's)."""
_ASSAY_TEST_KEYS = frozenset(
    {"context", "expected_outcomes", "expected_tool_calls", "tags", "description", "simulate"}
)
"""assay's own test keys, kept likewise."""

_EXECUTION_IGNORED = {
    "cache": "AgentV's response cache switch; assay caches by default (`assay run --no-cache` "
    "or `--cache-mode` to change it)",
    "budget_usd": "AgentV stops the run past this cost; assay has no run budget (a `cost` "
    "grader bounds each case)",
    "budgetUsd": "AgentV stops the run past this cost; assay has no run budget (a `cost` "
    "grader bounds each case)",
    "fail_on_error": "assay never counts an error as a pass, and `assay run` exits non-zero on one",
    "failOnError": "assay never counts an error as a pass, and `assay run` exits non-zero on one",
}
"""Run settings of AgentV's that change no verdict assay gives: read, not applied, and said."""

_TRIAL_STRATEGIES = frozenset({"pass_at_k", "mean", "confidence_interval"})
"""AgentV's trial strategies: assay's repeat strategies of the same names (SPEC §1.4)."""


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:100] or "suite"


class _Suite(GraderRewriter):
    """Rewrites one AgentV document (or the tests of one dataset file)."""

    def __init__(self, source: SourceMap, base_dir: Path) -> None:
        super().__init__(source, base_dir)
        self.prefix: list[JSON] = []
        """Suite-level `input` messages, prepended to each test's input."""
        self.files: JSON = None
        """Suite-level `input_files`, the default of each test's."""
        self.promptless: list[JSON] = []
        """Suite-level llm-graders without a prompt: each test gets one with its criteria."""
        self.with_criteria: list[JSON] = []
        """Suite-level llm-graders whose prompt shows `{{ criteria }}`: each test gets one
        with its criteria written in."""
        self.suite_metadata: dict[str, JSON] = {}
        """Suite-level `metadata` and `governance`, inherited by every test (AgentV 4.x)."""
        self.suite_graders: list[JSON] = []
        """The suite's own graders: a test without any gets them and no implicit llm-grader
        (AgentV adds that only to a test that has no grader at all)."""

    def ignored(
        self, mapping: dict[str, JSON], path: LocPath, agentv: frozenset[str], assay: frozenset[str]
    ) -> None:
        """Drop, with a warning, the keys AgentV ignores (it warns "Unknown field ... will be
        ignored"); assay's own keys stay, so an AgentV file may use assay's features."""
        for key in [k for k in mapping if k not in agentv and k not in assay]:
            close = difflib.get_close_matches(key, sorted(agentv | assay), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            self.warn(
                (*path, key),
                f"AgentV ignores the unknown field '{key}', and so does assay{hint}",
            )
            del mapping[key]

    def unsupported(self, mapping: dict[str, JSON], path: LocPath, table: dict[str, str]) -> None:
        if "preprocessors" in mapping:
            del mapping["preprocessors"]
            self.warn((*path, "preprocessors"), PREPROCESSORS_IGNORED)
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
        for key in [k for k in data if k != "tests"]:
            data[key] = interpolate_env(data[key])
        self._suite_keys(data)
        if "tests" in data:
            try:
                tests = gather_tests(data["tests"], self.source, self.base_dir, self.warn)
            except ConfigError as exc:
                self.errors += exc.issues
            else:
                data["tests"] = interpolate_env(tests)
        if "name" not in data:
            stem = Path(self.source.default_file).name.split(".")[0]
            data["name"] = _slug(stem)
            self.warn((), f"no `name`; using '{data['name']}' from the file name")
        self._suite_execution(data)
        if "input" in data:
            self.prefix = self.messages(data.pop("input"), ("input",))
        self.files = data.pop("input_files", None)
        for key in ("assertions", "evaluators"):
            if key in data:
                data[key] = self._suite_graders(data[key], (key,))
                self.suite_graders += _list(data[key])
        self.suite_graders += [*self.promptless, *self.with_criteria]
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

    def _suite_keys(self, data: dict[str, JSON]) -> None:
        """The top level's keys in assay's terms: ignored ones said and dropped, AgentV's
        deprecated spellings renamed, the metadata every test inherits set aside."""
        self.unsupported(data, (), _UNSUPPORTED)
        self.workspace(data, ())
        v5 = "providers" in data or "prompts" in data
        self.ignored(data, (), _SUITE_KEYS, _ASSAY_SUITE_KEYS | (_V5_KEYS if v5 else set()))
        for key in _DROPPED:
            data.pop(key, None)
        data.pop("evaluator", None)  # AgentV's default grader kind: assay's is the llm-grader too
        for old, new in (("evalcases", "tests"), ("eval_cases", "tests"), ("assert", "assertions")):
            if old in data and new not in data:
                data[new] = data.pop(old)
                self.source.rename((old,), (new,))
        self.suite_metadata = _suite_metadata(data)

    def _suite_execution(self, data: dict[str, JSON]) -> None:
        execution = data.get("execution")
        if not isinstance(execution, dict):
            return
        self._run_settings(execution, ("execution",))
        self._trials(execution, ("execution",))
        self._matrix(data, execution)
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

    def _run_settings(self, execution: dict[str, JSON], where: LocPath) -> None:
        for key, why in _EXECUTION_IGNORED.items():
            if key in execution:
                self.warn((*where, key), f"`{key}` is not applied: {why}")
                del execution[key]

    def _trials(self, execution: dict[str, JSON], where: LocPath) -> None:
        """`trials: {count, strategy}` is assay's `repeat` and `repeat_strategy` (SPEC §1.4)."""
        trials = execution.pop("trials", None)
        if trials is None:
            return
        if not isinstance(trials, dict) or not isinstance(trials.get("count"), int):
            self.error((*where, "trials"), "`trials` must be a mapping with an integer `count`")
            return
        execution["repeat"] = trials["count"]
        self.source.rename((*where, "trials", "count"), (*where, "repeat"))
        strategy = trials.get("strategy")
        if strategy is not None:
            if strategy not in _TRIAL_STRATEGIES:
                self.error(
                    (*where, "trials", "strategy"),
                    f"unknown trials strategy {strategy!r}; AgentV's are pass_at_k, mean and "
                    "confidence_interval",
                )
            else:
                execution["repeat_strategy"] = strategy
        for key in ("cost_limit_usd", "costLimitUsd"):
            if key in trials:
                self.warn(
                    (*where, "trials", key),
                    "AgentV stops further trials past this cost; assay runs every repeat "
                    "(SPEC §1.4)",
                )

    def _matrix(self, data: dict[str, JSON], execution: dict[str, JSON]) -> None:
        """`execution.targets: [a, b]` runs every test on each target in AgentV; an assay run
        has one target, so this one runs on the first and the warning names the others."""
        targets = execution.pop("targets", None)
        if targets is None:
            return
        names = [t.get("name") if isinstance(t, dict) else t for t in _list(targets)]
        where = ("execution", "targets")
        if not names or not all(isinstance(n, str) and n for n in names):
            self.error(where, "`targets` must list target names (or {name: ...} mappings)")
            return
        refs = {t["name"]: (i, t) for i, t in enumerate(_list(targets)) if isinstance(t, dict)}
        for i, ref in refs.values():
            for key in set(ref) - {"name", "use_target", "hooks"}:
                self.error(
                    (*where, i, key),
                    f"unknown key `{key}` in a target entry; "
                    "AgentV's are name, use_target and hooks",
                )
        aliases = {n: r["use_target"] for n, (_, r) in refs.items() if "use_target" in r}
        if aliases:  # AgentV adds each as a target delegating to another (the lookup does)
            data[TARGET_ALIASES] = aliases
        if "target" not in execution and "target" not in data:
            execution["target"] = names[0]
            self.source.rename(where, ("execution", "target"))
        selected = data.get("target") or execution.get("target")
        if isinstance(selected, str) and "hooks" in refs.get(selected, (0, {}))[1]:
            index, ref = refs[selected]
            self._target_hooks(data, selected, ref["hooks"], (*where, index))
        rest = ", ".join(f"--target {n}" for n in names[1:])
        also = f"; run it again with {rest} for the others" if rest else ""
        self.warn(
            where,
            f"AgentV runs every test on each of {len(names)} target(s); an assay run has one "
            f"target, this one runs on '{data.get('target') or execution.get('target')}'{also}",
        )

    def _target_hooks(self, data: dict[str, JSON], name: str, hooks: JSON, where: LocPath) -> None:
        """The hooks of the target the run uses, as the workspace's: AgentV runs a target's
        hook of a phase right after the workspace's own, in the case's workspace."""
        workspace = data.get("workspace")
        rewritten = rewrite_workspace({"hooks": hooks}, where, self.base_dir, self.error, self.warn)
        given = rewritten.get("hooks") if isinstance(rewritten, dict) else None
        if not isinstance(given, dict) or not given:
            return
        if not isinstance(workspace, dict):
            self.warn(
                (*where, "hooks"),
                f"AgentV runs the hooks of target '{name}' in the case's workspace only, and this "
                "suite has no `workspace`: they are not run, in AgentV as in assay",
            )
            return
        own = dict(workspace.get("hooks") or {})
        for phase, hook in given.items():
            if phase in own:
                self.error(
                    (*where, "hooks", phase),
                    f"AgentV runs the workspace's `{phase}` hook and then the one of target "
                    f"'{name}'; assay runs one hook per phase: call both from one script",
                )
            else:
                own[phase] = hook
        workspace["hooks"] = own
        self.warn(
            (*where, "hooks"),
            f"the hooks of target '{name}' run as the workspace's (AgentV runs them after "
            "the workspace's own); --target does not change them: to run another target with "
            "its hooks, list it first in `execution.targets`",
        )

    def _suite_graders(self, specs: JSON, path: LocPath) -> JSON:
        rewritten = self.graders(specs, path)
        if not isinstance(rewritten, list):
            return rewritten
        kept = []
        for spec in rewritten:
            if _promptless(spec):
                self.promptless.append(spec)
            elif uses_criteria(spec):
                self.with_criteria.append(spec)
            else:
                kept.append(spec)
        return kept

    # -- tests -----------------------------------------------------------------------------

    def test(self, test: JSON, path: LocPath, suite_target: JSON) -> None:
        if not isinstance(test, dict):
            return
        self._test_keys(test, path)
        if test.get("mode") == "conversation":
            test.pop("mode")
        skip = self._test_execution(test, path, suite_target)
        self._input(test, path, skip)
        if is_message_list(test.get("expected_output")):
            test["expected_output"] = self._reference(test["expected_output"], path)
        if "rubrics" in test:
            test["rubrics"] = rubric_items(
                test["rubrics"], (*path, "rubrics"), self.error, self.warn
            )
        key = next((k for k in ("assertions", "evaluators", "assert") if k in test), "assertions")
        if key in test:
            test[key] = self.graders(test[key], (*path, key))
        self._turns(test, path)
        self._criteria(test, path, key, skip)

    def _test_keys(self, test: dict[str, JSON], path: LocPath) -> None:
        """A test's keys in assay's terms: ignored ones said and dropped, `vars` written in,
        AgentV's labels moved into `metadata`, which inherits the suite's."""
        self.unsupported(test, path, _UNSUPPORTED)
        self.workspace(test, path)
        self.ignored(test, path, _TEST_KEYS, _ASSAY_TEST_KEYS)
        if "expected_outcome" in test and "criteria" not in test:
            test["criteria"] = test.pop("expected_outcome")
            self.source.rename((*path, "expected_outcome"), (*path, "criteria"))
        test.pop("evaluator", None)  # AgentV's default grader kind: assay's is the llm-grader too
        variables = test.pop("vars", None)
        if isinstance(variables, dict):
            for key in ("input", "criteria", "expected_output", "input_files", "turns"):
                if key in test:
                    test[key] = substitute_vars(test[key], variables)
        own = test.get("metadata", {})
        if not isinstance(own, dict):
            return  # left for validation to refuse
        meta = dict(own)
        if isinstance(variables, dict):
            meta.setdefault("vars", variables)
        for key in ("conversation_id", "suite"):
            if key in test:
                meta[key] = test.pop(key)
        meta = merge_metadata(meta, self.suite_metadata)
        if meta or "metadata" in test:
            test["metadata"] = meta

    def _test_execution(self, test: dict[str, JSON], path: LocPath, suite_target: JSON) -> bool:
        execution = test.get("execution")
        if not isinstance(execution, dict):
            return False
        where = (*path, "execution")
        self._run_settings(execution, where)
        if "trials" in execution:
            self.warn((*where, "trials"), "AgentV reads `trials` of the suite only; so does assay")
            execution.pop("trials")
        if "targets" in execution:
            self.error(
                (*where, "targets"),
                "assay runs one target per run; run this test in a suite of its own per target",
            )
        target = execution.pop("target", None)
        if target is not None and target != suite_target:  # AgentV's loaders never read it
            self.warn(
                (*where, "target"),
                f"AgentV ignores a test's `execution.target` ('{target}'): the test runs on "
                "the suite's target, in AgentV as in assay; remove it, or run the test in a "
                "suite of its own with --target",
            )
        for key in ("evaluators", "assertions"):
            if key in execution:
                moved = self.graders(execution.pop(key), (*where, key))
                test["assertions"] = _list(test.get("assertions")) + _list(moved)
        return execution.get("skip_defaults") is True

    def _input(self, test: dict[str, JSON], path: LocPath, skip: bool) -> None:
        where = (*path, "input_files") if "input_files" in test else ("input_files",)
        files = test.pop("input_files", None if skip else self.files)
        if isinstance(files, list):
            files = [f for i, f in enumerate(files) if self._exists(f, (*where, i))]
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
        if all(isinstance(b, dict) and "value" not in b and "type" in b for b in content):
            return content  # assay's own content parts: the suite model checks them
        parts: list[str] = []
        images: dict[int, JSON] = {}
        for i, block in enumerate(content):
            kind = block.get("type") if isinstance(block, dict) else None
            value = block.get("value") if isinstance(block, dict) else None
            if kind == "text" and isinstance(value, str):
                parts.append(value)
            elif kind == "file" and isinstance(value, str) and image_type(value) is not None:
                images[len(parts)] = self._image(value, str(image_type(value)), (*path, i, "value"))
                parts.append("")
            elif kind == "file" and isinstance(value, str):
                parts.append(self._file(value, (*path, i, "value")))
            else:
                self.error(
                    (*path, i),
                    "a content block must be {type: text, value: ...} or {type: file, value: "
                    "path} (AgentV), or all blocks assay content parts ({type: text, text}, "
                    "{type: image_url, image_url: {url}}, {type: input_audio, input_audio: "
                    "{data, format}})",
                )
        if images:  # an image file: the message keeps its parts, texts as text parts
            return [images.get(i, {"type": "text", "text": text}) for i, text in enumerate(parts)]
        return "\n\n".join(parts)

    def _image(self, name: str, media: str, path: LocPath) -> JSON:
        """An image input file (found as AgentV finds input files) as an `image_url` part with
        a `data:` URL; a located error when it is missing or over `MAX_IMAGE_BYTES`."""
        file = self.roots.find(name)
        if file is None:
            self._not_found(name, path)
            return {"type": "text", "text": ""}
        try:
            size = file.stat().st_size
            if size > MAX_IMAGE_BYTES:
                self.error(
                    path,
                    f"image '{name}' is {size:,} bytes, over the {MAX_IMAGE_BYTES:,}-byte limit "
                    "for an inlined image; make it smaller, or give it by https:// URL",
                )
                return {"type": "text", "text": ""}
            data = base64.b64encode(file.read_bytes()).decode("ascii")
        except OSError as exc:
            self.error(path, f"cannot read image '{name}' ({file}): {exc}")
            return {"type": "text", "text": ""}
        return {"type": "image_url", "image_url": {"url": f"data:{media};base64,{data}"}}

    def _exists(self, name: JSON, path: LocPath) -> bool:
        """Whether an `input_files` entry names a file; an error where it is written if not."""
        if not isinstance(name, str) or self.roots.find(name) is not None:
            return True
        self._not_found(name, path)
        return False

    def _not_found(self, name: str, path: LocPath) -> None:
        self.error(
            path,
            f"input file '{name}' not found (looked at {self.roots.looked_at(name)}); "
            "fix the path (relative to the eval file, a parent up to the repository root, "
            "or the working directory)",
        )

    def _file(self, name: str, path: LocPath) -> str:
        """An input file's text, found as AgentV finds it (see assay.interop.agentv._files)."""
        file = self.roots.find(name)
        if file is None:
            self._not_found(name, path)
            return ""
        try:
            text = file.read_text(encoding="utf-8").replace("\r\n", "\n")
        except (OSError, UnicodeDecodeError) as exc:
            self.error(path, f"cannot read input file '{name}' ({file}): {exc}")
            return ""
        return f'<file path="{name.lstrip("/")}">\n{text}\n</file>'

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
        preamble = test.pop("input", None)
        if preamble is not None and turns and isinstance(turns[0], dict):
            # AgentV sends a conversation's `input` (a system prompt, a scripted history)
            # before its first turn: assay's first turn carries it as messages
            first = turns[0].get("input")
            where = (*path, "turns", 0, "input")
            if isinstance(first, list) and not is_message_list(first):
                first = self.content(first, where)  # content blocks: the user's text
            said = self.messages(first, where) if first is not None else []
            turns[0]["input"] = [*self.messages(preamble, (*path, "input")), *said]
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
            if is_message_list(turn.get("input")):
                turn["input"] = self.messages(turn["input"], (*where, "input"))
            elif isinstance(turn.get("input"), list | dict):
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
        showing = [] if skip else list(self.with_criteria)
        if showing:
            test[key] = own = [*own, *showing]
        readers = [g for g in own if uses_criteria(g)]
        if readers:
            text = criteria if isinstance(criteria, str) else ""
            test[key] = own = [fill_criteria(g, text) if uses_criteria(g) else g for g in own]
        promptless = [g for g in own if isinstance(g, dict) and g.get("type") == "llm-grader"]
        promptless = [g for g in promptless if _promptless(g)]
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
        elif (
            not own
            and (skip or not self.suite_graders)
            and "rubrics" not in test
            and "turns" not in test
        ):
            test[key] = [{"type": "llm-grader", "name": "criteria", "prompt": criteria}]
            self.source.entries.setdefault((*path, key), self.source.locate((*path, "criteria")))
        elif (
            not promptless
            and not readers
            and not any(
                isinstance(g, dict) and g.get("type") == "code-grader"
                for g in [*own, *([] if skip else self.suite_graders)]
            )
        ):  # a code grader gets the criteria on stdin (AgentV's contract)
            self.warn(
                (*path, "criteria"),
                "no grader of this test reads `criteria`, so it is not graded; add "
                "`type: llm-grader` to its assertions, or remove it",
            )
            test.setdefault("description", criteria)


def _list(value: JSON) -> list[JSON]:
    return list(value) if isinstance(value, list) else []


def _suite_metadata(data: dict[str, JSON]) -> dict[str, JSON]:
    """Top-level `metadata`, with top-level `governance` over `metadata.governance` (AgentV
    reads the two as one payload that every test inherits); both leave the document."""
    metadata = data.pop("metadata", None)
    payload = dict(metadata) if isinstance(metadata, dict) else {}
    governance = data.pop("governance", None)
    if isinstance(governance, dict):
        payload["governance"] = governance
    return payload


def merge_metadata(test: dict[str, JSON], suite: dict[str, JSON]) -> dict[str, JSON]:
    """A test's metadata over the suite's, as AgentV merges them: lists concatenate suite
    first without repeats, mappings merge recursively, the test's scalars win."""
    out = dict(test)
    for key, value in suite.items():
        mine = out.get(key)
        if isinstance(value, list) and isinstance(mine, list):
            seen: dict[str, JSON] = {}
            for item in [*value, *mine]:
                seen.setdefault(item if isinstance(item, str) else json.dumps(item), item)
            out[key] = list(seen.values())
        elif isinstance(value, dict) and isinstance(mine, dict):
            out[key] = merge_metadata(mine, value)
        elif key not in out:
            out[key] = value
    return out


def _announce(source: SourceMap, marker: LocPath) -> ConfigIssue:
    shown = ".".join(str(p) for p in marker)
    why = f"`{shown}` is AgentV's" if marker else "it has no `name`, which AgentV allows"
    return source.issue(
        marker,
        f"read as an AgentV eval file ({why}); AgentV's forms are rewritten to assay's, see "
        "docs/migrating-from-agentv.md",
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
    if marker is None and is_agentv_dataset(data.get("tests"), base_dir):
        marker = ("tests",)
    if marker is None:
        return [], []
    rewriter = _Suite(source, base_dir)
    rewriter.suite(data)
    differences = semantic_warnings(data, source)
    return [_announce(source, marker), *rewriter.warnings, *differences], rewriter.errors


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
    from assay.interop.agentv._v5 import V5Reader  # v5's reader (and promptfoo's mapping) on use

    reader = V5Reader(source, base_dir)
    mixed = mixed_marker(data)
    if mixed:
        reader.mixed(marker, mixed)
        return [announce], reader.errors
    reader.convert(data)
    rewriter = _Suite(source, base_dir)
    rewriter.suite(data)
    tests = data.get("tests")
    for where, workspace in reader.workspaces.items():
        if where == ():
            data["workspace"] = workspace
        elif isinstance(tests, list) and int(where[1]) < len(tests):
            test = tests[int(where[1])]
            if isinstance(test, dict):
                test["workspace"] = workspace
    return [announce, *reader.warnings, *rewriter.warnings], [*reader.errors, *rewriter.errors]


class AgentVTests:
    """AgentV rewriting of a dataset file's tests, one test at a time as they are read.

    A dataset is AgentV's when any of its tests uses a form only AgentV has; then every test
    is rewritten. The reader looks for the first marker with `marker`, and when tests before
    it went by unrewritten it reads the dataset again, rewriting from the first test.
    """

    def __init__(
        self,
        source: SourceMap,
        base_dir: Path,
        announce: ConfigIssue,
        suite_target: JSON = None,
        suite_graders: Sequence[JSON] = (),
    ) -> None:
        """`source` locates the test being rewritten (its paths start with the test's index);
        `announce` is the warning `announcement` made where the dataset first uses AgentV;
        `suite_graders` are the suite's own graders, which its tests get."""
        self._rewriter = _Suite(source, base_dir)
        self._rewriter.suite_graders = list(suite_graders)
        self._target = suite_target
        self._announce = announce

    @staticmethod
    def marker(test: JSON, index: int) -> LocPath | None:
        """Where test `index` uses a form only AgentV has (`(index, key)`), or None."""
        key = one_test_marker(test) if isinstance(test, dict) else None
        return None if key is None else (index, key)

    @staticmethod
    def announcement(source: SourceMap, marker: LocPath) -> ConfigIssue:
        """The warning that the dataset is read as AgentV's, located at `marker`."""
        return _announce(source, marker)

    def rewrite(self, test: JSON, index: int) -> None:
        """Rewrite test `index` in place."""
        if isinstance(test, dict):
            for key, value in test.items():
                test[key] = interpolate_env(value)
        self._rewriter.test(test, (index,), self._target)

    @property
    def warnings(self) -> list[ConfigIssue]:
        """The announcement, then every rewrite's warnings in order."""
        return [self._announce, *self._rewriter.warnings]

    @property
    def errors(self) -> list[ConfigIssue]:
        """Every rewrite's errors in order."""
        return self._rewriter.errors


def _promptless(spec: JSON) -> bool:
    """An llm-grader without a prompt (nor a program printing one): it judges the criteria."""
    return (
        isinstance(spec, dict)
        and spec.get("type") == "llm-grader"
        and "prompt" not in spec
        and "prompt_command" not in spec
    )
