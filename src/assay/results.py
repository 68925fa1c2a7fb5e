"""Data shapes shared by every layer: grader results, target outputs, case and run results.

These models are the stable machine-readable contract of SPEC §8. They hold data only; the
rules that fill them live in `assay.scoring`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, NamedTuple, Required, TypeAlias, TypedDict

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "JSON",
    "CaseChange",
    "CaseResult",
    "CaseResultFields",
    "CaseScore",
    "Detail",
    "ErrorInfo",
    "ExpectedOutcomeResult",
    "GraderResult",
    "GraderResultFields",
    "Message",
    "RegressionCase",
    "RegressionResult",
    "RegressionStatus",
    "RetrievedPassage",
    "Review",
    "RunConfigSnapshot",
    "RunResult",
    "RunStatus",
    "RunSummary",
    "SampleResult",
    "SchedulingStats",
    "StopReason",
    "TargetOutput",
    "TargetOutputFields",
    "TokenUsage",
    "ToolCall",
    "TurnResult",
    "UsageTally",
    "Verdict",
    "add_cost",
    "add_usage",
    "now_iso",
]

JSON: TypeAlias = Any
"""Any JSON-compatible value (the one named escape hatch from strict typing)."""

Verdict = Literal["pass", "borderline", "fail", "error"]
RunStatus = Literal["running", "completed", "interrupted", "failed"]
RegressionStatus = Literal["new", "clean", "warning", "critical"]
StopReason = Literal["stop_when", "done", "max_turns", "error"]
"""Why a simulated conversation ended (SPEC §2.1; `error`: the agent or the simulator failed)."""
CaseChange = Literal["regressed", "improved", "unchanged", "new", "removed"]


class _Result(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TokenUsage(_Result):
    """Tokens consumed by a model call (or a sum of them)."""

    input: int = 0
    output: int = 0

    @property
    def total(self) -> int:
        return self.input + self.output

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(input=self.input + other.input, output=self.output + other.output)

    def price(self, per_1k_input: float | None, per_1k_output: float | None) -> float | None:
        """The cost in USD at these prices per 1000 tokens; None when neither price is set."""
        if per_1k_input is None and per_1k_output is None:
            return None
        return (self.input * (per_1k_input or 0.0) + self.output * (per_1k_output or 0.0)) / 1000


def add_usage(total: TokenUsage | None, more: TokenUsage | None) -> TokenUsage | None:
    """`total + more` where either may be absent (None: nothing was reported)."""
    if more is None:
        return total
    return more if total is None else total + more


@dataclass
class UsageTally:
    """A running sum of token usage over many results, kept as two ints: `add_usage` builds a
    `TokenUsage` per addition, and a run adds one (or two) per case."""

    input: int = 0
    output: int = 0
    reported: bool = False
    """Whether any usage was added (None stays None: nothing was reported)."""

    def add(self, usage: TokenUsage | None) -> None:
        """Add one result's usage (None: it reported none)."""
        if usage is not None:
            self.input += usage.input
            self.output += usage.output
            self.reported = True

    @property
    def total(self) -> TokenUsage | None:
        """The sum so far, or None when nothing reported any usage."""
        return TokenUsage(input=self.input, output=self.output) if self.reported else None


def add_cost(total: float | None, more: float | None) -> float | None:
    """`total + more` where either may be absent (None: no price was known)."""
    if more is None:
        return total
    return (total or 0.0) + more


class ErrorInfo(_Result):
    """Why something could not be produced: an exception type and a message."""

    type: str
    message: str


class Detail(_Result):
    """One assertion inside a grader (SPEC §1.1); expected/actual are truncated to 80 chars."""

    check: str
    passed: bool
    expected: str | None = None
    actual: str | None = None
    message: str = ""


