"""The holder of a target's run state (its client), kept out of the target's equality.

A target is a pydantic model compared with its config; the client it opens in `setup` is run
state, not configuration, so the slot that holds it compares equal to any other slot.
"""

from __future__ import annotations

from typing import Generic, TypeVar

__all__ = ["Slot"]

_C = TypeVar("_C")


class Slot(Generic[_C]):
    """Holds a client opened by `setup`; any two slots compare equal, so a target equals its
    config whether or not `setup` has run."""

    def __init__(self) -> None:
        self.value: _C | None = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Slot)

    def __hash__(self) -> int:
        return hash(Slot)
