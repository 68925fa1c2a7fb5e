"""Helpers shared by target tests: build a request, run a target through setup/call/teardown."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from assay.errors import TargetError
from assay.results import Message, TargetOutput
from assay.targets import Target, TargetRequest


def ask(text: str = "hello there", **metadata: Any) -> TargetRequest:
    """A one-message request for case `case-1`."""
    return TargetRequest(
        case_id="case-1",
        input=text,
        messages=(Message(role="user", content=text),),
        metadata=metadata,
    )


def run(target: Target, *requests: TargetRequest) -> list[TargetOutput]:
    """Set the target up, call it with each request in turn, and tear it down."""

    async def go() -> list[TargetOutput]:
        await target.setup(Path())
        try:
            return [await target.call(request) for request in requests]
        finally:
            await target.teardown()

    return asyncio.run(go())


def failure(target: Target, request: TargetRequest | None = None) -> TargetError:
    """The TargetError a call raises."""
    with pytest.raises(TargetError) as caught:
        run(target, request or ask())
    return caught.value
