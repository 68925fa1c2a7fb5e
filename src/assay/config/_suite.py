"""The suite file model (SPEC §2) and the project config model (`assay.yaml`)."""

from __future__ import annotations

import json
from array import array
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal, overload

from pydantic import (
    BeforeValidator,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_serializer,
    field_validator,
    model_validator,
)

from assay._strict_model import NO_NUL, Label, StrictModel
from assay.config._content import ContentPart
from assay.config._execution import SuiteExecution, TestExecution, Unit, VerdictSettings
from assay.config._plugins import install_plugin_types
from assay.config._regression import RegressionConfig
from assay.config._workspace import Workspace
from assay.graders import GraderSpec, RubricItems
from assay.graders.trajectory import ExpectedCall
from assay.judge import JudgeSpec
from assay.results import JSON
from assay.targets import TargetSpec

__all__ = [
    "ExpectedToolCall",
    "InputMessage",
    "ProjectConfig",
    "Simulate",
    "Suite",
    "SuiteTests",
    "TestCase",
    "Turn",
]

SUITE_NAME_PATTERN = r"^[a-z0-9][a-z0-9-]*$"


def _as_list(value: object) -> object:
    """Accept a single string where a list of strings is expected."""
    return [value] if isinstance(value, str) else value


StrList = Annotated[list[str], BeforeValidator(_as_list)]
LabelList = Annotated[list[Label], BeforeValidator(_as_list)]


class InputMessage(StrictModel):
    """One message of a scripted conversation given as the input."""

    role: Literal["system", "user", "assistant", "tool"]
    """Who speaks."""
    content: str | Annotated[list[ContentPart], Field(min_length=1)]
    """What is said: text, or a list of parts (`{type: text, text}`, `{type: image_url,
    image_url: {url, detail?}}` with an http(s) or base64 `data:` URL, `{type: input_audio,
    input_audio: {data, format}}`) sent to the target as written."""

    def wire_content(self) -> str | list[dict[str, JSON]]:
        """The content as JSON: the text, or the parts without unset optional keys."""
        if isinstance(self.content, str):
            return self.content
        return [part.model_dump(exclude_none=True) for part in self.content]


ExpectedToolCall = ExpectedCall
"""A tool call the test expects (`tool`, `args`, and the per-call `args_match` and
`max_duration_ms` that `tool-trajectory` honours): one model for tests and the grader."""


class Turn(StrictModel):
    """One user turn of a conversation test, graded on the reply it gets."""

    input: str | Annotated[list[InputMessage], Field(min_length=1)]
    """What the user says this turn (or several messages)."""
    assertions: list[GraderSpec] = Field(default_factory=list)
    """Graders for this turn's reply (the test's and the suite's graders apply too)."""
    expected_outcomes: StrList = Field(default_factory=list)
    """Statements the judge checks against this turn's reply; all must hold for the turn
    to pass."""


class Simulate(StrictModel):
    """A conversation with a simulated user (SPEC §2.1): a model plays `user` towards `goal`,
    reacting to the agent's replies, until a `stop_when` grader passes on a reply, the
    simulator says it is done, or `max_turns` agent replies."""

    user: Annotated[str, Field(min_length=1)]
    """The persona the simulator plays (what they know, want and how they behave). Data to
    the simulator, never instructions to it."""
    goal: str | None = None
    """What the user is trying to get done; the simulator says `done` once it is (or can
    no longer be)."""
    first_message: str | None = None
    """The user's opening message, sent as it is; without it the simulator opens."""
    max_turns: Annotated[int, Field(ge=1, le=100)] = 8
    """At most this many agent replies."""
    stop_when: list[GraderSpec] = Field(default_factory=list)
    """Graders run on each agent reply: the conversation ends when one passes."""


