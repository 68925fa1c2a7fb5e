"""Property-based checks of the API against its own OpenAPI document (schemathesis).

Every operation gets a few generated requests against a seeded store: no 500s, every status
and body as the document declares, auth enforced where declared. Bounded to stay fast.

One test drives every operation (rather than `schema.parametrize()`), so the app and its
seeded store come from ordinary function-scoped fixtures.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from assay.server import create_app
from assay.store import SQLiteStore
from tests.server.conftest import TOKEN, seed

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _operations(tmp_path: Path) -> tuple[Any, SQLiteStore]:
    store = SQLiteStore(tmp_path / "assay.db")
    seed(store)
    app = create_app(store, token=TOKEN, config_path=tmp_path / ".assay" / "config.yaml")
    return schemathesis.openapi.from_asgi("/api/openapi.json", app), store


def _excluded(case: Any) -> list[Any]:
    # An upload that fits the schema can still be refused with 400: an export's JSONL is
    # text whose lines must parse, and its case ids must be unique, which no schema says.
    if case.method == "POST" and case.path == "/api/runs":
        return [positive_data_acceptance]
    # `since` and `until` must be real dates: the pattern gives their shape, not the calendar
    # (2026-13-45 fits it and is a 422).
    if case.method == "GET" and case.path == "/api/runs":
        return [positive_data_acceptance]
    return []


def test_the_api_keeps_its_openapi_contract(tmp_path: Path) -> None:
    schema, store = _operations(tmp_path)
    failures: list[str] = []
    checked = 0
    try:
        for result in schema.get_all_operations():
            operation = result.ok()

            @given(case=operation.as_strategy())
            @settings(
                max_examples=6,
                deadline=None,
                derandomize=True,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            def check(case: Any) -> None:
                case.call_and_validate(headers=AUTH, excluded_checks=_excluded(case))

            try:
                check()
            except Exception as exc:  # collect every operation's failure, then report all
                failures.append(f"{operation.method.upper()} {operation.path}: {exc}")
            checked += 1
    finally:
        store.close()
    assert checked == 19  # every operation of the document
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("seeded", [True])
def test_the_run_used_by_the_checks_exists(tmp_path: Path, seeded: bool) -> None:
    _, store = _operations(tmp_path)
    assert (store.count_runs() == 3) is seeded
    store.close()
