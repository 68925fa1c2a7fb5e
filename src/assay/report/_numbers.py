"""How a comparison shows its numbers, the same in the terminal and in Markdown."""

from __future__ import annotations

__all__ = ["latency", "percent", "points", "score"]


def percent(value: float | None) -> str:
    """A 0–1 rate or score as a percentage."""
    return "—" if value is None else f"{value * 100:.1f}%"


def points(value: float | None) -> str:
    """A change of a 0–1 rate or score, in points of the 0–100 scale."""
    return "—" if value is None else f"{value * 100:+.1f} pt"


def score(value: float | None) -> str:
    """A 0–1 score with two decimals."""
    return "—" if value is None else f"{value:.2f}"


def latency(value: float | None) -> str:
    """A latency with the digits that tell it apart: a fast function's 0.3 ms is not "0 ms"
    (two such runs would show "0 ms → 0 ms, -37%")."""
    if value is None:
        return "—"
    if value >= 10:
        return f"{value:,.0f} ms"
    return f"{value:.1f} ms" if value >= 1 else f"{value:.3f} ms"
