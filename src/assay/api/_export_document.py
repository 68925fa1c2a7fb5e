"""An export sent as one JSON object, cut into the JSON texts of its values.

`json.loads` of a 10 MB upload is one call that holds the interpreter for its whole length,
and the server's event loop (in another thread) waits for every such call. Reading the
object one value at a time keeps each step as short as one case result; each text is then
parsed and validated as a line of the JSONL form is, with the same limits and messages.
"""

from __future__ import annotations

import json
import re

from assay.errors import UsageError

__all__ = ["split_document"]

_SPACE = re.compile(r"[ \t\n\r]*")


def split_document(text: str, where: str) -> tuple[dict[str, str], list[str]]:
    """The JSON texts of the top-level values of the object `text` but `results`, by key,
    and of the items of its `results` array.

    Raises:
        UsageError: `text` is not one JSON object, or `results` is not an array.
    """
    reader = _Reader(text, where)
    reader.expect("{")
    header: dict[str, str] = {}
    results: list[str] = []
    if not reader.closes("}"):
        while True:
            key = reader.key()
            reader.expect(":")
            if key == "results":
                results = reader.items()
            else:
                header[key] = reader.value()
            if reader.expect(",}") == "}":
                break
    reader.finish()
    return header, results


class _Reader:
    """A position in the text, moved over whitespace, punctuation and whole values."""

    def __init__(self, text: str, where: str) -> None:
        self.text = text
        self.where = where
        self.at = 0
        self._decoder = json.JSONDecoder()

    def _skip_space(self) -> None:
        match = _SPACE.match(self.text, self.at)
        self.at = match.end() if match else self.at

    def expect(self, allowed: str) -> str:
        """Consume the next character, one of `allowed`; returns it."""
        self._skip_space()
        if self.at >= len(self.text) or self.text[self.at] not in allowed:
            found = repr(self.text[self.at]) if self.at < len(self.text) else "the end"
            choices = " or ".join(repr(c) for c in allowed)
            raise UsageError(
                f"{self.where}: not JSON, or not a JSON object with `results` (an export): "
                f"expected {choices} at character {self.at + 1}, found {found}"
            )
        self.at += 1
        return self.text[self.at - 1]

    def closes(self, closing: str) -> bool:
        """Consume `closing` if it comes next (an empty object or array)."""
        self._skip_space()
        if self.text.startswith(closing, self.at):
            self.at += 1
            return True
        return False

    def value(self) -> str:
        """The JSON text of the next value, consumed."""
        self._skip_space()
        start = self.at
        try:
            _, self.at = self._decoder.raw_decode(self.text, start)
        except RecursionError:
            raise UsageError(
                f"{self.where}: not JSON: nested too deeply (at character {start + 1})"
            ) from None
        except ValueError as exc:
            raise UsageError(f"{self.where}: not JSON: {exc}") from None
        return self.text[start : self.at]

    def key(self) -> str:
        self._skip_space()
        if not self.text.startswith('"', self.at):
            self.expect('"')  # raises: says what was found instead
        key: str = json.loads(self.value())
        return key

    def items(self) -> list[str]:
        """The JSON texts of the items of the array that comes next, consumed."""
        self._skip_space()
        if not self.text.startswith("[", self.at):
            raise UsageError(f"{self.where}: `results` must be a list of case results")
        self.at += 1
        found: list[str] = []
        if self.closes("]"):
            return found
        while True:
            found.append(self.value())
            if self.expect(",]") == "]":
                return found

    def finish(self) -> None:
        self._skip_space()
        if self.at != len(self.text):
            raise UsageError(
                f"{self.where}: not JSON: extra data after the export object "
                f"(at character {self.at + 1})"
            )
