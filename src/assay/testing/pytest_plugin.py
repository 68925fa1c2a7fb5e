"""The pytest plugin (entry point `pytest11: assay`): eval suites as tests, and `assay_grade`.

`pytest evals/` collects every case of every `*.eval.yaml` / `*.eval.yml` file under the paths
given on the command line as an item `<file>::<suite>::<case id>`. Each suite runs once, the
first time one of its items runs, through `assay.evaluate_async` (the one async core, with the
suite's concurrency) and only for the items left after `-k`/`-m` deselection; every item then
reports its case: pass → passed, fail and borderline → failed with the misses, error → a
pytest error.

Collection is opt-in by path so that installing assay never changes an existing test run:
eval files are collected when they lie under a path given on the command line (the default,
`assay_collect = args`), everywhere pytest looks (`always`, e.g. with `testpaths`), or never.
A bare `pytest` in a project whose suites call paid models does not start calling them.

This module imports nothing from assay at import time: pytest loads it in every session of
every project that has assay installed, and most of them have no eval files.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr, TracebackStyle

    from assay.api import EvalConfig
    from assay.config import LoadedSuite
    from assay.results import JSON, CaseResult, RunResult

__all__ = ["EvalCase", "EvalFile", "EvalSuite", "GradeFunction"]

_SUFFIXES = (".eval.yaml", ".eval.yml")
_COLLECT_MODES = ("args", "always", "never")
_MARKER_NAME = re.compile(r"[A-Za-z][\w.-]*")
"""Tags that can be pytest marker names (and `-m` expression words); others stay keywords."""
_MAX_OUTPUT_SHOWN = 300

GradeFunction = Callable[..., "CaseResult"]
"""The `assay_grade` fixture: `assay_grade(output, graders=[...], expected=..., ...)`."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("assay", "assay eval suites")
    group.addoption(
        "--assay-collect",
        choices=_COLLECT_MODES,
        default=None,
        help="Which *.eval.yaml files become tests: those under paths given on the command "
        "line (args, the default), every one pytest finds (always), or none (never).",
    )
    group.addoption(
        "--assay-threshold",
        type=float,
        default=None,
        metavar="T",
        help="Case pass threshold (0–1) over every config level, like `assay run --threshold`.",
    )
    group.addoption(
        "--assay-store",
        nargs="?",
        const="",
        default=None,
        metavar="PATH_OR_URL",
        help="Store the runs (default: kept in memory). Without a value: the project's store, "
        "as `assay run` uses.",
    )
    group.addoption(
        "--assay-cache-mode",
        choices=("use", "off", "record", "replay"),
        default="use",
        help="Response cache mode for model-backed targets and judges (default: use).",
    )
    parser.addini(
        "assay_collect",
        help="Which *.eval.yaml files become tests: args (default), always or never.",
        default="args",
    )


def pytest_configure(config: pytest.Config) -> None:
    threshold = config.getoption("assay_threshold")
    if threshold is not None and not 0.0 <= threshold <= 1.0:
        raise pytest.UsageError(f"--assay-threshold {threshold}: give a number from 0 to 1")
    mode = _collect_mode(config)
    if mode not in _COLLECT_MODES:
        raise pytest.UsageError(
            f"assay_collect = {mode!r} in the pytest config: use one of {', '.join(_COLLECT_MODES)}"
        )


def _collect_mode(config: pytest.Config) -> str:
    chosen = config.getoption("assay_collect")
    return str(chosen if chosen is not None else config.getini("assay_collect")).strip()


_GIVEN = pytest.StashKey[list[Path]]()


def _given_paths(config: pytest.Config) -> list[Path]:
    """The paths named on the command line (without `::` node selectors); none when pytest
    chose them itself (`testpaths` or the current directory)."""
    if _GIVEN not in config.stash:
        given: list[Path] = []
        if config.args_source == pytest.Config.ArgsSource.ARGS:
            root = config.invocation_params.dir
            given = [(root / arg.split("::", 1)[0]).resolve() for arg in config.args]
        config.stash[_GIVEN] = given
    return config.stash[_GIVEN]


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> EvalFile | None:
    if not file_path.name.endswith(_SUFFIXES):
        return None
    mode = _collect_mode(parent.config)
    if mode == "never":
        return None
    if mode == "args":
        resolved = file_path.resolve()
        given = _given_paths(parent.config)
        if not any(resolved == p or p in resolved.parents for p in given):
            return None
    return EvalFile.from_parent(parent, path=file_path)


class EvalFile(pytest.File):
    """A suite file: it holds one suite."""

    def collect(self) -> Iterator[EvalSuite]:
        from assay.config import load_suite
        from assay.errors import UserError

        try:
            loaded = load_suite(self.path)
        except UserError as exc:
            raise self.CollectError(str(exc)) from None
        yield EvalSuite.from_parent(self, name=loaded.suite.name, loaded=loaded)


