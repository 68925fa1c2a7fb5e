"""A suite's tests read, rewritten, validated and checked one at a time at load.

Each valid test is kept only as its compact JSON text inside the suite document
(`SuiteTests`), so neither the raw data nor the validated models of every test are held at
once. Problems are gathered in the order the whole-suite loader reported them: the first kind
that has any (rewrite errors, then validation errors, then cross-field problems) is raised.
"""

from __future__ import annotations

import io
import json
import json.encoder
import uuid
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from assay.config._aliases import GRADER_KEYS_REWRITTEN, GRADER_TYPE_ALIASES, rewrite_test
from assay.config._checks import SuiteChecker
from assay.config._datasets import iter_tests
from assay.config._errors import issues_from_validation
from assay.config._suite import Suite, SuiteTests, TestCase
from assay.config._yaml import Located, LocPath, SourceMap
from assay.errors import ConfigError, ConfigIssue
from assay.interop.agentv import GRADER_MARKER_KEYS, AgentVTests
from assay.results import JSON

__all__ = ["DocumentWriter", "TestsReader", "read_dataset"]


def _compact_encoder() -> Callable[[JSON], str]:
    """JSON text as the suite document has it: what `JSONEncoder(ensure_ascii=False,
    separators=(",", ":")).encode` gives, through one C encoder made once rather than one
    made per call (`json.dumps` with options also makes a `JSONEncoder` per call). For the
    5,000 tests of `benchmarks/runner_bench.write_suite`, ~2.3 µs a test became ~1.4 µs.

    The C encoder is made without the circular-reference check: a test reaching the document
    has been validated, which refuses cyclic data.
    """
    encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
    make = getattr(json.encoder, "c_make_encoder", None)
    text = json.encoder.encode_basestring
    if make is None:  # an interpreter without the C accelerator
        return encoder.encode
    try:
        chunks = make(None, encoder.default, text, None, ":", ",", False, False, True)
    except TypeError:  # a C encoder whose arguments differ from CPython 3.11-3.13's
        return encoder.encode

    def compact(value: JSON) -> str:
        return text(value) if isinstance(value, str) else "".join(chunks(value, 0))

    return compact


_compact = _compact_encoder()


class DocumentWriter:
    """The suite document (compact JSON text) written around its tests as they come.

    The text is the document the whole-suite loader dumped in one go, byte for byte; each
    test's place in it is recorded so `SuiteTests` can read the test back.
    """

    def __init__(self, head: dict[str, JSON]) -> None:
        """`head` is the suite document; its `tests` value is replaced by the tests written."""
        marker = f"assay-tests-{uuid.uuid4().hex}"  # cannot occur in the suite's own text
        before, self._after = _compact({**head, "tests": marker}).split(_compact(marker), 1)
        self._out = io.StringIO()
        self._out.write(before + "[")
        self._bounds = array("q", [len(before) + 1])
        self._with_execution = array("q")

    def add(self, test: JSON, has_execution: bool) -> None:
        """Append one validated test."""
        if len(self._bounds) > 1:
            self._out.write(",")
        text = _compact(test)
        self._out.write(text)
        self._bounds.append(self._bounds[-1] + len(text) + 1)
        if has_execution:
            self._with_execution.append(len(self._bounds) - 2)

    def finish(self) -> tuple[str, SuiteTests]:
        """The document and its tests."""
        self._out.write("]" + self._after)
        document = self._out.getvalue()
        self._out.close()
        return document, SuiteTests(document, self._bounds, self._with_execution)


class _ReadAgain(Exception):
    """A dataset test uses AgentV forms after tests that were read without rewriting them."""

    def __init__(self, announce: ConfigIssue) -> None:
        super().__init__(announce.message)
        self.announce = announce


