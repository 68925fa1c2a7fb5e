"""The order of a stored run's cases as its suite lists them (results are stored as they
finish, which under concurrency is another order)."""

from __future__ import annotations

from collections.abc import Iterator

from assay.store import Store

__all__ = ["suite_order"]


def suite_order(store: Store, run_id: str) -> Iterator[str]:
    """The case ids of the run's suite, in suite order, read from the run's snapshot when
    first iterated (nothing when the snapshot holds no suite, as an imported run's may)."""
    suite = store.get_snapshot(run_id).get("suite")
    tests = suite.get("tests") if isinstance(suite, dict) else None
    for test in tests if isinstance(tests, list) else ():
        if isinstance(test, dict) and isinstance(test.get("id"), str):
            yield test["id"]
