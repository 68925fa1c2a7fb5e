"""A target's client (a provider, an AWS endpoint): the slot that holds it from `setup` to
`teardown`, and its failures as `TargetError`s.

A target is a pydantic model compared with its config; the client it opens in `setup` is run
state, not configuration, so the slot that holds it compares equal to any other slot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from assay.errors import TargetError

if TYPE_CHECKING:
    from assay.providers import ProviderError

__all__ = ["Slot", "target_error"]


class _Closable(Protocol):
    async def close(self) -> None: ...


_C = TypeVar("_C", bound=_Closable)


class Slot(Generic[_C]):
    """Holds a client opened by `setup`; any two slots compare equal, so a target equals its
    config whether or not `setup` has run."""

    def __init__(self) -> None:
        self.value: _C | None = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Slot)

    def __hash__(self) -> int:
        return hash(Slot)

    async def hold(self, client: _C) -> None:
        """Hold `client`, closing the one held before (`setup` run twice)."""
        previous, self.value = self.value, client
        if previous is not None:
            await previous.close()

    async def close(self) -> None:
        """Close the held client, if any, and hold none (`teardown`)."""
        client, self.value = self.value, None
        if client is not None:
            await client.close()

    def held(self, who: str) -> _C:
        """The held client.

        Raises:
            RuntimeError: There is none: `setup` has not run (`who` names the target).
        """
        if self.value is None:
            raise RuntimeError(f"{who}: call setup() before call()")
        return self.value


def target_error(who: str, exc: ProviderError) -> TargetError:
    """The target's failure for a provider's: its message after `who`, its kind and retry
    advice."""
    return TargetError(
        f"{who}: {exc.message}",
        kind=exc.kind,
        retryable=exc.retryable,
        retry_after_s=exc.retry_after_s,
        rate_limited=exc.rate_limited,
    )
