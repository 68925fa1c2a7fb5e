"""promptfoo chat content lists as assay content parts.

promptfoo sends a chat message's content list to the provider as written, so a config carries
the content shape of the provider it targets: OpenAI's (`text`, `image_url`, `input_audio`),
the Responses API's (`input_text`, `input_image`), Anthropic's (`image` with a base64 or url
`source`), Bedrock Converse's (`{text}`, `{image: {format, source: {bytes}}}`) or Gemini's
(`inline_data`). assay inputs take OpenAI's shape and each target translates it, so every one of
these becomes an OpenAI part here; an image given as bare base64 (what promptfoo loads a
`file://` image variable as) becomes a `data:` URL of the type its first bytes show.
"""

from __future__ import annotations

import re
from typing import Any

from assay.interop.promptfoo._inputs import Unsupported
from assay.results import JSON

__all__ = ["content_parts"]

_MAGIC = {
    "/9j/": "image/jpeg",
    "iVBORw0KGgo": "image/png",
    "R0lGOD": "image/gif",
    "UklGR": "image/webp",
    "Qk": "image/bmp",
    "PHN2Zy": "image/svg+xml",
    "PD94bW": "image/svg+xml",
}
"""How base64 text starts for each image type (its file signature, encoded)."""
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_FORMATS = {"jpg": "jpeg"}


def content_parts(content: list[Any]) -> list[dict[str, JSON]]:
    """A chat message's content list as assay content parts.

    Raises:
        Unsupported: A part assay inputs cannot hold (a video, a document, a file id), or an
            image that is neither a URL nor base64 (e.g. an unset variable).
    """
    return [_part(p) for p in content]


def _part(part: Any) -> dict[str, JSON]:
    if isinstance(part, str):
        return {"type": "text", "text": part}
    if not isinstance(part, dict):
        raise Unsupported(f"a content part is {type(part).__name__}, not a mapping")
    kind = part.get("type")
    if kind in ("text", "input_text") or (kind is None and "text" in part):
        return {"type": "text", "text": str(part.get("text", ""))}
    if kind in ("image_url", "input_image"):
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        out: dict[str, JSON] = {"url": _image_url(url)}
        detail = image.get("detail") if isinstance(image, dict) else part.get("detail")
        if detail in ("auto", "low", "high"):
            out["detail"] = detail
        return {"type": "image_url", "image_url": out}
    if kind == "image" and isinstance(part.get("source"), dict):
        return _anthropic_image(part["source"])
    if kind is None and isinstance(part.get("image"), dict):
        return _converse_image(part["image"])
    inline = part.get("inline_data", part.get("inlineData"))
    if kind is None and isinstance(inline, dict):
        mime = str(inline.get("mime_type", inline.get("mimeType", "")))
        if mime.startswith("image/"):
            return _image_part(_image_url(inline.get("data"), mime))
    if kind == "input_audio" and isinstance(part.get("input_audio"), dict):
        audio = part["input_audio"]
        return {
            "type": "input_audio",
            "input_audio": {"data": audio.get("data"), "format": audio.get("format")},
        }
    shown = kind or ", ".join(sorted(part)) or "empty"
    raise Unsupported(
        f"a chat message holds a '{shown}' content part; assay inputs take text, image "
        "(image_url) and audio (input_audio) parts, so this case cannot be carried over"
    )


def _image_part(url: str) -> dict[str, JSON]:
    return {"type": "image_url", "image_url": {"url": url}}


def _anthropic_image(source: dict[str, Any]) -> dict[str, JSON]:
    if source.get("type") == "url":
        return _image_part(_image_url(source.get("url")))
    return _image_part(_image_url(source.get("data"), source.get("media_type")))


def _converse_image(image: dict[str, Any]) -> dict[str, JSON]:
    source = image.get("source")
    data = source.get("bytes") if isinstance(source, dict) else None
    fmt = str(image.get("format", "")).lower()
    return _image_part(_image_url(data, f"image/{_FORMATS.get(fmt, fmt)}" if fmt else None))


def _image_url(value: Any, mime: Any = None) -> str:
    """An image as a URL: an http(s) or `data:` URL as it is, bare base64 as a `data:` URL.

    Raises:
        Unsupported: The value is none of these.
    """
    text = value.strip() if isinstance(value, str) else ""
    if text.startswith(("http://", "https://", "data:")):
        return text
    compact = re.sub(r"\s+", "", text)
    if compact and _BASE64.fullmatch(compact):
        sniffed = next((t for head, t in _MAGIC.items() if compact.startswith(head)), None)
        kind = sniffed or (mime if isinstance(mime, str) and mime.startswith("image/") else None)
        return f"data:{kind or 'image/jpeg'};base64,{compact}"
    shown = text[:60] or "empty"
    raise Unsupported(
        f"an image in a chat message is neither a URL nor base64 image data ({shown}); "
        "set the variable to an https:// URL, a data: URL or a file:// image"
    )