class GraderResult(_Result):
    """What one grader concluded about one output (SPEC §1.1)."""

    name: str
    type: str
    score: float | None
    verdict: Verdict
    weight: float = 1.0
    required: bool = False
    min_score: float | None = None
    hits: list[str] = Field(default_factory=list)
    misses: list[str] = Field(default_factory=list)
    reasoning: str = ""
    details: list[Detail] = Field(default_factory=list)
    error: ErrorInfo | None = None
    duration_ms: float = 0.0
    token_usage: TokenUsage | None = None
    cost_usd: float | None = None
    judge_model: str | None = None
    """The judge model, for LLM-judged graders; None for deterministic ones."""
    judge_prompt: str | None = None
    """The judge prompt template as `name@version` (a hash of its text), for LLM-judged
    graders: results judged with different wording can be told apart."""
    children: list[GraderResult] = Field(default_factory=list)
    """Member results of a composite grader."""
    fallback: str | None = None
    """Set when the judge could not do this grader's judged check and something else decided
    instead (deep factuality measured shallow, judged tone measured by the heuristics, expected
    outcomes left to the case score): what fell back, and why. Counted in the run summary's
    `judge_fallback_count`."""


class ToolCall(_Result):
    """A tool call made by the system under test, normalised across message formats."""

    tool: str
    args: dict[str, JSON] = Field(default_factory=dict)
    output: JSON = None
    duration_ms: float | None = None


class Message(_Result):
    """One message of a transcript."""

    role: str
    content: str | list[dict[str, JSON]] | None = None
    """The text, or a list of content parts (`{type: text | image_url | input_audio, …}`,
    see `assay._content`)."""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    name: str | None = None


class RetrievedPassage(_Result):
    """One passage the system under test retrieved to answer (its runtime `context`, SPEC §3).

    A passage has its text, its id, or both: retrieval metrics compare ids with a test's
    `expected_context_ids`, the graders that read passages (faithfulness, the judged context
    checks) read the text."""

    text: str = ""
    id: str | None = None
    score: float | None = None
    """The retriever's relevance score, as it reported it (any scale)."""


class TargetOutput(_Result):
    """What the system under test produced for one case (SPEC §3)."""

    output: str
    messages: list[Message] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    context: list[RetrievedPassage] = Field(default_factory=list)
    """The passages the system retrieved, in its rank order (runtime context); graders see
    them apart from the test's static `context`."""
    token_usage: TokenUsage | None = None
    cost_usd: float | None = None
    duration_ms: float = 0.0
    finish_reason: str | None = None
    """Why the model stopped, in OpenAI's words (`stop`, `length`, `tool_calls`,
    `content_filter`): model targets record it from the reply, others may report it."""


class ExpectedOutcomeResult(_Result):
    """The judgement of one `expected_outcomes` statement (SPEC §5.4)."""

    outcome: str
    passed: bool
    justification: str = ""


class TurnResult(_Result):
    """One turn of a conversation test."""

    index: int
    input: JSON
    output: str | None = None
    score: float | None
    verdict: Verdict
    duration_ms: float = 0.0
    error: ErrorInfo | None = None
    grader_results: list[GraderResult] = Field(default_factory=list)
    expected_outcome_results: list[ExpectedOutcomeResult] = Field(default_factory=list)
    """The judge's verdict on each of this turn's `expected_outcomes`."""
    stop_reason: StopReason | None = None
    """On the last turn of a simulated conversation (SPEC §2.1): why it ended. Its other
    turns, and scripted conversations, have none."""
    stop_detail: str = ""
    """What ended it: the `stop_when` grader that passed, the simulator's reason for `done`,
    or the error."""


class SampleResult(_Result):
    """One execution of a case when `execution.repeat` > 1 (SPEC §1.4)."""

    index: int
    score: float | None
    verdict: Verdict
    output: str | None = None
    duration_ms: float = 0.0
    error: ErrorInfo | None = None
    grader_results: list[GraderResult] = Field(default_factory=list)
    expected_outcome_results: list[ExpectedOutcomeResult] = Field(default_factory=list)
    turns: list[TurnResult] = Field(default_factory=list)
    rejudged_scores: list[float | None] = Field(default_factory=list)
    """With `execution.rejudge_borderline`: the case score of every ask of the judge, the
    first included (None where a re-ask failed); the score is their mean."""
    cached: bool = False
    """Every target call of this sample was answered from the response cache."""
    workspace: str | None = None
    """The directory of this sample's workspace when it was kept (`workspace.keep`)."""


