"""Asking whether a suite's text names a file, without asking the OS about text that cannot.

Suite values such as a judge `prompt:` are either text or a file path. Handing any text to
`Path.is_file` makes the OS raise, not answer, for text no path can be: a one-line prompt
over 255 bytes failed the load with "File name too long". Here text is a path only if it
could be one; everything else is text, and the OS is never asked.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["FILE_SCHEME", "anchor_files", "could_be_path", "existing_file", "is_file"]

FILE_SCHEME = "file://"
"""The explicit form of a file reference (`prompt: file://prompts/grade.md`, as AgentV 4.6+
writes it): always a file, relative to the suite when not absolute."""

_MAX_PATH_BYTES = 4096  # PATH_MAX on Linux; macOS is lower, and the OS then answers "no"
_MAX_NAME_BYTES = 255  # NAME_MAX of every common file system


def could_be_path(text: str) -> bool:
    """Whether `text` can name a file at all: not empty, one line, no NUL, at most 4096
    bytes, and no part between slashes over 255 bytes."""
    if not text or any(c in text for c in "\n\r\0"):
        return False
    encoded = text.encode("utf-8", "surrogateescape")
    if len(encoded) > _MAX_PATH_BYTES:
        return False
    return all(len(part) <= _MAX_NAME_BYTES for part in encoded.split(b"/"))


def is_file(path: Path) -> bool:
    """`path.is_file()`, False (not an exception) when the OS refuses the name itself."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def existing_file(text: str, base_dir: Path | None) -> Path | None:
    """The file `text` names (relative to `base_dir` unless absolute) if it could be a path
    and a file is there; None otherwise, without asking the OS about impossible names."""
    if not could_be_path(text):
        return None
    path = Path(text)
    if base_dir is not None and not path.is_absolute():
        path = base_dir / path
    return path if is_file(path) else None


def anchor_files(argv: list[str], base: Path) -> list[str]:
    """`argv` with each relative argument that names an existing file under `base` made
    absolute: a command written next to the suite (`python graders/check.py`) still finds its
    files when it runs in another directory (a case's workspace). Options (`-x`, `--k=v`) and
    arguments naming no file under `base` are left as they are."""
    anchored = []
    for arg in argv:
        candidate = base / arg
        named = not arg.startswith("-") and "=" not in arg and not Path(arg).is_absolute()
        anchored.append(str(candidate.resolve()) if named and is_file(candidate) else arg)
    return anchored
