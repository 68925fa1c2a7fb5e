"""Run snapshots as JSON text, with parts that arrive already encoded embedded verbatim.

The biggest part of a snapshot is the suite document, which the loader keeps as compact JSON
text (see `LoadedSuite.document`). Parsing it back only to encode it again would hold the whole
suite as Python objects a second time at the start of every run, so it is spliced in as is.
"""

from __future__ import annotations

import json
import secrets
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assay.results import JSON

__all__ = ["RawJSON", "decode_snapshot", "encode_snapshot"]


class RawJSON(str):
    """Text that is already valid JSON, written into the snapshot as it is."""

    __slots__ = ()


def encode_snapshot(snapshot: dict[str, JSON]) -> str:
    """The snapshot as JSON text; `RawJSON` values go in verbatim (top level only)."""
    marker = f"\x00raw-{secrets.token_hex(8)}\x00"
    raw = {key: value for key, value in snapshot.items() if isinstance(value, RawJSON)}
    placeholders = {key: f"{marker}{key}" for key in raw}
    text = json.dumps(
        {key: placeholders.get(key, value) for key, value in snapshot.items()},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    for key, value in raw.items():
        text = text.replace(json.dumps(placeholders[key], ensure_ascii=False), value, 1)
    return text


def decode_snapshot(text: str) -> dict[str, JSON]:
    """The snapshot written by `encode_snapshot`, parsed."""
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("a run snapshot must be a JSON object")
    return value
