"""The machine-readable run result (SPEC §8) as JSON text.

`json_chunks` writes a run's document piece by piece as its case results stream from the store,
so `assay run --json` on a large run holds one case result at a time rather than the whole
document (5,000 judged cases: a ~20 MB string and every parsed result).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

import pydantic_core

from assay.results import RunResult

__all__ = [
    "json_chunks",
    "json_chunks_many",
    "render_json",
    "render_json_many",
]

_RESULTS = '\n  "results": []'
"""The top-level `results` key of a run dumped with an indent of 2 and no results (a nested
key is indented deeper, so this text appears once)."""


def render_json(run: RunResult) -> str:
    """One run with its case results, as the §8 JSON document."""
    return run.model_dump_json(indent=2)


def render_json_many(runs: list[RunResult]) -> str:
    """Several runs (one per suite file) as a JSON array of §8 documents."""
    return json.dumps([run.model_dump(mode="json") for run in runs], indent=2)


def json_chunks(run: RunResult, documents: Iterable[str], indent: int = 0) -> Iterator[str]:
    """`render_json(run with results)`, text for text, in chunks: the run without its results,
    split at its `results` key, with each case result in between as it comes.

    Each result comes as its compact JSON document, as this version of assay dumps it
    (`CaseResult.model_dump_json()`, what a fresh run stores), and is indented by pydantic's
    serializer without being parsed into a model: ~40% less work than validating and dumping
    it again. A document another version stored may lack fields this one has: dump such a
    result through the model first (`Store.iter_case_results`, then `model_dump_json`).

    Args:
        run: The run (its own `results` are ignored).
        documents: Its case results' compact JSON, in order, e.g.
            `Store.iter_case_results_json`.
        indent: Extra indentation of every line after the first (inside an array).
    """
    pad = "\n" + " " * indent
    head, _, tail = (
        run.model_copy(update={"results": []}).model_dump_json(indent=2).partition(_RESULTS)
    )
    yield head.replace("\n", pad)
    opened = False
    inner = f"{pad}    ".encode()
    for document in documents:
        yield "," if opened else f'{pad}  "results": ['
        opened = True
        # pydantic's own serializer, so numbers and escapes read exactly as the model's dump
        indented = pydantic_core.to_json(pydantic_core.from_json(document), indent=2)
        yield f"{pad}    " + indented.replace(b"\n", inner).decode()
    yield f"{pad}  ]" if opened else f'{pad}  "results": []'
    yield tail.replace("\n", pad)


def json_chunks_many(runs: Iterable[tuple[RunResult, Iterable[str]]]) -> Iterator[str]:
    """Several runs as a JSON array of §8 documents, streamed as `json_chunks` streams one
    (each run with its case results' compact JSON documents)."""
    yield "["
    for number, (run, documents) in enumerate(runs):
        yield ",\n  " if number else "\n  "
        yield from json_chunks(run, documents, indent=2)
    yield "\n]"
