"""The Target protocol: how assay calls the system under test for one case."""

from __future__ import annotations

import builtins
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar, cast

from assay._content import content_text
from assay._strict_model import StrictModel
from assay.results import JSON, Message, TargetOutput

__all__ = ["Target", "TargetRequest"]

_State = TypeVar("_State")


@dataclass(frozen=True)
class TargetRequest:
    """One call of the system under test: the case as the target sees it."""

    case_id: str
    input: JSON
    """The test input as written: a string, or a list of {role, content} messages."""
    messages: tuple[Message, ...]
    """The input as a message list (a string input becomes one user message)."""
    metadata: dict[str, JSON] = field(default_factory=dict)
    repeat_index: int = 0
    base_dir: Path = Path()
    """Directory of the suite file: relative paths in target options resolve against it."""
    workspace: Path | None = None
    """The case's workspace directory (`workspace:` in the suite): a `command` target runs in
    it, a `python` function gets it as `workspace`; None without one."""

    @property
    def prompt(self) -> str:
        """The input as one prompt string: the text, or the last user message."""
        if isinstance(self.input, str):
            return self.input
        for message in reversed(self.messages):
            if message.role == "user" and message.content is not None:
                return content_text(message.content) or ""
        return ""

    def as_mapping(self) -> dict[str, JSON]:
        """The case as handed to Python functions and printed for commands (SPEC §3); with
        a workspace, its path as `workspace`."""
        mapping: dict[str, JSON] = {
            "id": self.case_id,
            "input": self.input,
            "messages": [m.model_dump(exclude_defaults=True) for m in self.messages],
            "metadata": self.metadata,
            "repeat_index": self.repeat_index,
        }
        if self.workspace is not None:
            mapping["workspace"] = str(self.workspace)
        return mapping


class Target(StrictModel, ABC):
    """Base of every target type: a frozen config model that can call the system under test.

    `call` raises `assay.errors.TargetError` (or anything else) when the system fails; the
    runner records the case as `error` with that reason.
    """

    type: str

    def describe(self) -> str:
        """A one-line description stored with the run."""
        return self.type

    def run_state(self, name: str, kind: builtins.type[_State]) -> _State:
        """The private attribute `name` (run state: a client, a counter, a recording).

        Read from pydantic's private dict: `self._name` goes through a `__getattr__` that raises
        and catches an AttributeError, ~10 µs on every call of the system under test. `kind` is
        the attribute's class, for the type checker.
        """
        private = self.__pydantic_private__
        assert private is not None
        return cast(_State, private[name])

    def check(self, base_dir: Path) -> None:
        """Refuse what `setup` would refuse, without calling the system under test or opening
        a connection: the one check `assay run` (when it plans the run) and `assay validate`
        share. A missing API key is not checked here (see `missing_key`). Default none.

        Raises:
            UsageError: The target cannot be set up (what, and how to fix it).
            ConfigError: A file the target reads is invalid (issues located in that file).
        """
        del base_dir

    def missing_key(self) -> str | None:
        """Why `setup` would stop for want of an API key (its environment variable is
        unset), or None: a warning for `validate`, an error for `run`. Default None."""
        return None

    async def setup(self, base_dir: Path) -> None:
        """Prepare once before the first case (import a module, open a session); default
        `check`."""
        self.check(base_dir)

    async def teardown(self) -> None:
        """Release what `setup` acquired (HTTP sessions, SDK clients); default none."""

    def cache_key(self, request: TargetRequest) -> dict[str, JSON] | None:
        """What identifies this call for the response cache, or None if it is not cacheable.

        Model-backed targets return everything that determines the reply: provider, model,
        base_url and the full request body with sampling parameters. The runner adds the
        repeat index. Local code (python, command) is not cached: it may change any time.
        """
        del request
        return None

    @abstractmethod
    async def call(self, request: TargetRequest) -> TargetOutput:
        """Run the system under test on one case."""
