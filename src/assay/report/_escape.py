"""Escaping of model output for the text formats, so no output can break a report's structure.

A case output may contain `|`, `</details>`, fences, control characters or anything else: every
value that did not come from assay itself goes through one of these before it is written.
"""

from __future__ import annotations

import html
import re

__all__ = ["fence", "html_text", "md_cell", "md_code", "md_text", "shorten", "xml_text"]

_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""Characters XML 1.0 cannot hold at all, not even as character references."""

_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_MD_SPECIAL = re.compile(r"([\\`*_\[\]~|])")
_BACKTICKS = re.compile("`+")


def _visible(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}" if ord(match.group()) < 0x100 else "\ufffd"


def _lines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def shorten(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, ending in "…" when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def xml_text(text: str) -> str:
    """Text XML 1.0 can hold: characters it forbids (e.g. ESC, NUL) shown as `\\x1b`.

    ElementTree escapes `&`, `<` and `>` but writes forbidden characters as they are, which
    makes the whole file unreadable to a JUnit consumer."""
    return _XML_INVALID.sub(_visible, text)


def html_text(text: str) -> str:
    """One line of text inside raw HTML (a `<summary>`): tags and entities are shown, never
    interpreted."""
    return html.escape(_CONTROL.sub(_visible, _lines(text)).replace("\n", " "), quote=True)


def md_text(text: str) -> str:
    """Inline Markdown text that renders as written: no emphasis, links, code spans or HTML.

    Newlines become `<br>`, so the text also stays inside one table cell."""
    escaped = html.escape(_CONTROL.sub(_visible, _lines(text)), quote=False)
    return _MD_SPECIAL.sub(r"\\\1", escaped).replace("\n", "<br>")


def md_cell(text: str) -> str:
    """A table cell: inline text, or an em dash when empty (an empty cell reads as a gap)."""
    return md_text(text) if text else "—"


def md_code(text: str, *, table: bool = False) -> str:
    """An inline code span holding `text` on one line, whatever backticks it contains.

    The delimiter is one backtick longer than the longest run inside (CommonMark). In a
    `table` cell `|` is escaped too: GitHub splits cells on it even inside code spans."""
    flat = _CONTROL.sub(_visible, _lines(text)).replace("\n", " ")
    if table:
        flat = flat.replace("|", "\\|")
    longest = max((len(run) for run in _BACKTICKS.findall(flat)), default=0)
    tick = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat.strip() else ""
    return f"{tick}{pad}{flat}{pad}{tick}"


def fence(text: str) -> str:
    """A fenced code block holding `text` verbatim: the fence is longer than any backtick run
    inside, so no output can close it (and HTML inside a code block is never interpreted)."""
    body = _CONTROL.sub(_visible, _lines(text))
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    tick = "`" * max(3, longest + 1)
    return f"{tick}text\n{body}\n{tick}"
