"""Load and validate suites and the project config, reporting every problem with its location."""

from __future__ import annotations

import copy
import dataclasses
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from assay.config._aliases import rewrite_project, rewrite_suite
from assay.config._datasets import display_path
from assay.config._errors import issues_from_validation
from assay.config._expansions import Expansions, recording
from assay.config._plugins import require_plugins
from assay.config._project_store import PROJECT_FILE, find_project, resolve_store
from assay.config._stream import TestsReader, read_dataset
from assay.config._suite import ProjectConfig, Suite, SuiteTests
from assay.config._yaml import LocPath, SourceMap, format_path, load_yaml
from assay.errors import ConfigError, ConfigIssue
from assay.graders import Grader
from assay.interop.agentv._detect import agentv_marker, v5_marker
from assay.interop.agentv._rewrite import rewrite_agentv_suite
from assay.interop.agentv._tests import is_agentv_dataset
from assay.results import JSON

if TYPE_CHECKING:
    from assay.interop.agentv._target_lookup import AgentVTargetLookup

__all__ = [
    "PROJECT_FILE",
    "SUITE_SUFFIXES",
    "LoadedProject",
    "LoadedSuite",
    "discover_suite_files",
    "find_project",
    "load_project",
    "load_suite",
    "parse_suite",
]

SUITE_SUFFIXES = (".eval.yaml", ".eval.yml")


@dataclass(frozen=True)
class LoadedSuite:
    """A validated suite with where it came from and the deprecation warnings it raised.

    The line map used for error messages is not kept: once the suite is valid it is not
    needed, and for large suites it is the biggest part of the loaded data.
    """

    suite: Suite
    base_dir: Path
    """Directory that relative paths in the suite resolve against."""
    display: str
    """The suite file as users typed it (or `<python>` for suites built in code)."""
    warnings: list[ConfigIssue] = field(default_factory=list)
    document: str = "null"
    """The canonical suite document as compact JSON text, snapshotted into each run.

    Text rather than parsed data: at 20,000 tests the parsed form is ~14 MB of dicts held for
    the whole run, the text ~2 MB, and the store embeds it without parsing it again. The
    suite's `tests` (`SuiteTests`) are read back from this same text."""
    needs_judge: tuple[ConfigIssue, ...] = ()
    """Where the suite relies on the default judge (judged graders without their own model,
    expected outcomes): configuration errors if the run resolves no judge."""
    expansions: Expansions = field(default_factory=Expansions)
    """The `${VAR}` values loading put into the suite (its file and dataset files): run
    snapshots store the suite with them as written (`Expansions.redact`)."""
    key_lines: Mapping[str, int] = field(default_factory=dict)
    """The lines of `target`, each `targets.<name>`, `judge` and `judge.api_key_env`: where a
    problem found when the run is planned (a python target's missing function, an unset API
    key) is reported."""
    agentv_targets: AgentVTargetLookup | None = None
    """For an AgentV eval file: the targets file its targets came from, and why any of its
    targets is missing (reported when that target is selected)."""


@dataclass(frozen=True)
class LoadedProject:
    """A validated project config (`assay.yaml`)."""

    config: ProjectConfig
    path: Path | None
    warnings: list[ConfigIssue] = field(default_factory=list)
    expansions: Expansions = field(default_factory=Expansions)
    """The `${VAR}` values loading put into the config (see `LoadedSuite.expansions`)."""
    key_lines: Mapping[str, int] = field(default_factory=dict)
    """The lines of each `targets.<name>`, `judge` and `judge.api_key_env` (as
    `LoadedSuite.key_lines`)."""

    @property
    def display(self) -> str:
        """The config file as shown in messages."""
        return display_path(self.path) if self.path else PROJECT_FILE

    @property
    def base_dir(self) -> Path:
        """Directory that relative paths in the project config resolve against."""
        return self.path.parent if self.path else Path.cwd()

    @property
    def store(self) -> str | None:
        """The configured store: a URL as written, a relative path resolved against `base_dir`."""
        return resolve_store(self.config.store, self.base_dir)


def _validate_head(
    data: dict[str, JSON], source: SourceMap
) -> tuple[Suite | None, list[ConfigIssue], bool]:
    """The suite without its tests, validated: (suite or None, its errors, whether its tests
    are validated too). A key unknown at the top level stops validation of everything else,
    as it always has."""
    try:
        return Suite.model_validate({**data, "tests": _NO_TESTS}), [], True
    except ValidationError as exc:
        top_level = any(e["type"] == "unknown_key" and not e["loc"] for e in exc.errors())
        return None, issues_from_validation(exc, data, source), not top_level


_NO_TESTS = SuiteTests("", array("q", [0]))
"""Stands for the tests while the rest of the suite is validated (they come one by one)."""


