"""`/api/runs`: list, upload, read and delete stored runs."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import AfterValidator
from starlette.concurrency import run_in_threadpool

from assay.api import InvalidExportError, parse_upload, run_time_bound
from assay.errors import UsageError
from assay.results import JSON, RunResult, RunStatus
from assay.server._errors import ApiError, error_responses
from assay.server._models import (
    RUN_ID_PATTERN,
    DeletedRun,
    PageNumber,
    PageSize,
    RunFacetsOut,
    RunId,
    RunPage,
)
from assay.server._security import require_token
from assay.server._state import StoreDep
from assay.store import Store

__all__ = ["router"]

router = APIRouter(prefix="/runs", tags=["runs"])

_NDJSON = ("application/x-ndjson", "application/jsonl", "application/json-lines")
_JSON = "application/json"
_STREAM_BATCH = 200  # case results per chunk of a streamed run document
_RUN_ID = re.compile(RUN_ID_PATTERN)
_DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$"
"""The shape of a `since` / `until` bound, for the OpenAPI document; the handler reads the
date itself (the calendar is not a pattern)."""

_UPLOAD_BODY = {
    "required": True,
    "description": "An `assay runs export` file: JSONL (a header line, then one case result "
    "per line), or the same as one JSON object whose `results` holds the case results.",
    "content": {
        "application/x-ndjson": {"schema": {"type": "string"}},
        _JSON: {
            "schema": {
                "type": "object",
                "required": ["assay_export", "run", "snapshot"],
                "properties": {
                    "assay_export": {"type": "integer", "const": 1},
                    "run": {
                        "allOf": [
                            {"$ref": "#/components/schemas/RunResult"},
                            {"properties": {"id": {"pattern": RUN_ID_PATTERN, "maxLength": 200}}},
                        ]
                    },
                    "snapshot": {"type": "object", "description": "The run's config snapshot."},
                    "results": {
                        "type": "array",
                        "description": "The case results; case ids are unique within a run.",
                        "items": {"$ref": "#/components/schemas/CaseResult"},
                    },
                },
            }
        },
    },
}


def _bound(name: str) -> Callable[[str | None], str | None]:
    """A query parameter's check: a date or date-time, as the stored `started_at` text."""

    def check(value: str | None) -> str | None:
        try:
            return None if value is None else run_time_bound(value, name)
        except UsageError as exc:
            raise ValueError(str(exc)) from None

    return check


