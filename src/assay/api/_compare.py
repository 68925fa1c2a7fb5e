"""Comparing stored runs: name them (`latest`, `latest~N`, ids, prefixes), load, compare.

Shared by `assay compare` and, later, the HTTP API, so both name runs the same way.
"""

from __future__ import annotations

import re

from assay.compare import CompareThresholds, Comparison, compare
from assay.errors import UsageError
from assay.results import RunResult
from assay.store import Store

__all__ = ["compare_stored", "resolve_run_ref"]

_LATEST = re.compile(r"latest(?:~(\d+))?")


def resolve_run_ref(store: Store, ref: str) -> str:
    """The run id that `ref` names: `latest`, `latest~N`, or an id or id prefix (returned
    as is: the store resolves prefixes and reports unknown ids).

    Raises:
        UsageError: `latest~N` goes back further than the stored runs.
    """
    match = _LATEST.fullmatch(ref)
    if match is None:
        return ref
    back = int(match.group(1) or 0)
    runs = store.list_runs(limit=back + 1)
    if len(runs) <= back:
        held = f"{len(runs)} run{'s' * (len(runs) != 1)}"
        raise UsageError(
            f"'{ref}' names no run: {store.describe()} holds {held}. "
            "Store runs with `assay run`, or give a run id."
        )
    return runs[back].id


def compare_stored(
    store: Store,
    base: str,
    head: str,
    *,
    thresholds: CompareThresholds | None = None,
    require_significance: bool = False,
) -> tuple[Comparison, RunResult, RunResult]:
    """Compare stored run `head` with `base` (any reference `resolve_run_ref` accepts); the
    comparison and both runs. Case results are streamed, never all held.

    Raises:
        UsageError: A reference names no run, or a prefix names several.
    """
    base_run = store.get_run(resolve_run_ref(store, base))
    head_run = store.get_run(resolve_run_ref(store, head))
    result = compare(
        base_run,
        head_run,
        base_cases=store.iter_case_results(base_run.id),
        head_cases=store.iter_case_results(head_run.id),
        thresholds=thresholds or CompareThresholds(),
        require_significance=require_significance,
    )
    return result, base_run, head_run
