"""An AgentV suite's tests gathered into one list, from wherever AgentV reads them.

AgentV takes `tests:` as a list (whose `file://path` entries, globs allowed, are replaced by
the tests of those files), as a path to a YAML or JSONL file (`file://` optional), or as a
directory whose subdirectories each hold one `case.yaml` (the directory's name is the test's
default `id`; a `workspace/` beside it is the test's workspace template). Paths are relative
to the eval file's directory. assay reads CSV files here too (SPEC §2).

The tests are read into the suite document, so the suite-level forms (`input`, `input_files`,
prompt-less llm-graders, `metadata`, `governance`) apply to them as to inline tests; each
test's lines are kept, so a problem in a dataset is located in its own file.
"""

from __future__ import annotations

import glob
from collections.abc import Callable
from pathlib import Path

from assay._paths import could_be_path, is_file
from assay.config._datasets import display_path, iter_tests
from assay.config._yaml import Located, LocPath, SourceMap, load_yaml
from assay.errors import ConfigError, ConfigIssue
from assay.results import JSON

__all__ = ["gather_tests", "is_agentv_dataset"]

_FILE = "file://"


def is_agentv_dataset(tests: JSON, base_dir: Path) -> bool:
    """Whether `tests` uses a form of AgentV's only: a `file://` reference (as the value or
    as a list entry) or a directory of case folders."""
    if isinstance(tests, str):
        return tests.startswith(_FILE) or _is_dir(tests, base_dir)
    return isinstance(tests, list) and any(
        isinstance(t, str) and t.startswith(_FILE) for t in tests
    )


def gather_tests(
    tests: JSON,
    source: SourceMap,
    base_dir: Path,
    warn: Callable[[LocPath, str], None],
) -> JSON:
    """`tests` as one list of tests, the source map's `tests[i]` entries following them.

    Raises:
        ConfigError: a referenced file or directory is missing or unreadable, or not a list
            of tests.
    """
    if isinstance(tests, str):
        spec = tests.removeprefix(_FILE)
        origin = source.locate(("tests",))
        gathered = _read(spec, base_dir, origin, ("tests",), warn)
        _replace_entries(source, [(None, entries) for _, entries in gathered])
        return [test for test, _ in gathered]
    if not isinstance(tests, list):
        return tests
    out: list[JSON] = []
    placed: list[tuple[int | None, dict[LocPath, Located]]] = []
    for i, entry in enumerate(tests):
        if isinstance(entry, str) and entry.startswith(_FILE):
            where = ("tests", i)
            for test, entries in _read(
                entry.removeprefix(_FILE), base_dir, source.locate(where), where, warn
            ):
                out.append(test)
                placed.append((None, entries))
        else:
            out.append(entry)
            placed.append((i, {}))
    _replace_entries(source, placed)
    return out


_Read = list[tuple[JSON, dict[LocPath, Located]]]


def _read(
    spec: str, base_dir: Path, origin: Located, path: LocPath, warn: Callable[[LocPath, str], None]
) -> _Read:
    """The tests (with their locations) of a file, a glob or a directory of case folders."""
    target = Path(spec) if Path(spec).is_absolute() else base_dir / spec
    if _is_dir(spec, base_dir):
        return _case_folders(target)
    if glob.has_magic(spec) and not glob.glob(str(target), recursive=True):
        warn(path, f"no files match '{spec}' (AgentV reads no tests from it either)")
        return []
    return [(test, dict(entries)) for test, entries in iter_tests(spec, base_dir, origin)]


def _is_dir(spec: str, base_dir: Path) -> bool:
    """Whether `spec` names a directory, without asking the OS about text no path can be."""
    if not could_be_path(spec):
        return False
    try:
        return (base_dir / spec).is_dir()
    except (OSError, ValueError):
        return False


def _case_folders(directory: Path) -> _Read:
    """One test per subdirectory holding a `case.yaml` (or `case.yml`), in name order."""
    out: _Read = []
    for sub in sorted(p for p in directory.iterdir() if p.is_dir()):
        case = next((sub / n for n in ("case.yaml", "case.yml") if is_file(sub / n)), None)
        if case is None:
            continue  # AgentV skips a folder without one, with a warning of its own
        data, located = load_yaml(case, display=display_path(case))
        if not isinstance(data, dict):
            where = located.locate(())
            raise ConfigError(
                [ConfigIssue(where.file, where.line, "", "a case file must be a mapping (a test)")]
            )
        data.setdefault("id", sub.name)
        if "workspace" not in data and (sub / "workspace").is_dir():
            data["workspace"] = {"template": str(sub / "workspace")}
        entries = dict(located.entries)
        entries.setdefault((), Located(display_path(case), 1))
        out.append((data, entries))
    return out


def _replace_entries(
    source: SourceMap, placed: list[tuple[int | None, dict[LocPath, Located]]]
) -> None:
    """Re-key the source map's `tests[...]` entries for the gathered list: an inline test
    keeps its own (moved to its new index), a test read from a file gets that file's."""
    old = {p: w for p, w in source.entries.items() if p[:1] == ("tests",) and len(p) > 1}
    for key in old:
        del source.entries[key]
    for new, (index, entries) in enumerate(placed):
        if index is not None:
            for p, where in old.items():
                if p[1] == index:
                    source.entries[("tests", new, *p[2:])] = where
        else:
            for p, where in entries.items():
                source.entries[("tests", new, *p)] = where