class CaseResult(_Result):
    """The graded result of one test case (SPEC §8 `results[]`)."""

    case_id: str
    score: float | None
    verdict: Verdict
    threshold: float
    borderline: float | None = None
    output: str | None = None
    duration_ms: float = 0.0
    """The target's own time (mean over repeats, sum over turns); a case answered from the
    response cache keeps the duration recorded when the reply was produced."""
    cached: bool = False
    """Every target call behind this case (each repeat, each turn) was answered from the
    response cache: its output and `duration_ms` are the recorded ones."""
    token_usage: TokenUsage | None = None
    cost_usd: float | None = None
    error: ErrorInfo | None = None
    grader_results: list[GraderResult] = Field(default_factory=list)
    expected_outcome_results: list[ExpectedOutcomeResult] = Field(default_factory=list)
    input: JSON = None
    messages: list[Message] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    context: list[RetrievedPassage] = Field(default_factory=list)
    """The passages the target retrieved (runtime context), of the representative sample."""
    tags: list[str] = Field(default_factory=list)
    samples: list[SampleResult] = Field(default_factory=list)
    """Every execution when the case was repeated; empty for a single run."""
    turns: list[TurnResult] = Field(default_factory=list)
    """Per-turn results of a conversation test (of the representative sample)."""
    score_ci95: tuple[float, float] | None = None
    """95% t-interval of the mean score (repeat_strategy `confidence_interval`)."""
    rejudged_scores: list[float | None] = Field(default_factory=list)
    """Borderline re-judging: the case score of every ask of the judge (of the representative
    sample); empty when the case was not re-judged."""
    judge_calls: int = 0
    """Judged grader results (and expected-outcome judgements) behind this case, re-asks of
    borderline re-judging included."""
    judge_errors: int = 0
    """How many of those ended in an error."""
    judge_token_usage: TokenUsage | None = None
    """Tokens the judge used for this case (kept apart from the target's `token_usage`)."""
    judge_cost_usd: float | None = None
    """What the judge cost for this case (kept apart from the target's `cost_usd`)."""
    hits: list[str] = Field(default_factory=list)
    """Every grader's hits, in grader order (SPEC §8); a conversation's per turn, prefixed
    `turn N: `. Derived from the grader results when not given."""
    misses: list[str] = Field(default_factory=list)
    """Every grader's misses, in the same order as `hits`."""
    workspaces: list[str] = Field(default_factory=list)
    """Directories of this case's workspaces that were kept (`workspace.keep`), one per
    kept sample; the others were deleted."""

    @model_validator(mode="after")
    def _contract(self) -> CaseResult:
        """SPEC §8 on every result, whoever built it (an older store's included): an `error`
        case has no score, and `hits`/`misses` gather the graders'."""
        if self.verdict == "error":
            self.score = None
        given = self.model_fields_set
        if "hits" not in given or "misses" not in given:
            hits, misses = _gathered(self)
            if "hits" not in given:
                self.hits = hits
            if "misses" not in given:
                self.misses = misses
        return self


def _gathered(case: CaseResult) -> tuple[list[str], list[str]]:
    """The hits and misses of a case's graders in grader order (of every turn, for a scripted
    conversation, whose `grader_results` are its last turn's; a simulated one is graded on its
    whole transcript, its turns only carry the `stop_when` checks)."""
    hits: list[str] = []
    misses: list[str] = []
    if case.turns and case.turns[-1].stop_reason is None:  # scripted: graded turn by turn
        for turn in case.turns:
            prefix = f"turn {turn.index}: "
            for result in turn.grader_results:
                hits.extend(prefix + h for h in result.hits)
                misses.extend(prefix + m for m in result.misses)
        return hits, misses
    results = case.grader_results
    return [h for r in results for h in r.hits], [m for r in results for m in r.misses]


