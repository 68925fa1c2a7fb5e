"""Comparing runs: name them, load them, compare them.

A reference is `latest`, `latest~N`, `baseline` (a suite's pinned baseline), a run id or
unique id prefix, or (where the caller allows files) the path of an `assay runs export` file.
Shared by `assay compare`, `assay baseline pin` and, later, the HTTP API, so all name runs
the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from assay.api._export import read_export
from assay.comparison import CompareThresholds, Comparison, compare
from assay.errors import UsageError
from assay.results import CaseResult, CaseScore, RunResult
from assay.store import Store

__all__ = ["BASELINE_REF", "compare_stored", "is_file_ref", "resolve_run_ref"]

BASELINE_REF = "baseline"
"""The reference that names a suite's pinned baseline (`assay baseline pin`)."""

_LATEST = re.compile(r"latest(?:~(\d+))?")


def is_file_ref(ref: str) -> bool:
    """Whether `ref` names an export file: it ends in `.jsonl` or is an existing file.

    The keywords `latest`, `latest~N` and `baseline` are never files (write `./latest` for a
    file of that name).
    """
    if ref == BASELINE_REF or _LATEST.fullmatch(ref):
        return False
    return ref.endswith(".jsonl") or Path(ref).is_file()


def resolve_run_ref(store: Store, ref: str, *, suite: str | None = None) -> str:
    """The run id that `ref` names in `store`.

    `latest` is the newest stored run (of `suite` when given), `latest~N` the N-th before
    it, `baseline` the pinned baseline of `suite`; anything else is an id or id prefix,
    returned as is (the store resolves prefixes and reports unknown ids).

    Raises:
        UsageError: `latest~N` goes back further than the stored runs, or `baseline` has no
            suite or the suite has no pinned baseline.
    """
    if ref == BASELINE_REF:
        if suite is None:
            raise UsageError(
                "'baseline' names the pinned baseline of a suite, and no suite is known here: "
                "pass --suite SUITE"
            )
        return _baseline_id(store, suite)
    match = _LATEST.fullmatch(ref)
    if match is None:
        return ref
    back = int(match.group(1) or 0)
    runs = store.list_runs(suite=suite, limit=back + 1)
    if len(runs) <= back:
        held = f"{len(runs)} run{'s' * (len(runs) != 1)}"
        of_suite = f" of suite '{suite}'" if suite is not None else ""
        raise UsageError(
            f"'{ref}' names no run: {store.describe()} holds {held}{of_suite}. "
            "Store runs with `assay run`, or give a run id."
        )
    return runs[back].id


def compare_stored(
    store: Store | None,
    base: str,
    head: str,
    *,
    thresholds: CompareThresholds | None = None,
    require_significance: bool = False,
    suite: str | None = None,
    allow_files: bool = False,
) -> tuple[Comparison, RunResult, RunResult]:
    """Compare run `head` with run `base`; the comparison and both runs.

    Either side may be `baseline`: the pinned baseline of `suite`, or without one, of the
    other side's suite. Stored case results are streamed, never all held; a run read from
    an export file is returned with its results.

    Args:
        store: Where stored runs (and pinned baselines) are; None when both references
            are export files.
        base: The reference run (any reference `resolve_run_ref` accepts, or `baseline`).
        head: The candidate run.
        thresholds: The gates; SPEC §6 defaults when None.
        require_significance: See `assay.comparison.compare`.
        suite: Resolve `latest`, `latest~N` and `baseline` within this suite.
        allow_files: Accept paths of `assay runs export` files (`is_file_ref`). Off by
            default so that a server passing user input never reads local files.

    Raises:
        UsageError: A reference names no run (or a prefix names several), both are
            `baseline`, a suite has no pinned baseline, or an export file is missing or bad.
    """
    if base == BASELINE_REF and head == BASELINE_REF:
        raise UsageError(
            "BASE and HEAD are both 'baseline': 'baseline' is the pinned baseline of the other "
            "run's suite, so name a run for one side (e.g. `assay compare baseline latest`)"
        )
    loaded: dict[str, tuple[RunResult, Iterable[CaseResult | CaseScore]]] = {}
    for role, ref in (("base", base), ("head", head)):
        if ref != BASELINE_REF:
            loaded[role] = _load(store, ref, suite=suite, allow_files=allow_files)
    for role, other in (("base", "head"), ("head", "base")):
        if role not in loaded:
            store = _require(store, BASELINE_REF)
            run = store.get_run(_baseline_id(store, suite or loaded[other][0].suite))
            loaded[role] = (run, store.iter_case_scores(run.id))
    (base_run, base_cases), (head_run, head_cases) = loaded["base"], loaded["head"]
    result = compare(
        base_run,
        head_run,
        base_cases=base_cases,
        head_cases=head_cases,
        thresholds=thresholds or CompareThresholds(),
        require_significance=require_significance,
    )
    return result, base_run, head_run


def _load(
    store: Store | None, ref: str, *, suite: str | None, allow_files: bool
) -> tuple[RunResult, Iterable[CaseResult | CaseScore]]:
    """The run `ref` names and its case results (streamed from the store, or from the file)."""
    if allow_files and is_file_ref(ref):
        path = Path(ref)
        if not path.is_file():
            raise UsageError(
                f"{ref}: file not found (a reference ending in .jsonl is read as an "
                "`assay runs export` file)"
            )
        run, _ = read_export(path)
        return run, run.results
    store = _require(store, ref)
    run = store.get_run(resolve_run_ref(store, ref, suite=suite))
    return run, store.iter_case_scores(run.id)


def _require(store: Store | None, ref: str) -> Store:
    """The store, which reference `ref` needs; a caller that passed none made an error."""
    if store is None:
        raise UsageError(f"'{ref}' names a stored run, and no run store was given")
    return store


def _baseline_id(store: Store, suite: str) -> str:
    """The id of the run pinned as `suite`'s baseline."""
    pinned = store.get_baseline(suite)
    if pinned is None:
        raise UsageError(
            f"'baseline' names no run: suite '{suite}' has no pinned baseline in "
            f"{store.describe()}. Pin one with `assay baseline pin RUN`."
        )
    return pinned.run_id