class TestCase(StrictModel):
    """One test case."""

    id: Annotated[str, Field(min_length=1, pattern=r"^\S+$"), NO_NUL]
    """Unique within the suite; no whitespace."""
    description: str | None = None
    """What this case checks, for people."""
    input: str | Annotated[list[InputMessage], Field(min_length=1)] | None = None
    """The prompt, or a list of {role, content} messages (a scripted history)."""
    turns: Annotated[list[Turn], Field(min_length=1)] | None = None
    """A conversation: each turn is sent with the real replies so far and graded."""
    simulate: Simulate | None = None
    """A conversation with a simulated user instead of `input`/`turns` (SPEC §2.1); the
    case's graders and expected outcomes judge the whole transcript."""
    aggregation: Literal["mean", "min", "last"] = "mean"
    """How turn scores fold into the case score (conversations only)."""
    on_turn_failure: Literal["continue", "stop"] = "continue"
    """Whether a failed turn ends the conversation (conversations only)."""
    expected_output: JSON = None
    """Reference answer: text, or JSON for structured outputs."""
    context: StrList = Field(default_factory=list)
    """Grounding documents the answer should rely on (static; what the target retrieves at
    run time is its own `context`, SPEC §3)."""
    expected_context_ids: StrList = Field(default_factory=list)
    """The ids of the passages the target's retriever should return (the `retrieval`
    grader's relevant set)."""
    expected_tool_calls: list[ExpectedToolCall] = Field(default_factory=list)
    """Tool calls the system under test is expected to make."""
    expected_outcomes: StrList = Field(default_factory=list)
    """Statements the LLM judge checks one by one (✓/✗ with a justification); they are the
    case's pass/fail gate (SPEC §5.4)."""
    rubrics: RubricItems | None = None
    """Rubric items judged together in one call, as a `rubrics` grader that runs after this
    test's `assertions` (SPEC §5.2); a failed `required` item gates the case."""
    assertions: list[GraderSpec] = Field(default_factory=list)
    """Graders for this test (run before the suite's default assertions)."""
    execution: TestExecution | None = None
    """Per-test execution settings."""
    tags: LabelList = Field(default_factory=list)
    """Labels for filtering and reporting."""
    metadata: dict[str, JSON] = Field(default_factory=dict)
    """Free-form data passed to the target and templates."""
    criteria: str | None = None
    """What a good answer does, in words (AgentV's `criteria`); code graders get it as
    `criteria`."""
    workspace: Workspace | None = None
    """This test's workspace settings: its keys replace the suite's `workspace` keys."""

    @model_validator(mode="after")
    def _input_or_turns(self) -> TestCase:
        if self.turns is None and self.simulate is None and self.input is not None:
            return self  # the usual test, told apart without building a list
        given = [k for k in ("input", "turns", "simulate") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of `input`, `turns` (a scripted conversation) or `simulate` "
                f"(a simulated user), got {' and '.join(f'`{k}`' for k in given) or 'none'}"
            )
        return self


class SuiteTests(Sequence[TestCase]):
    """A loaded suite's tests kept as their JSON text, each validated again when it is read.

    A validated `TestCase` holds ~1.6 KB of objects and more; its compact JSON text ~100
    bytes, and that text is already part of the suite document every run snapshots. So a
    100,000-test suite holds the document and one offset per test instead of 100,000 models,
    and a test costs ~5 µs to rebuild when its case runs. Each read builds a new object:
    read a test once and keep it while it is needed.
    """

    __slots__ = ("_bounds", "_text", "with_execution")

    def __init__(self, text: str, bounds: array[int], with_execution: Sequence[int] = ()) -> None:
        """Test `i` is `text[bounds[i]:bounds[i + 1] - 1]` (the tests are written one after
        another with one separator character each; `bounds` has one entry more than tests)."""
        self._text = text
        self._bounds = bounds
        self.with_execution = with_execution
        """Positions of the tests with their own `execution` settings, in order: the only
        ones whose threshold can differ from the suite's."""

    def __len__(self) -> int:
        return len(self._bounds) - 1

    @overload
    def __getitem__(self, index: int) -> TestCase: ...

    @overload
    def __getitem__(self, index: slice) -> list[TestCase]: ...

    def __getitem__(self, index: int | slice) -> TestCase | list[TestCase]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        position = range(len(self))[index]  # negative indexes, and IndexError past the end
        text = self._text[self._bounds[position] : self._bounds[position + 1] - 1]
        try:
            return TestCase.model_validate_json(text)  # ~1 µs faster than parsing in Python
        except ValidationError:  # text pydantic's parser refuses (a lone surrogate) is valid
            return TestCase.model_validate(json.loads(text))

    def __iter__(self) -> Iterator[TestCase]:
        return (self[i] for i in range(len(self)))

    def mentions(self, fragment: str) -> bool:
        """Whether any test's compact JSON text contains `fragment`: a scan at memory speed
        that builds no test (the runner looks for grader types with it)."""
        return fragment in self._text

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # compared by value, like the list it replaces

    def __repr__(self) -> str:
        return f"SuiteTests({len(self)} tests)"