class Review(_Result):
    """A person's verdict on one case (SPEC §6): kept beside the machine verdict, never
    replacing it."""

    run_id: str
    case_id: str
    verdict: Literal["pass", "fail"]
    note: str = ""
    reviewer: str = ""
    """Who reviewed (free text: a name or an address); empty when not given."""
    reviewed_at: str
    """When, as an ISO 8601 UTC timestamp."""


class RunConfigSnapshot(BaseModel):
    """Every threshold in force when the run was created, so old verdicts never change."""

    model_config = ConfigDict(extra="allow")

    threshold: float
    borderline: float | None
    metrics_pass_threshold: float
    cases_pass_threshold: float


class RunSummary(_Result):
    """Run-level result: distribution and the two dimensions of SPEC §1.5."""

    total: int = 0
    passed_count: int = 0
    borderline_count: int = 0
    failed_count: int = 0
    error_count: int = 0
    passed_pct: float = 0.0
    borderline_pct: float = 0.0
    failed_pct: float = 0.0
    error_pct: float = 0.0
    cases_pass_rate_pct: float = 0.0
    weighted_metrics_score_pct: float = 0.0
    metrics_passed: bool = False
    cases_passed: bool = False
    passed: bool = False
    judge_error_rate: float = 0.0
    judge_calls: int = 0
    """Judge results over every case: the denominator of `judge_error_rate`."""
    judge_token_usage: TokenUsage | None = None
    """Tokens used by LLM judges (the target's are the run's `token_usage`)."""
    judge_cost_usd: float | None = None
    """What the LLM judges cost (the target's cost is the run's `cost_usd`)."""
    judge_fallback_count: int = 0
    """Judged checks the judge could not do, decided another way instead (SPEC §1.3): expected
    outcomes left to the case score, deep factuality measured shallow, judged tone measured
    by the heuristics; in cases that produced a verdict, every sample and turn counted."""


class SchedulingStats(_Result):
    """How the run was scheduled: the concurrency actually used, retries, cache use."""

    target_concurrency: int
    """The configured limit of simultaneous target calls."""
    target_concurrency_final: int
    """The limit at the end of the run (lowered on HTTP 429, raised again on success)."""
    target_concurrency_lowest: int
    """The lowest the limit went."""
    rate_limited: int = 0
    """Target calls that were rate limited (HTTP 429)."""
    retries: int = 0
    """Target calls retried after a transient failure."""
    cache_hits: int = 0
    cache_misses: int = 0
    cached_cases: int | None = None
    """Case results whose every target call came from the response cache (`cached`), so the
    share of recorded replies can be compared between runs; None in runs made before assay
    counted them."""


class CaseScore(NamedTuple):
    """The four fields of a case result that comparing runs needs, read without the rest.

    A store answers these from indexed columns, so a 100,000-case comparison does not parse
    every stored result."""

    case_id: str
    verdict: Verdict
    score: float | None
    duration_ms: float


class RegressionCase(_Result):
    """A case whose result changed against the baseline run (SPEC §6 regression metric)."""

    case_id: str
    status: CaseChange
    base_verdict: Verdict | None
    head_verdict: Verdict | None
    base_score: float | None
    head_score: float | None
    score_delta: float | None
    """`head_score − base_score`; None unless both runs scored the case."""


