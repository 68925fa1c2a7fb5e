"""Run export and import: one JSONL file holds a run, its snapshot and every case result.

Line 1 is a header `{"assay_export": 1, "run": ..., "snapshot": ...}`; each further line is
one case result in stored order. Exporting an imported run gives back the same bytes, so a
file can move runs between stores (a laptop's SQLite, the team's PostgreSQL) without drift.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TextIO

from pydantic import ValidationError

from assay.errors import UsageError
from assay.results import JSON, CaseResult, RunResult
from assay.store import Store

__all__ = ["EXPORT_FORMAT", "parse_export", "read_export", "write_export"]

EXPORT_FORMAT = 1


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
    """The run (with its case results) and snapshot of an export file.

    Raises:
        UsageError: The file is not an assay export, with the line and what is wrong.
    """
    return parse_export(_lines(path), str(path))


def parse_export(lines: Iterable[str], where: str) -> tuple[RunResult, dict[str, JSON]]:
    """The run and snapshot of export JSONL given as lines (blank ones are skipped), e.g. an
    upload to the HTTP API; `where` names the source in messages (`where:3: ...`).

    Raises:
        UsageError: The lines are not an assay export, with the line and what is wrong.
    """
    lines = (line for line in lines if line.strip())
    first = next(lines, None)
    if first is None:
        raise UsageError(f"{where}: the file is empty; expected an `assay runs export` file")
    header = _json(where, 1, first)
    if not isinstance(header, dict) or header.get("assay_export") != EXPORT_FORMAT:
        raise UsageError(
            f"{where}:1: not an assay run export (format {EXPORT_FORMAT}); "
            "create one with `assay runs export RUN -o FILE`"
        )
    snapshot = header.get("snapshot")
    if not isinstance(snapshot, dict):
        raise UsageError(f"{where}:1: the header has no `snapshot` object")
    results: list[CaseResult] = []
    for number, line in enumerate(lines, start=2):
        try:
            results.append(CaseResult.model_validate_json(line))
        except ValidationError as exc:
            raise UsageError(f"{where}:{number}: not a case result: {_first_error(exc)}") from None
    try:
        run = RunResult.model_validate({**header.get("run", {}), "results": results})
    except (ValidationError, TypeError) as exc:
        detail = _first_error(exc) if isinstance(exc, ValidationError) else str(exc)
        raise UsageError(f"{where}:1: the header's `run` is not a run: {detail}") from None
    return run, snapshot


def _lines(path: Path) -> Iterator[str]:
    try:
        with path.open(encoding="utf-8") as file:
            yield from file
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None


def _json(where: str, number: int, line: str) -> JSON:
    try:
        return json.loads(line)
    except ValueError as exc:
        raise UsageError(f"{where}:{number}: not JSON: {exc}") from None


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])
