"""Cache keys: a sha256 of the canonical JSON of everything that can change a reply."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping

from assay.results import JSON

__all__ = ["KEY_FORMAT_VERSION", "CacheKey", "cache_key"]

KEY_FORMAT_VERSION = 1
"""Bumped when the key recipe changes, so old entries miss instead of answering wrongly."""

_SHORT_KEY = 12


class CacheKey(str):
    """A cache key (the hex digest) that also carries what was called, for error messages.

    A `str` subclass so that callers store, compare and hash it like the plain digest, while
    a replay-mode miss can still say which call was missing without the caller repeating it.
    """

    kind: str
    description: str

    def __new__(cls, digest: str, *, kind: str = "", description: str = "") -> CacheKey:
        # Defaults keep pickle and copy working: they call `__new__(cls, digest)` and then
        # restore the attributes.
        key = super().__new__(cls, digest)
        key.kind = kind
        key.description = description
        return key


def _check_json(value: object, where: str) -> None:
    """Reject anything that is not plain JSON, including what `json.dumps` would coerce.

    Non-string keys and NaN would be silently rewritten, which could make two different
    requests share a key, so they are a programming error in the caller. Tuples pass: they
    serialise exactly like the lists an SDK would send.
    """
    if value is None or isinstance(value, str | bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise TypeError(f"cache identity {where}: {value!r} is not a JSON number")
        return
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _check_json(item, f"{where}[{index}]")
        return
    if isinstance(value, Mapping):
        for name, item in value.items():
            if not isinstance(name, str):
                raise TypeError(f"cache identity {where}: key {name!r} is not a string")
            _check_json(item, f"{where}.{name}")
        return
    raise TypeError(
        f"cache identity {where}: {type(value).__name__} {value!r} is not JSON-serialisable"
    )


def _dumps(value: JSON) -> str:
    """Canonical JSON: sorted keys, no whitespace, UTF-8 kept, floats as `repr`."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def _describe(identity: Mapping[str, JSON], repeat_index: int, digest: str) -> str:
    """A short, recognisable name for the call: `openai/gpt-4o (repeat 0, key 1a2b…)`."""
    names = [str(identity[part]) for part in ("provider", "model") if identity.get(part)]
    where = f"(repeat {repeat_index}, key {digest[:_SHORT_KEY]})"
    return f"{'/'.join(names)} {where}" if names else where


def cache_key(
    kind: str,
    identity: dict[str, JSON],
    *,
    repeat_index: int,
    template_version: str | None = None,
) -> CacheKey:
    """The cache key of one model call.

    Everything that can change the reply goes into the digest: the caller's `identity`
    (provider, model, base_url, full request body with sampling parameters), the repeat index
    (so repeated samples are independent calls, not one reply reused), the prompt template
    version for judge calls, and the key format version. Dict key order does not matter. An
    integer and a float (`1` vs `1.0`) hash differently, which at worst costs a miss.

    Args:
        kind: What is called, e.g. `"target"` or `"judge"`; calls of different kinds never
            share an entry.
        identity: Everything the reply depends on, as plain JSON.
        repeat_index: Which execution of a repeated case this is.
        template_version: The prompt template version hash, for judge calls.

    Returns:
        The sha256 hex digest, carrying a short description for messages.

    Raises:
        TypeError: `identity` holds a value that is not JSON (a programming error).
    """
    _check_json(identity, "$")
    document = {
        "format": KEY_FORMAT_VERSION,
        "kind": kind,
        "identity": identity,
        "repeat_index": repeat_index,
        "template_version": template_version,
    }
    digest = hashlib.sha256(_dumps(document).encode("utf-8")).hexdigest()
    return CacheKey(digest, kind=kind, description=_describe(identity, repeat_index, digest))
