"""The `fake` target: deterministic offline replies for demos and tests."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal, Self, TypeAlias

from pydantic import Field, PrivateAttr, model_validator

from assay.errors import TargetError
from assay.results import JSON, TargetOutput
from assay.targets._base import Target, TargetRequest
from assay.targets._output import parse_target_output, with_duration

__all__ = ["FakeTarget"]

Reply: TypeAlias = str | dict[str, JSON]
_SHOWN_INPUT_CHARS = 80


class _CallCounter:
    """Index of the next list reply. It is run state, not configuration, so any two counters
    compare equal and two fakes with the same options stay equal however often they were called.
    """

    def __init__(self) -> None:
        self._next = 0

    def take(self) -> int:
        index, self._next = self._next, self._next + 1
        return index

    def reset(self) -> None:
        self._next = 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _CallCounter)

    def __hash__(self) -> int:
        return hash(_CallCounter)


class FakeTarget(Target):
    """Answers from a fixed list or an input → reply mapping, without any model.

    A reply is a string, a mapping of the structured output shape (to fake tool calls, token
    usage or cost), or `{error: "message"}` to simulate a failure of the system under test.
    """

    type: Literal["fake"]
    """Target type discriminator."""
    responses: list[Reply] | dict[str, Reply] = Field(default_factory=dict)
    """A list answered in call order (the i-th call gets `responses[i % len]`), or a mapping from
    the input text (the last user message) to its reply."""
    default: Reply | None = None
    """Reply to inputs the `responses` mapping does not list; without it they are an error."""
    delay_ms: Annotated[float, Field(ge=0.0)] = 0.0
    """Simulated latency before each reply, also reported as the reply's `duration_ms`."""

    _calls: _CallCounter = PrivateAttr(default_factory=_CallCounter)

    @model_validator(mode="after")
    def _check_replies(self) -> Self:
        if isinstance(self.responses, list) and not self.responses:
            raise ValueError("`responses` list is empty; give at least one reply")
        if not self.responses and self.default is None:
            raise ValueError("give `responses` or a `default` reply")
        if isinstance(self.responses, list):
            labelled = [(f"responses[{i}]", r) for i, r in enumerate(self.responses)]
        else:
            labelled = [(f"responses[{k!r}]", r) for k, r in self.responses.items()]
        for label, reply in [*labelled, ("default", self.default)]:
            _check_reply(label, reply)
        return self

    async def setup(self, base_dir: Path) -> None:
        """Start the `responses` list from its first entry again, so every run is the same."""
        del base_dir
        self._calls.reset()

    async def call(self, request: TargetRequest) -> TargetOutput:
        """Return the configured reply for this call, after `delay_ms`.

        Raises:
            TargetError: The reply is `{error: ...}`, or the mapping has no entry for the input
                and there is no `default`.
        """
        # Taken before any await, so concurrent calls get consecutive list entries.
        index = self.run_state("_calls", _CallCounter).take()
        reply = self._pick(request.prompt, index)
        if self.delay_ms:
            await asyncio.sleep(self.delay_ms / 1000)
        return with_duration(_reply_output(reply), self.delay_ms)

    def _pick(self, prompt: str, index: int) -> Reply:
        if isinstance(self.responses, list):
            return self.responses[index % len(self.responses)]
        reply = self.responses.get(prompt, self.default)
        if reply is None:
            shown = (
                prompt if len(prompt) <= _SHOWN_INPUT_CHARS else prompt[:_SHOWN_INPUT_CHARS] + "…"
            )
            raise TargetError(
                f"fake target has no response for input {shown!r} and no `default` reply"
            )
        return reply


def _check_reply(label: str, reply: Reply | None) -> None:
    """Reject a malformed reply when the suite loads rather than when the case runs."""
    if not isinstance(reply, Mapping):
        return
    if "error" in reply:
        if set(reply) != {"error"} or not isinstance(reply["error"], str):
            raise ValueError(f"{label}: an error reply must be exactly {{error: <message>}}")
        return
    try:
        parse_target_output(reply, source=label)
    except TargetError as exc:
        raise ValueError(str(exc)) from None


def _reply_output(reply: Reply) -> TargetOutput:
    if isinstance(reply, Mapping) and "error" in reply:
        raise TargetError(reply["error"])
    return parse_target_output(reply, source="fake target reply")
