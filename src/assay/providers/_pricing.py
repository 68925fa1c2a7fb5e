"""Token and cost accounting: what a model call (or several) cost at configured prices."""

from __future__ import annotations

from dataclasses import dataclass

from assay.results import TokenUsage

__all__ = ["Pricing"]


@dataclass(frozen=True)
class Pricing:
    """USD per 1000 input and output tokens; a missing price counts as unknown, not free."""

    per_1k_input: float | None = None
    per_1k_output: float | None = None

    def cost(self, usage: TokenUsage | None) -> float | None:
        """The cost of `usage`; None when no usage was reported or no price is set."""
        return usage.price(self.per_1k_input, self.per_1k_output) if usage else None
