"""The result of mapping one promptfoo assertion, shared by the mappers."""

from __future__ import annotations

from dataclasses import dataclass, field

from assay.results import JSON

__all__ = ["Mapped"]


@dataclass
class Mapped:
    """One assertion's result: the grader, or why it was left out; and any approximation."""

    grader: dict[str, JSON] | None = None
    unmapped: str | None = None
    approximated: list[str] = field(default_factory=list)