def parse_suite(
    data: JSON,
    *,
    source: SourceMap | None = None,
    base_dir: Path | None = None,
    assertions: Sequence[Grader] = (),
) -> LoadedSuite:
    """Validate suite data (from YAML or built in Python) into a `LoadedSuite`.

    `assertions` are grader objects built in Python (`assay.evaluate(graders=...)`), appended
    to the suite's default `assertions` and checked with them; the snapshot records each as
    its `model_dump`. Tests are validated one at a time and kept as JSON text (`SuiteTests`);
    tests in a dataset file are read one at a time too.

    Raises:
        ConfigError: every problem found, each with file, line and YAML path.
        PluginError: an installed grader or target plugin cannot be loaded.
    """
    require_plugins()
    source = source or SourceMap(default_file="<python>")
    base = base_dir or Path.cwd()
    if not isinstance(data, dict):
        raise ConfigError([source.issue((), "a suite must be a mapping with `name` and `tests`")])
    data = copy.deepcopy(data)
    agentv = (  # every AgentV file looks its targets up, v5 ones and dataset-only ones too
        agentv_marker(data) is not None
        or v5_marker(data) is not None
        or is_agentv_dataset(data.get("tests"), base)
    )
    warnings, errors = rewrite_agentv_suite(data, source, base)
    lookup = None
    if agentv and not errors:
        from assay.interop.agentv._target_lookup import select_agentv_target  # AgentV's only

        found, errors, lookup = select_agentv_target(data, source, base)
        warnings += found
    more, more_errors = rewrite_suite(data, source)
    warnings, errors = warnings + more, errors + more_errors
    if errors:
        raise ConfigError(errors)
    tests = data.get("tests")
    if not isinstance(tests, str) and not (isinstance(tests, list | tuple) and tests):
        _raise_invalid(data, source)  # no tests, or not a list of them
    suite, invalid_head, validate = _validate_head(data, source)
    if suite is not None and assertions:
        suite = suite.model_copy(update={"assertions": [*suite.assertions, *assertions]})
        dumped = [
            {"type": g.type, **g.model_dump(mode="json", by_alias=True, exclude_defaults=True)}
            for g in assertions
        ]
        data["assertions"] = [*data.get("assertions", []), *dumped]

    def new_reader() -> TestsReader:
        return TestsReader(suite, data, invalid_head, validate, base)

    if isinstance(tests, str):
        graders = data.get("assertions")
        reader = read_dataset(
            new_reader,
            tests,
            source,
            base,
            data.get("target"),
            suite_graders=graders if isinstance(graders, list) else (),
        )
        warnings += reader.warnings
    else:
        reader = new_reader()  # writes the document's start: `tests` keeps its place in it
        inline = list(tests)  # emptied as it is read: each test goes once validated
        del tests, data["tests"]
        reader.read_inline(inline, source)
    document, suite_tests, needs_judge = reader.finish(source)
    assert suite is not None  # finish raises unless the suite is valid
    if lookup is not None and needs_judge and suite.judge is None:
        deferred = lookup.deferred_judge_warning(str(suite.target), source)
        warnings += [deferred] if deferred is not None else []
    loaded = suite.model_copy(update={"tests": suite_tests})
    return LoadedSuite(
        loaded,
        base,
        source.default_file,
        warnings,
        document,
        tuple(needs_judge),
        key_lines=_key_lines(suite.targets, source, inline=True),
        agentv_targets=lookup,
    )


def _key_lines(names: Iterable[str], source: SourceMap, *, inline: bool) -> dict[str, int]:
    """The lines of `target` (with `inline`), `targets.<name>`, `judge` and
    `judge.api_key_env`, keyed by YAML path."""
    paths: list[LocPath] = [("target",)] if inline else []
    paths += [("targets", name) for name in names]
    paths += [("judge",), ("judge", "api_key_env")]
    lines = {format_path(path): source.entries.get(path) for path in paths}
    return {path: where.line for path, where in lines.items() if where and where.line}


def _raise_invalid(data: dict[str, JSON], source: SourceMap) -> None:
    """Raise the errors of a suite whose `tests` is missing, empty or not a list."""
    try:
        Suite.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(issues_from_validation(exc, data, source)) from None
    raise ConfigError([source.issue(("tests",), "`tests` must be a list of tests or a path")])


def load_suite(path: str | Path, *, assertions: Sequence[Grader] = ()) -> LoadedSuite:
    """Load one suite file; `assertions` as in `parse_suite` (a suite whose graders all come
    from Python is valid with them).

    Raises:
        ConfigError: the file is missing, not YAML, or not a valid suite.
    """
    file = Path(path)
    display = display_path(file)
    with recording() as expansions:
        data, source = load_yaml(file, display=display)
        base_dir = file.parent.resolve()
        loaded = parse_suite(data, source=source, base_dir=base_dir, assertions=assertions)
    return dataclasses.replace(loaded, expansions=expansions) if expansions else loaded


def discover_suite_files(paths: Iterable[str | Path]) -> list[Path]:
    """Expand directories into their `*.eval.yaml` / `*.eval.yml` files (sorted).

    Raises:
        ConfigError: a path does not exist, or a directory holds no suite files.
    """
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = sorted(
                p for p in path.rglob("*") if p.is_file() and p.name.endswith(SUITE_SUFFIXES)
            )
            if not files:
                raise ConfigError(
                    [
                        ConfigIssue(
                            str(raw),
                            None,
                            "",
                            "no suite files here: suites are named *.eval.yaml or *.eval.yml",
                        )
                    ]
                )
            found += files
        elif path.is_file():
            found.append(path)
        else:
            raise ConfigError([ConfigIssue(str(raw), None, "", "file not found")])
    return found


def load_project(path: Path | None = None) -> LoadedProject:
    """Load the project config; an absent file means defaults.

    Raises:
        ConfigError: the file exists but is invalid.
        PluginError: an installed grader or target plugin cannot be loaded.
    """
    require_plugins()
    path = path or find_project()
    if path is None:
        return LoadedProject(ProjectConfig(), None)
    with recording() as expansions:
        data, source = load_yaml(path, display=display_path(path))
    if data is None:
        return LoadedProject(ProjectConfig(), path)
    if not isinstance(data, dict):
        raise ConfigError([source.issue((), "the project config must be a mapping")])
    warnings, errors = rewrite_project(data, source)
    if errors:
        raise ConfigError(errors)
    try:
        config = ProjectConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(issues_from_validation(exc, data, source)) from None
    return LoadedProject(
        config,
        path,
        warnings,
        expansions,
        key_lines=_key_lines(config.targets, source, inline=False),
    )
