"""NUL characters out of text before it reaches the database.

PostgreSQL text cannot hold U+0000 ("text fields cannot contain NUL (0x00) bytes"), and a
model's output, a judge's justification or an uploaded result may contain one: one such case
refused the whole batch it was committed with. Each NUL becomes U+FFFD, the replacement
character, on both backends alike, so a SQLite and a PostgreSQL store hold the same text and a
reader sees that a character was replaced (dropping it silently would change the text
unseen). Suite ids, tags and names are refused at load instead (`assay.config`).
"""

from __future__ import annotations

import re

__all__ = ["REPLACEMENT", "json_without_nul", "without_nul"]

REPLACEMENT = "\ufffd"
"""What a NUL character is stored as."""

_ESCAPED_NUL = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")
"""`\\u0000` in JSON text, not preceded by an odd number of backslashes (an escaped
backslash followed by the letters `u0000` is text, not a NUL)."""


def without_nul(text: str) -> str:
    """`text` with every NUL character replaced by U+FFFD."""
    return text.replace("\x00", REPLACEMENT) if "\x00" in text else text


def json_without_nul(document: str) -> str:
    """JSON text whose strings hold no NUL: each `\\u0000` escape (and any raw NUL) becomes
    U+FFFD, so the document and the values parsed from it agree.

    The common case (no NUL anywhere) costs two substring searches."""
    if "\\u0000" in document:
        document = _ESCAPED_NUL.sub(lambda m: m.group(1) + REPLACEMENT, document)
    return without_nul(document)
