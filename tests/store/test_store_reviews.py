"""Human reviews (issue 28 item 1) on every backend: put, replace, get, list, delete, cascade."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from assay.errors import UsageError
from assay.results import CaseResult, Review, RunResult
from assay.store import SQLStore

MakeRun = Callable[..., RunResult]
MakeCase = Callable[..., CaseResult]

AT = "2026-11-27T10:00:00.000000Z"


def _review(case_id: str, verdict: str = "pass", **fields: str) -> Review:
    return Review.model_validate(
        {"run_id": "run-0001", "case_id": case_id, "verdict": verdict, "reviewed_at": AT, **fields}
    )


def test_i28_1_a_review_is_stored_replaced_listed_and_deleted(
    store: SQLStore, make_run: MakeRun, make_case: MakeCase
) -> None:
    store.create_run(make_run("run-0001", results=[make_case(c) for c in "abc"]), {})
    assert store.get_review("run-0001", "b") is None
    first = store.put_review(_review("c", "fail", note="wrong window", reviewer="ana"))
    assert first == _review("c", "fail", note="wrong window", reviewer="ana")
    store.put_review(_review("a"))
    store.put_review(_review("c", "pass", note="on second look"))  # replaces the first
    assert [(r.case_id, r.verdict, r.note, r.reviewer) for r in store.list_reviews("run-0001")] == [
        ("a", "pass", "", ""),
        ("c", "pass", "on second look", ""),
    ]
    assert store.delete_review("run-0001", "a") == _review("a")
    assert store.get_review("run-0001", "a") is None
    with pytest.raises(UsageError, match="case 'a' of run 'run-0001' has no review"):
        store.delete_review("run-0001", "a")
    # The machine verdict is untouched.
    assert [c.verdict for c in store.iter_case_results("run-0001")] == ["pass"] * 3


def test_i28_1_a_review_needs_a_stored_case_and_follows_its_run(
    store: SQLStore, make_run: MakeRun, make_case: MakeCase
) -> None:
    store.create_run(make_run("run-0001", results=[make_case("a")]), {})
    with pytest.raises(UsageError, match="run 'run-0001' has no case 'zz'"):
        store.put_review(_review("zz"))
    with pytest.raises(UsageError, match="run 'nope' not found"):
        store.list_reviews("nope")
    stored = store.put_review(
        _review("a", note="nul\x00byte").model_copy(update={"run_id": "run-00"})
    )
    assert stored.run_id == "run-0001"  # a unique prefix names the run
    assert stored.note == "nul\ufffdbyte"
    store.delete_run("run-0001", force=True)
    store.create_run(make_run("run-0001", results=[make_case("a")]), {})
    assert store.list_reviews("run-0001") == []  # deleted with its run
