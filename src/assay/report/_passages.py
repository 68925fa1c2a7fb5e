"""The passages a target retrieved (a case's runtime `context`) as plain text, one numbered
line each, for the text reports (Markdown, JUnit)."""

from __future__ import annotations

from collections.abc import Sequence

from assay.results import RetrievedPassage

__all__ = ["passages_text"]


def passages_text(passages: Sequence[RetrievedPassage]) -> str:
    """`[1] id (score 0.91) text` per passage; the id and score only when the target gave them."""
    lines = []
    for i, passage in enumerate(passages, start=1):
        label = f" {passage.id}" if passage.id is not None else ""
        score = f" (score {passage.score:g})" if passage.score is not None else ""
        lines.append(f"[{i}]{label}{score} {passage.text}".rstrip())
    return "\n".join(lines)
