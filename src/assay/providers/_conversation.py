"""A test's input messages on the wire: tool calls given ids, tool results paired with them.

`Message` carries no call ids, so both wire formats pair an input `tool` message with the call
it answers by position, here, once.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from assay.errors import TargetError
from assay.results import Message

__all__ = ["link_tool_messages"]


def link_tool_messages(
    messages: Sequence[Message],
) -> list[tuple[Message, list[str], str | None]]:
    """Give input tool calls ids and pair each `tool` message with the call it answers.

    `Message` has no call ids, so calls are paired by position: the n-th `tool` message after an
    assistant message answers its n-th call. Returns (message, ids of its calls, id answered).

    Raises:
        TargetError: A `tool` message answers no call.
    """
    pending: deque[str] = deque()
    linked: list[tuple[Message, list[str], str | None]] = []
    for index, message in enumerate(messages):
        if message.role == "tool":
            if not pending:
                raise TargetError(
                    f"input message {index} has role 'tool' but answers no tool call of an "
                    "earlier assistant message; write it as a user message instead"
                )
            linked.append((message, [], pending.popleft()))
            continue
        ids = [f"call_{index}_{n}" for n in range(len(message.tool_calls))]
        pending.extend(ids)
        linked.append((message, ids, None))
    return linked
