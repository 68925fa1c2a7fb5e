"""Content parts of an input message: text, images and audio (OpenAI's Chat Completions shapes).

A test's input message may hold a list of parts instead of text, so a suite can test a vision
or audio model. The parts are checked strictly here (an unknown part type, a malformed URL or
an unknown audio format is a located error) and reach the target as written: see
`assay._content` for how they are shown as text.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, field_validator

from assay._strict_model import StrictModel

__all__ = ["AudioData", "ContentPart", "ImageUrl", "ImageUrlPart", "InputAudioPart", "TextPart"]

_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")
_DATA_URL = re.compile(r"data:image/[\w.+-]+;base64,(?P<data>.*)", re.S)


class TextPart(StrictModel):
    """Text."""

    type: Literal["text"]
    text: str
    """The text."""


class ImageUrl(StrictModel):
    """Where the image is: an http(s) URL, or the image itself as a base64 `data:` URL."""

    url: Annotated[str, Field(min_length=1)]
    """`https://…`, or `data:image/png;base64,…`."""
    detail: Literal["auto", "low", "high"] | None = None
    """OpenAI's resolution hint; sent only where given."""

    @field_validator("url")
    @classmethod
    def _http_or_data(cls, url: str) -> str:
        if url.startswith(("http://", "https://")):
            return url
        match = _DATA_URL.fullmatch(url)
        if match is None:
            raise ValueError(
                f"an image URL must start with http://, https:// or data:image/<type>;base64, "
                f"(got '{url[:60]}'); for a local file, encode it as a data: URL"
            )
        if not _BASE64.fullmatch(match.group("data")):
            raise ValueError("the data: URL's payload is not base64")
        return url


class ImageUrlPart(StrictModel):
    """An image."""

    type: Literal["image_url"]
    image_url: ImageUrl
    """The image's URL (and OpenAI's `detail`)."""


class AudioData(StrictModel):
    """Audio given inline."""

    data: Annotated[str, Field(min_length=1)]
    """The audio, base64-encoded."""
    format: Literal["wav", "mp3"]
    """Its encoding."""

    @field_validator("data")
    @classmethod
    def _base64(cls, data: str) -> str:
        if not _BASE64.fullmatch(data):
            raise ValueError("audio data must be base64")
        return data


class InputAudioPart(StrictModel):
    """Audio."""

    type: Literal["input_audio"]
    input_audio: AudioData
    """The audio and its format."""


ContentPart = Annotated[TextPart | ImageUrlPart | InputAudioPart, Field(discriminator="type")]
"""One part of a message's content, told apart by `type`."""
