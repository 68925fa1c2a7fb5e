"""Message content that is a list of parts (text, images, audio), and its text renderings.

A message's `content` is text, or OpenAI's list of parts: `{type: text, text}`,
`{type: image_url, image_url: {url, detail?}}` (an http(s) URL or a `data:` URL) and
`{type: input_audio, input_audio: {data, format}}`. Models get the parts as they are; every
place that shows content as text (judge prompts, reports, the terminal) uses `content_text`,
which joins the text parts and shows media as a short placeholder, so a multi-megabyte
`data:` URL never reaches a judge prompt or a report.
"""

from __future__ import annotations

import re

from assay.results import JSON

__all__ = [
    "MAX_IMAGE_BYTES",
    "PART_TYPES",
    "abbreviated",
    "content_text",
    "data_url",
    "image_type",
    "part_placeholder",
    "readable",
]

PART_TYPES = ("text", "image_url", "input_audio")
"""The content part types assay inputs take (OpenAI's Chat Completions shapes)."""

MAX_IMAGE_BYTES = 20 * 1024 * 1024
"""The largest image file an AgentV `{type: file}` block inlines as a `data:` URL when the
suite loads (OpenAI's per-image limit)."""
_IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}

_DATA_URL = re.compile(
    r"data:(?P<mime>[\w.+-]+/[\w.+-]+)?(?P<params>(?:;[^;,]*)*),(?P<data>.*)", re.S
)
_LONG = 200
"""Strings longer than this are abbreviated in placeholders (a URL's head stays readable)."""


def data_url(url: str) -> tuple[str, str] | None:
    """The media type and base64 payload of a base64 `data:` URL; None for any other text."""
    match = _DATA_URL.fullmatch(url)
    if match is None or ";base64" not in match.group("params"):
        return None
    return match.group("mime") or "application/octet-stream", match.group("data")


def image_type(name: str) -> str | None:
    """The media type of an image file by its suffix; None for other files."""
    suffix = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return _IMAGE_TYPES.get(f".{suffix}")


def _decoded_size(data: str) -> int:
    """The byte size base64 text decodes to (without decoding it)."""
    data = data.strip()
    return max(0, len(data) * 3 // 4 - data[-2:].count("="))


def _short_url(url: str) -> str:
    """An image URL as a placeholder shows it: a `data:` URL as its type and decoded size."""
    parsed = data_url(url)
    if parsed is not None:
        return f"data:{parsed[0]} ({_decoded_size(parsed[1])} bytes)"
    if len(url) <= _LONG:
        return url  # also one already shortened (a stored result's)
    if url.startswith("data:"):
        return f"data:… ({len(url)} chars)"
    return f"{url[:_LONG]}… ({len(url)} chars)"


def part_placeholder(part: JSON) -> str:
    """One part as text: a text part's text; an image or audio part as a short placeholder."""
    if not isinstance(part, dict):
        return str(part)
    kind = part.get("type")
    if kind == "text":
        return str(part.get("text", ""))
    if kind == "image_url":
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        return f"[image: {_short_url(str(url))}]"
    if kind == "input_audio":
        audio = part.get("input_audio")
        data = audio.get("data") if isinstance(audio, dict) else None
        fmt = audio.get("format") if isinstance(audio, dict) else None
        size = _decoded_size(data) if isinstance(data, str) else 0
        return f"[audio: {fmt or '?'} ({size} bytes)]"
    return f"[{kind or 'part'}]"


def content_text(content: JSON) -> str | None:
    """Content as text: the text itself, or the parts' texts and placeholders joined by
    newlines; None stays None."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part_placeholder(p) for p in content)
    return str(content)


def _is_parts(value: JSON) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(p, dict) and p.get("type") in PART_TYPES for p in value)
    )


def readable(value: JSON) -> JSON:
    """`value` (an input: text, messages, or a conversation's turns) with every message's
    list of parts as its text (`content_text`), for prompts and reports that show text."""
    if isinstance(value, dict):
        return {
            k: content_text(v) if k == "content" and _is_parts(v) else readable(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [readable(v) for v in value]
    return value


def abbreviated(value: JSON) -> JSON:
    """`value` with every base64 `data:` URL and audio payload longer than a placeholder
    replaced by one (`data:image/png (1234 bytes)`); the structure stays. What a stored result
    keeps of an input: the suite holds the media, the store does not repeat it per case."""
    if isinstance(value, str):
        if value.startswith("data:") and len(value) > _LONG:
            return _short_url(value)
        return value
    if isinstance(value, list):
        return [abbreviated(v) for v in value]
    if isinstance(value, dict):
        out = {k: abbreviated(v) for k, v in value.items()}
        audio = out.get("input_audio") if out.get("type") == "input_audio" else None
        if isinstance(audio, dict) and isinstance(audio.get("data"), str):
            data = str(audio["data"])
            if len(data) > _LONG:
                out["input_audio"] = {**audio, "data": f"({_decoded_size(data)} bytes)"}
        return out
    return value
