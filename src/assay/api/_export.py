"""Run export and import: one JSONL file holds a run, its snapshot and every case result.

Line 1 is a header `{"assay_export": 1, "run": ..., "snapshot": ...}`; each further line is
one case result in stored order. Exporting an imported run gives back the same bytes, so a
file can move runs between stores (a laptop's SQLite, the team's PostgreSQL) without drift;
only a summary that does not match the case results comes back counted again, since an
import never trusts the file's (`_import_checks`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, TextIO

from pydantic import ValidationError
from pydantic_core import from_json

from assay.api._export_document import split_document
from assay.api._import_checks import InvalidExportError, check_case, check_run
from assay.errors import UsageError
from assay.results import JSON, CaseResult, RunResult
from assay.store import Store

__all__ = [
    "EXPORT_FORMAT",
    "InvalidExportError",
    "Upload",
    "parse_export",
    "parse_upload",
    "read_export",
    "write_export",
]

EXPORT_FORMAT = 1

_NESTING = 200
"""About how deeply arrays and objects may nest in an export: pydantic's JSON parser stops
there with an error (Python's `json` would instead hit the interpreter's recursion limit
near 1,000 and crash)."""


def write_export(store: Store, run_id: str, out: TextIO) -> RunResult:
    """Write run `run_id` (an id or unique prefix) as export JSONL to `out`; returns the run."""
    run = store.get_run(run_id)
    header = {
        "assay_export": EXPORT_FORMAT,
        "run": run.model_dump(mode="json", exclude={"results"}),
        "snapshot": store.get_snapshot(run.id),
    }
    out.write(json.dumps(header, ensure_ascii=False, separators=(",", ":")) + "\n")
    for case in store.iter_case_results(run.id):
        out.write(case.model_dump_json() + "\n")
    return run


def read_export(path: Path) -> tuple[RunResult, dict[str, JSON]]:
    """The run (with its case results) and snapshot of an export file, checked
    (`check_case`, `check_run`) and with its summary counted from its case results.

    Raises:
        UsageError: The file is not an assay export, with the line and what is wrong.
    """
    return parse_export(_lines(path), str(path))


class Upload(NamedTuple):
    """A checked upload: the run (without its case results), its snapshot, and the case
    results as the JSON documents a store keeps (`Store.import_run`)."""

    run: RunResult
    snapshot: dict[str, JSON]
    documents: list[str]


def parse_upload(data: bytes | bytearray, *, document: bool, where: str = "upload") -> Upload:
    """`parse_export` for a request body: JSONL, or with `document` one JSON object whose
    `results` holds the case results. CPU-bound: the server runs it off its event loop,
    and no step of it holds the interpreter for longer than one case result takes.

    Raises:
        UsageError: The body is not UTF-8 text or not an assay export.
        InvalidExportError: A value in it is impossible (a score of 5.0).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{where}: the upload is not UTF-8 text: {exc}") from None
    documents: list[str] = []
    if not document:
        # Split on newlines only: JSON text may hold U+2028 and other line separators.
        run, snapshot = parse_export(text.split("\n"), where, documents=documents)
        return Upload(run, snapshot, documents)
    header_texts, results = split_document(text, where)
    header = {key: _json(where, None, item) for key, item in header_texts.items()}
    cases = (
        _case(f"{where} results[{index}]", CaseResult.model_validate_json, item)
        for index, item in enumerate(results)
    )
    run, snapshot = _build(header, cases, where, where, documents=documents)
    return Upload(run, snapshot, documents)


def parse_export(
    lines: Iterable[str], where: str, *, documents: list[str] | None = None
) -> tuple[RunResult, dict[str, JSON]]:
    """The run and snapshot of export JSONL given as lines (blank ones are skipped), checked
    as `read_export` does; `where` names the source in messages (`where:3: ...`). With
    `documents`, the case results go there as JSON text instead of onto the run.

    Raises:
        UsageError: The lines are not an assay export, with the line and what is wrong.
        InvalidExportError: A value in them is impossible (a score of 5.0).
    """
    numbered = ((n, line) for n, line in enumerate(lines, start=1) if line.strip())
    first = next(numbered, None)
    if first is None:
        raise UsageError(f"{where}: the file is empty; expected an `assay runs export` file")
    header = _json(where, first[0], first[1])
    cases = (
        _case(f"{where}:{number}", CaseResult.model_validate_json, line)
        for number, line in numbered
    )
    return _build(header, cases, where, f"{where}:{first[0]}", documents=documents)


def _case(
    location: str, validate: Callable[[Any], CaseResult], source: object
) -> tuple[str, CaseResult]:
    try:
        return location, validate(source)
    except ValidationError as exc:
        raise UsageError(f"{location}: not a case result: {_first_error(exc)}") from None


def _build(
    header: JSON,
    cases: Iterable[tuple[str, CaseResult]],
    where: str,
    at: str,
    *,
    documents: list[str] | None = None,
) -> tuple[RunResult, dict[str, JSON]]:
    """The run and snapshot from a parsed header and the case results, each checked as it is
    read; `at` locates the header in messages. With `documents`, the case results are
    appended there as JSON text (untracked by the garbage collector, whose passes over a
    large upload's objects would hold the interpreter) and the run is returned without them.
    """
    if not isinstance(header, dict) or header.get("assay_export") != EXPORT_FORMAT:
        raise UsageError(
            f"{at}: not an assay run export (format {EXPORT_FORMAT}); "
            "create one with `assay runs export RUN -o FILE`"
        )
    snapshot = header.get("snapshot")
    if not isinstance(snapshot, dict):
        raise UsageError(f"{at}: the header has no `snapshot` object")
    fields = header.get("run", {})
    if not isinstance(fields, dict):
        raise UsageError(f"{at}: the header's `run` is not a run: expected an object")
    try:
        declared = RunResult.model_validate({**fields, "results": []})
    except ValidationError as exc:
        raise UsageError(f"{at}: the header's `run` is not a run: {_first_error(exc)}") from None
    run, summary = check_run(declared, at)
    results: list[CaseResult] = []
    for index, (location, case) in enumerate(cases):
        checked = check_case(case, index, location)
        summary.add(checked)
        if documents is None:
            results.append(checked)
        else:
            documents.append(checked.model_dump_json())
    return run.model_copy(update={"summary": summary.build(), "results": results}), snapshot


def _lines(path: Path) -> Iterator[str]:
    try:
        with path.open(encoding="utf-8") as file:
            yield from file
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None


def _json(where: str, number: int | None, text: str) -> JSON:
    """`text` parsed; nesting past the parser's limit is refused with a message."""
    at = where if number is None else f"{where}:{number}"
    try:
        parsed: JSON = from_json(text)
    except ValueError as exc:
        raise UsageError(f"{at}: not JSON: {_readable(str(exc))}") from None
    return parsed


def _readable(problem: str) -> str:
    """A JSON parser's complaint, with its nesting limit said plainly."""
    if "recursion limit exceeded" in problem:
        return (
            f"nested too deeply ({problem}): arrays and objects may nest about {_NESTING} "
            "levels; an assay export needs a few"
        )
    return problem


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"])
    message = _readable(str(error["msg"]))
    return f"{where}: {message}" if where else message