class TestsReader:
    """Validates, checks and writes tests one at a time, gathering the problems."""

    def __init__(
        self,
        suite: Suite | None,
        head: dict[str, JSON],
        invalid_head: list[ConfigIssue],
        validate: bool,
        base_dir: Path,
    ) -> None:
        """`suite` is the validated suite without its tests (None if `invalid_head` has its
        errors); `validate` is False when the suite's own problems hide its tests'."""
        self.checker = SuiteChecker(suite, base_dir) if suite is not None else None
        self.writer = DocumentWriter(head) if suite is not None else None
        self.invalid = list(invalid_head)
        self.validate = validate
        self.warnings: list[ConfigIssue] = []
        self.rewrite_errors: list[ConfigIssue] = []

    def add(self, index: int, test: JSON, source: SourceMap) -> None:
        """Validate, check and write test `index`; `source` locates its `tests[index]` paths."""
        if not self.validate:
            return
        try:
            # `model_validate` without its wrapper (~0.5 µs a test, ~5% of a dataset's load)
            model: TestCase = TestCase.__pydantic_validator__.validate_python(test)
        except ValidationError as exc:
            self.invalid += issues_from_validation(exc, test, source, ("tests", index))
            return
        if self.checker is None or self.writer is None or self.invalid:
            return  # only validation errors will be reported
        self.checker.add(model, index, source)
        self.writer.add(test, model.execution is not None)

    def read_inline(self, tests: list[JSON], source: SourceMap) -> None:
        """The tests written in the suite document (already rewritten with it)."""
        for index, test in enumerate(tests):
            tests[index] = None  # the loader's own copy: let each test go once read
            self.add(index, test, source)

    def finish(self, source: SourceMap) -> tuple[str, SuiteTests, list[ConfigIssue]]:
        """The document, its tests and where they need the default judge.

        Raises:
            ConfigError: the first kind of problem found (see the module docstring).
        """
        for problems in (self.rewrite_errors, self.invalid):
            if problems:
                raise ConfigError(problems)
        assert self.checker is not None and self.writer is not None  # a valid suite has both
        issues = self.checker.issues + self.checker.suite_issues(source)
        if issues:
            raise ConfigError(issues)
        document, tests = self.writer.finish()
        return document, tests, self.checker.needs_judge(source)


@dataclass
class _IndexedTest(SourceMap):
    """One dataset test's locations as `iter_tests` gives them (keyed by path within the
    test) seen as keyed `[index].key`, as the rewrites locate them, without copying them
    under the index for every test."""

    index: int = 0

    def nearest(self, path: LocPath) -> Located | None:
        """The location of `path` or of its nearest located ancestor; None if neither is."""
        if path and path[0] == self.index:
            own = self.entries
            for end in range(len(path), 0, -1):
                found = own.get(path[1:end])
                if found is not None:
                    return found
        return None

    def locate(self, path: LocPath) -> Located:
        """The location of `path`, or of its nearest located ancestor."""
        found = self.nearest(path)
        return Located(self.default_file, None) if found is None else found

    def rename(self, old: LocPath, new: LocPath) -> None:
        """Move the locations of `old` and everything under it to `new` (a renamed key of
        this test: both start with its index)."""
        if old[:1] != (self.index,):
            return  # nothing of this test is under `old`
        assert new[:1] == (self.index,), "a test's key is renamed within the test"
        SourceMap(self.entries).rename(old[1:], new[1:])


@dataclass
class _TestOverSuite(SourceMap):
    """One dataset test's locations (`tests[i]...`) over the suite file's (everything else),
    as if the test's were grafted into the suite's map, without copying either.

    `test` is the map the rewrites locate the test in (`[i]...`): looked up in place rather
    than copied under `tests` for every test.
    """

    suite: SourceMap = field(default_factory=SourceMap)
    test: SourceMap = field(default_factory=SourceMap)

    def locate(self, path: LocPath) -> Located:
        """The location of `path`, or of its nearest located ancestor."""
        if path and path[0] == "tests":
            test = self.test
            if isinstance(test, _IndexedTest):
                found = test.nearest(path[1:])
                if found is not None:
                    return found
            else:
                for end in range(len(path), 0, -1):
                    found = test.entries.get(path[1:end])
                    if found is not None:
                        return found
        return self.suite.locate(path)


_PLAIN_TEST_KEYS = frozenset(
    {
        "id",
        "description",
        "tags",
        "metadata",
        "context",
        "expected_context_ids",
        "expected_tool_calls",
        "expected_outcomes",
    }
)
"""Test keys that neither AgentV's detection (`AgentVTests.marker`) nor the deprecated
spellings (`assay.config._aliases`) look at, whatever their value."""
_NOT_PLAIN_GRADER_KEYS = GRADER_MARKER_KEYS | GRADER_KEYS_REWRITTEN
_NOT_PLAIN_GRADER_TYPES = frozenset({"icontains-any", "icontains-all", "rubrics"})