@router.get("", response_model=RunPage, responses=error_responses(400, 422))
def list_runs(
    *,
    store: StoreDep,
    suite: str | None = None,
    target: str | None = None,
    status: RunStatus | None = None,
    since: Annotated[
        str | None,
        Query(
            description="Started at or after (ISO 8601, e.g. 2026-11-01 or "
            "2026-11-01T14:30+02:00; UTC without an offset).",
            json_schema_extra={"pattern": _DATE_PATTERN},
        ),
        AfterValidator(_bound("since")),
    ] = None,
    until: Annotated[
        str | None,
        Query(
            description="Started before (ISO 8601, as `since`).",
            json_schema_extra={"pattern": _DATE_PATTERN},
        ),
        AfterValidator(_bound("until")),
    ] = None,
    passed: Annotated[
        bool | None,
        Query(
            description="Only finished runs with this verdict: with `status=completed`, "
            "`passed=false` lists the runs that completed and failed their thresholds (a "
            "`failed` run aborted)."
        ),
    ] = None,
    page: PageNumber = 1,
    page_size: PageSize = 50,
) -> Response:
    """Stored runs, newest first, without their case results."""
    total = store.count_runs(
        suite=suite, target=target, status=status, since=since, until=until, passed=passed
    )
    found = store.list_runs(
        suite=suite,
        target=target,
        status=status,
        since=since,
        until=until,
        limit=page_size,
        offset=(page - 1) * page_size,
        passed=passed,
    )
    body = RunPage(
        total=total,
        page=page,
        page_size=page_size,
        pages=-(-total // page_size),
        items=found,
    )
    return Response(body.model_dump_json(), media_type=_JSON)


@router.post(
    "",
    status_code=201,
    response_model=RunResult,
    dependencies=[Depends(require_token)],
    responses=error_responses(400, 401, 403, 409, 413, 415, 422),
    openapi_extra={"requestBody": _UPLOAD_BODY},
)
async def upload_run(request: Request, store: StoreDep) -> Response:
    """Store a run exported by `assay runs export` (e.g. from CI); all or nothing.

    Answers the stored run without its case results, and its URL in `Location`.
    """
    kind = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if kind not in (*_NDJSON, _JSON):
        raise ApiError(
            415,
            f"upload a run as application/x-ndjson (the `assay runs export` file) or "
            f"application/json, not {kind or 'a body without Content-Type'}",
        )
    body = bytearray()
    async for chunk in request.stream():  # BodyLimit stops this at the size limit
        body += chunk
    # Decoding, parsing and checking 10 MB takes seconds of CPU: on the event loop it
    # would hold every other request that long.
    try:
        upload = await run_in_threadpool(parse_upload, body, document=kind == _JSON)
    except InvalidExportError as exc:
        where = ["body", *map(str, exc.loc)]
        details: JSON = [{"loc": where, "msg": exc.problem, "type": "value_error"}]
        raise ApiError(422, str(exc), type="validation_error", details=details) from None
    run = upload.run
    if len(run.id) > 200 or not _valid_id(run.id):
        raise ApiError(
            422,
            f"upload:1: run id '{run.id[:80]}' cannot be used in URLs; ids are letters, digits "
            "and . _ : + - (starting with a letter or digit)",
        )
    await run_in_threadpool(store.import_run, *upload)
    return Response(
        run.model_dump_json(),
        status_code=201,
        media_type=_JSON,
        headers={"Location": f"/api/runs/{run.id}"},
    )


@router.get(
    "/{run_id}",
    response_model=RunResult,
    responses=error_responses(400, 404, 422),
)
def get_run(
    run_id: RunId,
    store: StoreDep,
    include: Annotated[
        Literal["results"] | None,
        Query(description="`results` adds every case result: the SPEC §8 run document."),
    ] = None,
) -> Response:
    """One run; with `include=results` the whole machine-readable run result (streamed)."""
    run = store.get_run(run_id)
    if include is None:
        return Response(run.model_dump_json(), media_type=_JSON)
    return StreamingResponse(_run_document(store, run), media_type=_JSON)


@router.get(
    "/{run_id}/facets",
    response_model=RunFacetsOut,
    responses=error_responses(400, 404, 422),
)
def get_facets(run_id: RunId, store: StoreDep) -> RunFacetsOut:
    """Counts of a run's cases per verdict, per tag and per grader verdict (filter menus)."""
    facets = store.get_run_facets(run_id)
    return RunFacetsOut.model_validate(
        {"verdicts": facets.verdicts, "tags": facets.tags, "graders": facets.graders}
    )


@router.delete(
    "/{run_id}",
    response_model=DeletedRun,
    dependencies=[Depends(require_token)],
    responses=error_responses(400, 401, 403, 404, 409, 422),
)
def delete_run(
    run_id: RunId,
    store: StoreDep,
    force: Annotated[
        bool,
        Query(
            description="Delete the run even if it is `running` (409 otherwise): for a run "
            "whose process crashed or was killed."
        ),
    ] = False,
) -> DeletedRun:
    """Delete a run and its case results; if it was its suite's baseline, none is pinned."""
    run = store.get_run(run_id)
    pinned = store.get_baseline(run.suite)
    store.delete_run(run.id, force=force)
    return DeletedRun(
        id=run.id, suite=run.suite, was_baseline=pinned is not None and pinned.run_id == run.id
    )


def _run_document(store: Store, run: RunResult) -> Iterator[bytes]:
    """The SPEC §8 document of `run`, its case results streamed from the store in batches:
    memory stays flat however large the run."""
    head = run.model_dump_json(exclude={"results"})
    yield (head[:-1] + ',"results":[').encode()
    batch: list[str] = []
    first = True
    for case in store.iter_case_results_json(run.id):
        batch.append(case)
        if len(batch) == _STREAM_BATCH:
            yield ("" if first else ",").encode() + ",".join(batch).encode()
            first, batch = False, []
    if batch:
        yield ("" if first else ",").encode() + ",".join(batch).encode()
    yield b"]}"


def _valid_id(run_id: str) -> bool:
    return _RUN_ID.fullmatch(run_id) is not None
