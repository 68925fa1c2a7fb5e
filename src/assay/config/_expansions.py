"""What `${VAR}` interpolation put into a loaded file, so stored copies can take it back out.

A suite or `assay.yaml` often carries secrets through the environment (`Authorization:
"Bearer ${API_TOKEN}"`, a command target's `env`, a URL with a key in it). The loaded data
holds the expanded values, which the run needs; every copy that leaves the process (the run
snapshot in the store, `assay runs export`, the API) gets the scalars back as they were
written. Loading records each expansion while a file is read (`recording`), and
`Expansions.redact` rewrites JSON text with them.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

__all__ = ["MIN_SECRET_LENGTH", "Expansions", "record", "recording"]

MIN_SECRET_LENGTH = 8
"""Environment values at least this long are also removed wherever they occur inside other
text (a value a model copied or normalised); shorter ones (`8080`, `1`) only where a whole
scalar was expanded from them, since they occur by chance in unrelated text."""

_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""The encoder of the suite document and of run snapshots (`DocumentWriter`, `encode_snapshot`)."""


@dataclass(frozen=True)
class Expansions:
    """The interpolations of one load: scalars as expanded and as written, and the
    environment values they took."""

    written: dict[str, str] = field(default_factory=dict)
    """Each expanded scalar that took an environment value -> the scalar as written
    (`Bearer s3cr3t` -> `Bearer ${TOKEN}`). Scalars that only took defaults are kept as
    expanded: they hold nothing from the environment."""
    values: dict[str, str] = field(default_factory=dict)
    """Each environment value used -> `${NAME}`."""

    def __bool__(self) -> bool:
        return bool(self.written)

    def merged(self, other: Expansions) -> Expansions:
        """Both loads' expansions (a suite's and its project's)."""
        return Expansions({**other.written, **self.written}, {**other.values, **self.values})

    def redact(self, text: str) -> str:
        """`text` (JSON) with every expanded scalar as it was written, then every environment
        value of `MIN_SECRET_LENGTH` characters or more replaced by its `${NAME}`.

        Whole JSON strings are matched by their quotes, so `"Bearer s3cr3t"` becomes
        `"Bearer ${TOKEN}"` and the result stays valid JSON (replacements are encoded the
        same way)."""
        for expanded, written in self.written.items():
            text = text.replace(_ENCODE(expanded), _ENCODE(written))
        for value, name in self.values.items():
            if len(value) >= MIN_SECRET_LENGTH:
                text = text.replace(_ENCODE(value)[1:-1], _ENCODE(name)[1:-1])
        return text


_CURRENT: ContextVar[Expansions | None] = ContextVar("assay_expansions", default=None)


@contextlib.contextmanager
def recording() -> Iterator[Expansions]:
    """Collect the expansions of every YAML file loaded inside the block (a suite, its
    dataset files) into the `Expansions` yielded."""
    found = Expansions()
    token = _CURRENT.set(found)
    try:
        yield found
    finally:
        _CURRENT.reset(token)


def record(written: str, expanded: str, from_environment: dict[str, str]) -> None:
    """Note one interpolated scalar; `from_environment` maps the names whose environment
    value it took (not a default) to those values."""
    found = _CURRENT.get()
    taken = {name: value for name, value in from_environment.items() if value}
    if found is None or not taken:
        return
    found.written.setdefault(expanded, written)
    for name, value in taken.items():
        found.values.setdefault(value, f"${{{name}}}")
