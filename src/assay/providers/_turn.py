"""One model reply in provider-neutral form, read from either wire format."""

from __future__ import annotations

from dataclasses import dataclass, field

from assay.results import JSON, TokenUsage

__all__ = ["ModelTurn", "TurnCall"]


@dataclass(frozen=True)
class TurnCall:
    """A tool call the model asked for in one turn."""

    id: str
    name: str
    args: dict[str, JSON]


@dataclass(frozen=True)
class ModelTurn:
    """One model reply: its text, the tool calls it asks for, the tokens it used, the
    refusal text a model sends instead of content (OpenAI's `refusal`), and why it stopped."""

    text: str | None
    calls: list[TurnCall] = field(default_factory=list)
    usage: TokenUsage | None = None
    refusal: str | None = None
    finish_reason: str | None = None
    """In OpenAI's words (`stop`, `length`, `tool_calls`, `content_filter`) whichever the wire."""