class EvalSuite(pytest.Collector):
    """One suite; runs once for all of its selected cases and hands each its result."""

    def __init__(self, *, loaded: LoadedSuite, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.loaded = loaded
        self._results: dict[str, CaseResult] | None = None
        self._failure: str | None = None

    def collect(self) -> Iterator[EvalCase]:
        for test in self.loaded.suite.tests:
            item = EvalCase.from_parent(self, name=test.id)
            for tag in test.tags:
                if _MARKER_NAME.fullmatch(tag):
                    _register_marker(self.config, tag)
                    item.add_marker(tag)
                else:
                    item.extra_keyword_matches.add(tag)
            yield item

    def result_for(self, case: EvalCase) -> CaseResult:
        """The case's result, running the suite for every selected case on first call.

        Raises:
            pytest.fail.Exception: the suite could not run (config, target or store error).
        """
        if self._results is None and self._failure is None:
            self._run()
        if self._failure is not None:
            pytest.fail(
                f"[error] suite '{self.name}' could not run: {self._failure}", pytrace=False
            )
        assert self._results is not None
        return self._results[case.name]

    def _run(self) -> None:
        import glob

        from assay.api import evaluate
        from assay.errors import UserError

        selected = [item.name for item in self.session.items if item.parent is self]
        config = _eval_config(self.config).model_copy(
            update={"cases": tuple(glob.escape(case_id) for case_id in selected)}
        )
        try:
            run = evaluate(self.loaded, config=config)
        except UserError as exc:
            self._failure = str(exc)
            return
        self._results = {result.case_id: result for result in run.results}
        self.config.stash.setdefault(_RUNS, []).append(run)


_RUNS = pytest.StashKey[list["RunResult"]]()
"""Every suite run of the session, in the order they ran."""
_MARKERS = pytest.StashKey[set[str]]()


def _register_marker(config: pytest.Config, tag: str) -> None:
    """Declare a tag as a marker so `--strict-markers` accepts it and `--markers` lists it."""
    known = config.stash.setdefault(_MARKERS, set())
    if tag not in known:
        known.add(tag)
        config.addinivalue_line("markers", f"{tag}: assay test case tag")


def _eval_config(config: pytest.Config) -> EvalConfig:
    from assay.api import EvalConfig
    from assay.cache import CacheMode

    store = config.getoption("assay_store")
    return EvalConfig(
        threshold=config.getoption("assay_threshold"),
        store=False if store is None else (store or None),
        cache_mode=CacheMode(config.getoption("assay_cache_mode")),
    )


class CaseNotPassed(Exception):
    """A case graded `fail` or `borderline`; the message is its explanation."""


class EvalCase(pytest.Item):
    """One test case of a suite."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.result: CaseResult | None = None
        """The graded case, once the suite has run."""

    @property
    def suite(self) -> EvalSuite:
        """The suite collector this case belongs to."""
        assert isinstance(self.parent, EvalSuite)
        return self.parent

    def setup(self) -> None:
        result = self.suite.result_for(self)
        self.result = result
        self.user_properties += [("assay_verdict", result.verdict), ("assay_score", result.score)]
        if result.verdict == "error":
            # Raised in setup, so pytest reports an error (not a failure): the case could
            # not be graded, which says nothing about the system's quality (SPEC §1).
            pytest.fail(f"[error] {_explain(result)}", pytrace=False)

    def runtest(self) -> None:
        assert self.result is not None
        if self.result.verdict in ("fail", "borderline"):
            raise CaseNotPassed(_explain(self.result))

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: TracebackStyle | None = None,
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, CaseNotPassed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.suite.name}::{self.name}"


def _explain(result: CaseResult) -> str:
    """A few readable lines: the verdict, why, and the output."""
    lines = [_headline(result)]
    if result.error is not None:
        lines.append(f"  {result.error.message}")
    for graded in result.grader_results:
        label = graded.name if graded.name == graded.type else f"{graded.name} ({graded.type})"
        if graded.error is not None:
            lines.append(f"  {label} errored: {graded.error.type}: {graded.error.message}")
        elif graded.verdict == "fail":
            why = "; ".join(graded.misses) or graded.reasoning or "no reason given"
            lines.append(f"  ✗ {label} {graded.score or 0.0:.2f}: {why}")
    for outcome in result.expected_outcome_results:
        if not outcome.passed:
            lines.append(f"  ✗ expected outcome: {outcome.outcome} — {outcome.justification}")
    if result.output is not None:
        shown = result.output
        if len(shown) > _MAX_OUTPUT_SHOWN:
            shown = shown[:_MAX_OUTPUT_SHOWN] + "…"
        lines.append(f"  output: {shown!r}")
    return "\n".join(lines)


def _headline(result: CaseResult) -> str:
    if result.score is None:
        return f"{result.case_id}: {result.verdict}"
    band = f", borderline from {result.borderline:.2f}" if result.borderline is not None else ""
    return (
        f"{result.case_id}: {result.verdict} — score {result.score:.2f}, "
        f"threshold {result.threshold:.2f}{band}"
    )


@pytest.fixture
def assay_grade(request: pytest.FixtureRequest) -> GradeFunction:
    """Grade an output inside an ordinary test: `assay_grade(output, graders=[...])`.

    Returns the case result (`score`, `verdict`, `grader_results`), scored exactly as a suite
    case is; `--assay-threshold` applies. The keyword arguments are those of `assay.grade`.
    """
    from assay.api import grade

    settings = _eval_config(request.config)

    def assay_grade(
        output: str | Mapping[str, JSON],
        *,
        graders: Sequence[Any] = (),
        expected: JSON = None,
        **fields: Any,
    ) -> CaseResult:
        config = fields.pop("config", None) or settings
        return grade(output, graders=graders, expected=expected, config=config, **fields)

    return assay_grade
