"""Reading a reply body as the JSON object every wire promises, with one set of messages.

The aiohttp OpenAI wire, the AWS services and the SDK clients all get bytes or decoded JSON
back; a broken body (cut off by a proxy: retryable) and a body that is JSON but no object (the
server's answer: final) read the same whichever path met them.
"""

from __future__ import annotations

import json
from typing import Any

from assay.providers._errors import MalformedReplyError

__all__ = ["broken_json", "json_object", "json_reply"]


def broken_json(exc: Exception) -> MalformedReplyError:
    """The retryable error for a reply body that does not decode as JSON (`exc` says where)."""
    return MalformedReplyError(
        f"the reply is not valid JSON for the API ({exc}); "
        "the server or a proxy in between sent a broken response",
        kind="MalformedResponse",
        retryable=True,
    )


def json_object(reply: object) -> dict[str, Any]:
    """A decoded reply, checked to be a JSON object.

    Raises:
        MalformedReplyError: It is not one (final: the server meant it).
    """
    if not isinstance(reply, dict):
        raise MalformedReplyError(
            f"the reply is not a JSON object: {str(reply)[:200]}", kind="MalformedResponse"
        )
    return reply


def json_reply(raw: bytes) -> dict[str, Any]:
    """A reply body as a JSON object.

    Raises:
        MalformedReplyError: It is not one (broken JSON is retryable).
    """
    try:
        reply = json.loads(raw)
    except ValueError as exc:
        raise broken_json(exc) from None
    return json_object(reply)