if TYPE_CHECKING:
    _TestList = Sequence[TestCase]
else:
    # Validated as a list (its error messages are the ones users have always seen); typed as
    # a Sequence, since a loaded suite's tests are a `SuiteTests`.
    _TestList = list[TestCase]


class Suite(StrictModel):
    """An eval suite file."""

    name: Annotated[str, Field(pattern=SUITE_NAME_PATTERN, max_length=100)]
    """Suite name: lowercase letters, digits and dashes."""
    description: str | None = None
    """What the suite evaluates."""
    target: str | TargetSpec | None = None
    """The system under test: a name from `targets` (suite or project), or an inline target."""
    targets: dict[Label, TargetSpec] = Field(default_factory=dict)
    """Named target definitions."""
    judge: JudgeSpec | None = None
    """The default LLM judge of the suite's judged graders (over the project's `judge:`)."""
    simulator: JudgeSpec | None = None
    """The model that plays the user of `simulate:` tests (SPEC §2.1); unset fields come from
    the judge's settings."""
    execution: SuiteExecution = SuiteExecution()
    """Suite-wide execution settings."""
    assertions: list[GraderSpec] = Field(default_factory=list)
    """Default graders appended to every test (skip with execution.skip_defaults)."""
    regression: RegressionConfig | None = None
    """Compare every stored run with a baseline run (SPEC §6); see docs/regression.md."""
    workspace: Workspace | None = None
    """A fresh directory per case (template, repos, hooks) where the target and code graders
    run; see docs/suite-reference.md#workspace."""
    tests: Annotated[_TestList, Field(min_length=1)]
    """The test cases, or a path/glob to YAML, JSONL or CSV files of them."""

    @field_validator("tests", mode="wrap")
    @classmethod
    def _loaded_tests(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """Tests the loader validated one by one (`SuiteTests`) are taken as they are."""
        return value if isinstance(value, SuiteTests) else handler(value)

    @field_serializer("tests")
    def _dump_tests(self, tests: Sequence[TestCase]) -> list[TestCase]:
        """Loaded tests (`SuiteTests`) dump as the list they stand for."""
        return list(tests)


class ProjectConfig(VerdictSettings):
    """Project-wide settings in `assay.yaml`, the lowest-priority level below the suite.

    `threshold` and `verdicts` here are the defaults of every suite of the project.
    """

    metrics_pass_threshold: Unit | None = None
    """Default metrics-dimension threshold."""
    cases_pass_threshold: Unit | None = None
    """Default cases-dimension threshold."""
    target: str | None = None
    """Default target name for suites that name none."""
    targets: dict[Label, TargetSpec] = Field(default_factory=dict)
    """Targets shared by every suite of the project."""
    judge: JudgeSpec | None = None
    """The default LLM judge of every suite of the project."""
    store: str | None = None
    """Where runs are stored: a SQLite path or database URL (default .assay/assay.db)."""


install_plugin_types((Turn, Simulate, TestCase, Suite, ProjectConfig))
