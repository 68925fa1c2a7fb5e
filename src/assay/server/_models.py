"""Request and response shapes of the API, and the parameters shared by its routes.

Responses are pydantic models so the OpenAPI document says exactly what comes back; handlers
that page through large runs write the same JSON themselves, splicing in stored results
without parsing them again.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Literal

from fastapi import Path, Query
from pydantic import BaseModel, ConfigDict, Field

from assay.results import CaseResult, Review, RunResult, Verdict

__all__ = [
    "MAX_ID_LENGTH",
    "RUN_ID_PATTERN",
    "BaselineList",
    "BaselineOut",
    "CaseResultPage",
    "DeletedRun",
    "Health",
    "PageNumber",
    "PageSize",
    "PinRequest",
    "ReviewList",
    "ReviewRequest",
    "RunFacetsOut",
    "RunId",
    "RunPage",
    "page_json",
]

RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:+-]*$"
"""What a run id (or id prefix) may look like in a request: no slashes, nothing a path needs."""

MAX_ID_LENGTH = 200

RunId = Annotated[
    str,
    Path(
        pattern=RUN_ID_PATTERN,
        max_length=MAX_ID_LENGTH,
        description="A run id, or a unique prefix (at least 4 characters) of the id or of its "
        "random part (`3f9a` for `20261122T054312-3f9a1c`).",
    ),
]
PageNumber = Annotated[int, Query(ge=1, le=1_000_000, description="1-based page number.")]
PageSize = Annotated[int, Query(ge=1, le=500, description="Items per page (at most 500).")]


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Page(_Out):
    total: int
    """How many items match in all."""
    page: int
    """This page's number, from 1."""
    page_size: int
    pages: int
    """How many pages the matches fill (0 when nothing matches)."""


class RunPage(_Page):
    """A page of runs, newest first; each without its case results (`results` is empty)."""

    items: list[RunResult]


class CaseResultPage(_Page):
    """A page of a run's case results (SPEC §8 `results[]` items)."""

    items: list[CaseResult]


class BaselineOut(_Out):
    """The run pinned as a suite's baseline."""

    suite: str
    run_id: str
    pinned_at: str
    """When it was pinned (ISO 8601, UTC)."""


class BaselineList(_Out):
    """Every pinned baseline, by suite."""

    items: list[BaselineOut]


class ReviewRequest(_Out):
    """A person's verdict on a case."""

    verdict: Literal["pass", "fail"]
    note: Annotated[str, Field(max_length=10_000)] = ""
    reviewer: Annotated[str, Field(max_length=200)] = ""


class ReviewList(_Out):
    """Every review of a run, in case order, and how they compare with the machine."""

    items: list[Review]
    cases: int
    """The run's stored cases."""
    reviewed: int
    human_passed: int
    agreed: int
    """Reviewed cases where the machine's pass / not pass matches the person's verdict."""
    reviewed_pass_rate: float | None
    """The run's pass rate (0–1) with each reviewed case counted by its human verdict and every
    other case by its machine verdict; null for a run without cases."""


class PinRequest(_Out):
    """Which run to pin as the suite's baseline."""

    run_id: Annotated[str, Field(pattern=RUN_ID_PATTERN, max_length=MAX_ID_LENGTH)]
    """A completed run of the suite: its id or a unique prefix of it."""


class DeletedRun(_Out):
    """A run that was deleted with its case results."""

    id: str
    suite: str
    was_baseline: bool
    """Whether it was its suite's pinned baseline (now none is pinned)."""


class RunFacetsOut(_Out):
    """What a run's case results can be filtered by, with how many cases each selects."""

    verdicts: dict[Verdict, int]
    """Cases per case verdict."""
    tags: dict[str, int]
    """Cases per tag."""
    graders: dict[str, dict[Verdict, int]]
    """Per grader name, its case-level results per verdict."""


class Health(_Out):
    """The server is up and can answer."""

    status: Literal["ok"]
    assay_version: str


def page_json(items: list[str], *, total: int, page: int, page_size: int) -> str:
    """A page document around items that are already JSON text."""
    meta = json.dumps(
        {
            "total": total,
            "page": page,
            "page_size": page_size,
            "pages": math.ceil(total / page_size),
        },
        separators=(",", ":"),
    )
    return f'{meta[:-1]},"items":[{",".join(items)}]}}'
