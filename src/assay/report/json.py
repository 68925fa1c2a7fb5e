"""The machine-readable run result (SPEC §8) as JSON text."""

from __future__ import annotations

import json

from assay.results import RunResult

__all__ = ["render_json", "render_json_many"]


def render_json(run: RunResult) -> str:
    """One run with its case results, as the §8 JSON document."""
    return run.model_dump_json(indent=2)


def render_json_many(runs: list[RunResult]) -> str:
    """Several runs (one per suite file) as a JSON array of §8 documents."""
    return json.dumps([run.model_dump(mode="json") for run in runs], indent=2)