def _plain_test(test: JSON) -> bool:
    """Whether a dataset test is in assay's canonical form in a way both AgentV's detection
    and the alias rewrites would find nothing in: an `input` text, an `expected_output` that
    is not a list, graders whose keys and type neither marks AgentV nor is deprecated, and
    keys from `_PLAIN_TEST_KEYS`. Anything else (False) takes the full checks; this one walk
    costs a quarter of those two (a 100,000-line dataset asks it of every line)."""
    if type(test) is not dict:
        return False
    for key, value in test.items():
        if key in _PLAIN_TEST_KEYS:
            continue
        if key == "input":
            if type(value) is not str:
                return False
        elif key == "expected_output":
            if type(value) is list:
                return False
        elif key == "assertions" and type(value) is list:
            if not all(_plain_grader(spec) for spec in value):
                return False
        else:
            return False
    return True


def _plain_grader(spec: JSON) -> bool:
    """A grader mapping `_plain_test` can vouch for."""
    if type(spec) is not dict or not _NOT_PLAIN_GRADER_KEYS.isdisjoint(spec):
        return False
    kind = spec.get("type")
    if type(kind) is not str or "_" in kind:
        return False
    if kind in _NOT_PLAIN_GRADER_TYPES or kind in GRADER_TYPE_ALIASES:
        return False
    if kind == "llm-grader" and "prompt" not in spec:
        return False
    required = spec.get("required")
    return required is None or type(required) is bool


def read_dataset(
    new_reader: Callable[[], TestsReader],
    spec: str,
    source: SourceMap,
    base_dir: Path,
    suite_target: JSON,
    *,
    suite_graders: Sequence[JSON] = (),
) -> TestsReader:
    """Read `tests: <path or glob>` into a reader from `new_reader`; the files are read again
    into a fresh one when they turn out to be AgentV's after their first test. `suite_graders`
    (the suite's `assertions`) tell AgentV tests that they have graders without their own."""

    def read(announce: ConfigIssue | None) -> TestsReader:
        reader = new_reader()
        _read_files(
            reader,
            spec,
            source=source,
            base_dir=base_dir,
            suite_target=suite_target,
            suite_graders=suite_graders,
            announce=announce,
        )
        return reader

    try:
        return read(None)
    except _ReadAgain as again:
        return read(again.announce)


def _read_files(
    reader: TestsReader,
    spec: str,
    *,
    source: SourceMap,
    base_dir: Path,
    suite_target: JSON,
    suite_graders: Sequence[JSON],
    announce: ConfigIssue | None,
) -> None:
    """Read, rewrite and add the tests of dataset files; raises `_ReadAgain` when AgentV
    forms show up after the first test."""
    origin = source.locate(("tests",))
    # The test being read, keyed `[index].key` for the rewrites (as their messages have
    # always said), and the same under `tests` for validation and checks. AgentV's rewrites
    # write into the map, so they get a copy keyed so (`here`); the others read the test's
    # own map in place (`indexed`).
    here = SourceMap(default_file=origin.file)
    indexed = _IndexedTest(default_file=origin.file)
    agentv = (
        AgentVTests(here, base_dir, announce, suite_target, suite_graders) if announce else None
    )
    located = _TestOverSuite(suite=source, test=indexed if agentv is None else here)
    warnings: list[ConfigIssue] = []
    errors: list[ConfigIssue] = []
    for index, (test, entries) in enumerate(iter_tests(spec, base_dir, origin)):
        plain = agentv is None and _plain_test(test)  # nothing to detect or rewrite
        if agentv is None:
            indexed.index, indexed.entries = index, entries
            marker = None if plain else AgentVTests.marker(test, index)
            if marker is not None:
                here.entries = {(index, *path): where for path, where in entries.items()}
                found = AgentVTests.announcement(here, marker)
                if index:
                    raise _ReadAgain(found)
                agentv = AgentVTests(here, base_dir, found, suite_target, suite_graders)
                located.test = here
        else:
            here.entries = {(index, *path): where for path, where in entries.items()}
        if agentv is not None:
            agentv.rewrite(test, index)
        if not plain:
            warned, failed = rewrite_test(test, indexed if agentv is None else here, (index,))
            warnings += warned
            errors += failed
        if errors or (agentv is not None and agentv.errors):
            continue  # rewrite errors are reported alone
        reader.add(index, test, located)
    reader.warnings = [*(agentv.warnings if agentv else ()), *warnings]
    reader.rewrite_errors = [*(agentv.errors if agentv else ()), *errors]
