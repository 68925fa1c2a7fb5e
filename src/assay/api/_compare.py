"""Comparing runs: name them, load them, compare them.

A reference is `latest`, `latest~N`, `baseline` (a suite's pinned baseline), a run id or
unique id prefix, or (where the caller allows files) the path of an `assay runs export` file.
Shared by `assay compare`, `assay baseline pin` and, later, the HTTP API, so all name runs
the same way.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path

from assay._paths import could_be_path, is_file
from assay.api._export import read_export
from assay.comparison import CompareThresholds, Comparison
from assay.comparison import compare as compare_runs
from assay.errors import UsageError
from assay.results import CaseResult, CaseScore, RunResult
from assay.store import Store, open_store

__all__ = ["BASELINE_REF", "compare", "compare_stored", "is_file_ref", "resolve_run_ref"]

BASELINE_REF = "baseline"
"""The reference that names a suite's pinned baseline (`assay baseline pin`)."""

_LATEST = re.compile(r"latest(?:~(\d+))?")
_MAX_BACK_DIGITS = 12
"""`latest~N` with a longer N goes back further than any store holds runs."""


def is_file_ref(ref: str) -> bool:
    """Whether `ref` names an export file: it ends in `.jsonl` or is an existing file.

    The keywords `latest`, `latest~N` and `baseline` are never files (write `./latest` for a
    file of that name).
    """
    if ref == BASELINE_REF or _LATEST.fullmatch(ref):
        return False
    return ref.endswith(".jsonl") or (could_be_path(ref) and is_file(Path(ref)))


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
    digits = match.group(1) or "0"
    held = store.count_runs(suite=suite)
    # Counted first: `latest~99999999999999999999` must not reach the database as a row
    # count it cannot hold (nor `int()` a number past its digit limit).
    back = int(digits) if len(digits) <= _MAX_BACK_DIGITS else held
    found = store.list_runs(suite=suite, limit=1, offset=back) if back < held else []
    if not found:
        runs = f"{held} run{'s' * (held != 1)}"
        of_suite = f" of suite '{suite}'" if suite is not None else ""
        raise UsageError(
            f"'{ref[:40]}' names no run: {store.describe()} holds {runs}{of_suite}"
            f"{f', so latest~{held - 1} is the oldest' if held else ''}. "
            "Store runs with `assay run`, or give a run id."
        )
    return found[0].id


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
    result = compare_runs(
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
        if not is_file(path):
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


def compare(
    base: RunResult | str,
    head: RunResult | str,
    *,
    store: str | Path | Store | None = None,
    suite: str | None = None,
    max_pass_rate_drop: float = 0.0,
    max_avg_score_drop: float = 0.05,
    max_latency_increase_pct: float = 20.0,
    case_score_delta: float = 0.05,
    require_significance: bool = False,
) -> Comparison:
    """Compare run `head` with run `base` (SPEC §6): `assay compare` as a function.

    Args:
        base: The reference run: a `RunResult` (what `assay.evaluate` returns) or a reference
            to a stored run: `latest`, `latest~N`, `baseline`, a run id or unique prefix, or
            the path of an `assay runs export` file.
        head: The candidate run, in the same forms.
        store: Where referenced runs are: a SQLite path, a database URL or an open `Store`
            (left open); by default the project's store, as `assay compare` uses. Not
            opened when both runs are given as objects.
        suite: Resolve `latest`, `latest~N` and `baseline` within this suite (a `baseline`
            reference defaults to the other run's suite).
        max_pass_rate_drop: Largest tolerated pass-rate drop (0–1).
        max_avg_score_drop: Largest tolerated average-score drop (0–1).
        max_latency_increase_pct: Largest tolerated growth of mean case latency, in percent.
        case_score_delta: Per-case score change that counts as regressed or improved.
        require_significance: Gate only on changes the statistics say are not noise.

    Returns:
        The comparison: `summary.regression_detected`, per-case statuses and statistics.

    Raises:
        UsageError: A reference names no stored run, or a prefix names several.
        pydantic.ValidationError: A threshold is outside its range.
    """
    thresholds = CompareThresholds(
        max_pass_rate_drop=max_pass_rate_drop,
        max_avg_score_drop=max_avg_score_drop,
        max_latency_increase_pct=max_latency_increase_pct,
        case_score_delta=case_score_delta,
    )
    if isinstance(base, RunResult) and isinstance(head, RunResult):
        return compare_runs(
            base, head, thresholds=thresholds, require_significance=require_significance
        )
    resolve = functools.partial(
        _compare_refs,
        base=base,
        head=head,
        thresholds=thresholds,
        require_significance=require_significance,
        suite=suite,
    )
    refs = [side for side in (base, head) if isinstance(side, str)]
    if all(is_file_ref(ref) for ref in refs):
        return resolve(None)
    if isinstance(store, str | Path | None):
        from assay.config import project_store

        opened = open_store(store, fallback=project_store())
        try:
            return resolve(opened)
        finally:
            opened.close()
    return resolve(store)


def _compare_refs(
    store: Store | None,
    *,
    base: RunResult | str,
    head: RunResult | str,
    thresholds: CompareThresholds,
    require_significance: bool,
    suite: str | None,
) -> Comparison:
    """`compare` where at least one side is a reference to resolve in `store`."""
    if isinstance(base, str) and isinstance(head, str):
        result, _, _ = compare_stored(
            store,
            base,
            head,
            thresholds=thresholds,
            require_significance=require_significance,
            suite=suite,
            allow_files=True,
        )
        return result
    sides: list[tuple[RunResult, Iterable[CaseResult | CaseScore]]] = []
    for side, other in ((base, head), (head, base)):
        if isinstance(side, RunResult):
            sides.append((side, side.results))
            continue
        within = suite or (other.suite if isinstance(other, RunResult) else None)
        if side == BASELINE_REF:
            assert within is not None  # the other side is a run object
            stored = _require(store, side)
            run = stored.get_run(_baseline_id(stored, within))
            sides.append((run, stored.iter_case_scores(run.id)))
        else:
            sides.append(_load(store, side, suite=within, allow_files=True))
    (base_run, base_cases), (head_run, head_cases) = sides
    return compare_runs(
        base_run,
        head_run,
        base_cases=base_cases,
        head_cases=head_cases,
        thresholds=thresholds,
        require_significance=require_significance,
    )