class RegressionResult(_Result):
    """How a run compares with its baseline: the status a suite's `regression:` block gates on.

    A `critical` status fails the run (`RunResult.passed` is false) while the §1.5 summary
    keeps measuring the run on its own.
    """

    status: RegressionStatus
    strategy: Literal["last_passing", "pinned", "run"]
    baseline_run_id: str | None
    """None when no baseline exists yet (status `new`)."""
    tolerance: float
    critical_threshold: float
    base_score: float | None = None
    """Mean case score (0–1) of the baseline run."""
    head_score: float | None = None
    score_delta: float | None = None
    """`head_score − base_score`."""
    case_counts: dict[str, int] = Field(default_factory=dict)
    """Cases per status: regressed, improved, unchanged, new, removed."""
    cases: list[RegressionCase] = Field(default_factory=list)
    """Every case that did not stay `unchanged`, in the run's order (removed ones last)."""


class RunResult(_Result):
    """A run as stored and reported (SPEC §8); `results` may be omitted for listings."""

    id: str
    suite: str
    target: str
    status: RunStatus
    started_at: str
    finished_at: str | None = None
    config: RunConfigSnapshot
    summary: RunSummary
    results: list[CaseResult] = Field(default_factory=list)
    duration_ms: float = 0.0
    token_usage: TokenUsage | None = None
    cost_usd: float | None = None
    assay_version: str = ""
    scheduling: SchedulingStats | None = None
    regression: RegressionResult | None = None
    """The run against its baseline, when the suite or `--baseline` asked for one."""

    @property
    def passed(self) -> bool:
        """The run's verdict: both §1.5 dimensions passed and no critical regression."""
        critical = self.regression is not None and self.regression.status == "critical"
        return self.summary.passed and not critical


def now_iso() -> str:
    """The current UTC time as runs write their timestamps (`started_at`, a baseline's
    `pinned_at`): ISO 8601 with milliseconds, so their text order is chronological."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class TargetOutputFields(TypedDict, total=False):
    """The keywords of `TargetOutput`, typed, for the parser of what a target returned, which
    leaves `duration_ms` unset when it was not reported (as `GraderResultFields`)."""

    output: Required[str]
    messages: list[Message]
    tool_calls: list[ToolCall]
    context: list[RetrievedPassage]
    token_usage: TokenUsage | None
    cost_usd: float | None
    duration_ms: float
    finish_reason: str | None


class GraderResultFields(TypedDict, total=False):
    """The keywords of `GraderResult`, typed, for the grader that builds one from only the
    fields that differ from their defaults (each field given costs its validation): mypy
    checks every key and value where the dict is filled, and `GraderResult(**fields)`
    against the model (`tests/test_results.py` keeps the two in step)."""

    name: Required[str]
    type: Required[str]
    score: Required[float | None]
    verdict: Required[Verdict]
    weight: float
    required: bool
    min_score: float | None
    hits: list[str]
    misses: list[str]
    reasoning: str
    details: list[Detail]
    error: ErrorInfo | None
    duration_ms: float
    token_usage: TokenUsage | None
    cost_usd: float | None
    judge_model: str | None
    judge_prompt: str | None
    children: list[GraderResult]
    fallback: str | None


class CaseResultFields(TypedDict, total=False):
    """The keywords of `CaseResult`, typed, for the runner that builds one per case from the
    fields that differ from their defaults (as `GraderResultFields`)."""

    case_id: Required[str]
    score: Required[float | None]
    verdict: Required[Verdict]
    threshold: Required[float]
    borderline: float | None
    output: str | None
    duration_ms: float
    cached: bool
    token_usage: TokenUsage | None
    cost_usd: float | None
    error: ErrorInfo | None
    grader_results: list[GraderResult]
    expected_outcome_results: list[ExpectedOutcomeResult]
    input: JSON
    messages: list[Message]
    tool_calls: list[ToolCall]
    context: list[RetrievedPassage]
    tags: list[str]
    samples: list[SampleResult]
    turns: list[TurnResult]
    score_ci95: tuple[float, float] | None
    rejudged_scores: list[float | None]
    judge_calls: int
    judge_errors: int
    judge_token_usage: TokenUsage | None
    judge_cost_usd: float | None
    hits: list[str]
    misses: list[str]
    workspaces: list[str]
