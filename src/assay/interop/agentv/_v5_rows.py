"""The tests of an AgentV v5 file: inline rows, raw-case files (`tests: file://cases.jsonl`,
`file://…` entries in `tests`) and `scenarios` (config rows × tests), each with where it came
from so every later message is located.

CSV rows follow promptfoo's columns (assay.interop.agentv._v5_csv). Raw-case files are read
whole here, not streamed: their rows need the suite's prompts and
vars, which the streaming dataset reader does not know.
"""

from __future__ import annotations

import csv
import glob
from collections.abc import Callable, Iterator
from pathlib import Path

from assay.config._datasets import iter_tests
from assay.config._yaml import Located, LocPath, SourceMap, load_yaml
from assay.errors import ConfigError, ConfigIssue
from assay.interop.agentv._v5_csv import csv_rows
from assay.interop.agentv._v5_prompts import slug
from assay.results import JSON

__all__ = ["Origin", "RowReader"]

Origin = LocPath | dict[LocPath, Located]
"""A row's path in the suite document, or its locations read from another file."""

Report = Callable[[LocPath, str], None]


class RowReader:
    """Reads the rows; problems go to `error` (located) and `extend` (another file's)."""

    def __init__(
        self,
        source: SourceMap,
        base_dir: Path,
        error: Report,
        extend: Callable[[list[ConfigIssue]], None],
    ) -> None:
        self.source = source
        self.base_dir = base_dir
        self.error = error
        self.extend = extend

    def tests(self, tests: JSON) -> Iterator[tuple[JSON, Origin]]:
        """Each test of `tests` (a file reference, or a list of tests and file references)."""
        if isinstance(tests, str):
            yield from self._dataset(tests, ("tests",))
            return
        for i, test in enumerate(tests if isinstance(tests, list) else []):
            if isinstance(test, str):
                yield from self._dataset(test, ("tests", i))
            else:
                yield test, ("tests", i)

    def _dataset(self, ref: str, path: LocPath) -> Iterator[tuple[JSON, Origin]]:
        spec = ref.strip().removeprefix("file://")
        if spec.lower().endswith(".csv"):
            yield from self._csv(spec, path)
            return
        try:
            yield from iter_tests(spec, self.base_dir, self.source.locate(path))
        except ConfigError as exc:
            self.extend(exc.issues)

    def _csv(self, spec: str, path: LocPath) -> Iterator[tuple[JSON, Origin]]:
        """promptfoo-style CSV cases (columns are vars; `__expected` columns assertions)."""
        file = Path(spec) if Path(spec).is_absolute() else self.base_dir / spec
        if not file.is_file():
            self.error(path, f"tests file '{spec}' not found (looked at {file})")
            return
        problems: list[ConfigIssue] = []

        def fail(name: str, line: int, message: str) -> None:
            problems.append(ConfigIssue(name, line, "", message))

        try:
            yield from csv_rows(file, spec, fail)
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            self.error(path, f"cannot read tests file '{spec}': {exc}")
        self.extend(problems)

    def scenarios(self, raw: JSON) -> list[tuple[JSON, Origin]]:
        """One test per config row × test of each scenario (inline, or `file://` globs)."""
        out: list[tuple[JSON, Origin]] = []
        for i, scenario in enumerate(raw if isinstance(raw, list) else []):
            path: LocPath = ("scenarios", i)
            if not isinstance(scenario, str):
                out += self._scenario(scenario, path, None)
                continue
            pattern = str(self.base_dir / scenario.removeprefix("file://"))
            files = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
            if not files:
                self.error(path, f"no files match '{scenario}'")
            for file in files:
                try:
                    data, other = load_yaml(Path(file), display=file)
                except ConfigError as exc:
                    self.extend(exc.issues)
                    continue
                for j, item in enumerate(data if isinstance(data, list) else [data]):
                    entries = {p[1:]: w for p, w in other.entries.items() if p[:1] == (j,)}
                    out += self._scenario(item, path, entries)
        return out

    def _scenario(
        self, scenario: JSON, path: LocPath, entries: dict[LocPath, Located] | None
    ) -> list[tuple[JSON, Origin]]:
        if not isinstance(scenario, dict):
            self.error(path, "a scenario is a mapping with `config` and `tests`")
            return []
        out: list[tuple[JSON, Origin]] = []
        configs = scenario.get("config")
        rows = configs if isinstance(configs, list) and configs else [{}]
        tests = scenario.get("tests")
        for c, row in enumerate(rows):
            config = row if isinstance(row, dict) else {}
            for t, test in enumerate(tests if isinstance(tests, list) else []):
                if not isinstance(test, dict):
                    continue
                merged: dict[str, JSON] = {**config, **test}
                merged["vars"] = {**_dict(config.get("vars")), **_dict(test.get("vars"))}
                ident = test.get("id") or slug(str(test.get("description") or f"test-{t + 1}"))
                merged["id"] = f"{config.get('id', f'config-{c + 1}')}-{ident}"
                where: Origin = (*path, "tests", t)
                if entries is not None:
                    where = {p[2:]: w for p, w in entries.items() if p[:2] == ("tests", t)}
                out.append((merged, where))
        return out


def _dict(value: JSON) -> dict[str, JSON]:
    return dict(value) if isinstance(value, dict) else {}
