"""The base of every configuration model: frozen, no unknown keys, "did you mean" on typos."""

from __future__ import annotations

import difflib
import functools
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, model_validator
from pydantic_core import PydanticCustomError

__all__ = ["NO_NUL", "Label", "StrictModel", "suggest"]


def _no_nul(value: str) -> str:
    if "\0" in value:
        raise ValueError(
            "contains a NUL character (\\0), which no id, tag or name may hold (PostgreSQL "
            "cannot store it); remove it"
        )
    return value


NO_NUL = AfterValidator(_no_nul)
"""Refuses a NUL character; the last item of an `Annotated` string with constraints."""

Label = Annotated[str, NO_NUL]
"""Text that identifies something (a test id, a tag, a grader or target name): stored,
filtered and shown everywhere, so refused at load when it holds a NUL character."""


def suggest(word: str, candidates: list[str] | set[str]) -> str:
    """Return " Did you mean 'x'?" for the closest candidate, or "" when none is close."""
    matches = difflib.get_close_matches(word, sorted(candidates), n=1, cutoff=0.6)
    return f" Did you mean '{matches[0]}'?" if matches else ""


@functools.cache
def _known_keys(model: type[BaseModel]) -> frozenset[str]:
    """A model's field names and aliases, worked out once per class (a 100,000-test suite
    validates that many models, and reading `model_fields` each time cost ~1 s)."""
    known: set[str] = set()
    for name, field in model.model_fields.items():
        known.add(name)
        if field.alias:
            known.add(field.alias)
    return frozenset(known)


class StrictModel(BaseModel):
    """Configuration model: immutable, and every unknown key is an error with a suggestion.

    The unknown-key check runs before field validation so the message can name the closest
    known key, which pydantic's own `extra_forbidden` error cannot.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _reject_unknown_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        known = _known_keys(cls)
        if known.issuperset(data):
            return data  # the usual case, checked without building a list
        unknown = [key for key in data if key not in known]
        if unknown:
            key = str(unknown[0])
            public = {k for k in known if not k.startswith("_")}
            raise PydanticCustomError(
                "unknown_key",
                "unknown key '{key}'.{hint}",
                {"key": key, "hint": suggest(key, public)},
            )
        return data
