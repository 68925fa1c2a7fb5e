"""The regression metric of a run (SPEC §6): find its baseline, then measure the run against it.

The baseline is resolved once, when the run is created, and recorded in the run's snapshot,
so a resumed run is measured against the same baseline even if a newer run passed or another
run was pinned in between. Both runs are reduced to (verdict, score) per case as their
results stream by; no full case result is held.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, TypeAlias, runtime_checkable

from assay._strict_model import suggest
from assay.errors import UsageError
from assay.results import (
    JSON,
    CaseResult,
    CaseScore,
    RegressionCase,
    RegressionResult,
    RunResult,
    RunSummary,
    Verdict,
)

if TYPE_CHECKING:
    from assay.config import LoadedSuite
    from assay.runner._plan import RunPlan
    from assay.store import Baseline

__all__ = [
    "STRATEGIES",
    "BaselineReader",
    "RegressionSettings",
    "RegressionTracker",
    "ResolvedBaseline",
    "check_baseline",
    "regression_settings",
    "track_new_run",
    "track_resumed_run",
]

Strategy = Literal["last_passing", "pinned", "run"]
STRATEGIES = ("last_passing", "pinned")
"""The baseline names that are strategies; anything else names a run."""

_DIGITS = 12  # as in compare: float noise must not push a drop across a bound

_Record: TypeAlias = tuple[Verdict, float | None]


@dataclass(frozen=True)
class RegressionSettings:
    """The regression settings in force for a run (the suite block, then `--baseline`)."""

    baseline: str
    """`last_passing`, `pinned`, or a run id or id prefix."""
    tolerance: float
    critical_threshold: float
    case_score_delta: float
    requested: bool
    """Asked for by `--baseline` / `EvalConfig.baseline`, not only by the suite's block: such
    a run must be stored, while an in-memory run of a suite with a block just skips it."""

    @property
    def strategy(self) -> Strategy:
        """How the baseline is chosen: one of the strategies, or `run` for a given id."""
        if self.baseline == "last_passing":
            return "last_passing"
        return "pinned" if self.baseline == "pinned" else "run"


def regression_settings(loaded: LoadedSuite, baseline: str | None) -> RegressionSettings | None:
    """The settings of a run of `loaded`: None when neither the suite's `regression:` block
    nor a `baseline` option asks for the metric. The option wins over the block's baseline;
    tolerances come from the block, or the SPEC §6 defaults."""
    block = loaded.suite.regression
    if block is None and baseline is None:
        return None
    from assay.comparison import (  # a run without a baseline never loads it (~20 ms)
        DEFAULT_CRITICAL_THRESHOLD,
        DEFAULT_REGRESSION_TOLERANCE,
        CompareThresholds,
    )

    if block is None:
        return RegressionSettings(
            baseline=str(baseline),
            tolerance=DEFAULT_REGRESSION_TOLERANCE,
            critical_threshold=DEFAULT_CRITICAL_THRESHOLD,
            case_score_delta=CompareThresholds().case_score_delta,
            requested=True,
        )
    return RegressionSettings(
        baseline=baseline if baseline is not None else block.strategy,
        tolerance=block.tolerance,
        critical_threshold=block.critical_threshold,
        case_score_delta=block.case_score_delta,
        requested=baseline is not None,
    )


@runtime_checkable
class BaselineReader(Protocol):
    """What finding a baseline needs from the sink: the read side of `assay.store.Store`."""

    def get_run(self, run_id: str, *, include_results: bool = False) -> RunResult: ...

    def iter_case_scores(self, run_id: str) -> Iterator[CaseScore]: ...

    def get_snapshot(self, run_id: str) -> dict[str, JSON]: ...

    def get_baseline(self, suite: str) -> Baseline | None: ...

    def last_passing_run(
        self, suite: str, target: str, *, before: str, exclude: str | None = None
    ) -> RunResult | None: ...

    def describe(self) -> str: ...


@dataclass(frozen=True)
class ResolvedBaseline:
    """The settings of a run's regression metric and the baseline run they chose."""

    settings: RegressionSettings
    run: RunResult | None
    """The baseline run; None when the strategy found none (the status is `new`)."""

    def snapshot(self) -> dict[str, JSON]:
        """The entry of the run's snapshot that `--resume` reads back."""
        s = self.settings
        return {
            "baseline": s.baseline,
            "baseline_run_id": self.run.id if self.run is not None else None,
            "tolerance": s.tolerance,
            "critical_threshold": s.critical_threshold,
            "case_score_delta": s.case_score_delta,
        }


def _reader(plan: RunPlan, sink: object, settings: RegressionSettings) -> BaselineReader | None:
    """The sink as a store to read earlier runs from; None when the metric is skipped.

    Raises:
        UsageError: A baseline was requested explicitly and the run is not stored.
    """
    if isinstance(sink, BaselineReader):
        return sink
    if settings.requested:
        raise UsageError(
            f"{plan.loaded.display}: baseline '{settings.baseline}' was requested, but this run "
            "is kept in memory (EvalConfig(store=False)), where there are no earlier runs to "
            "compare with; store the run, or drop the baseline"
        )
    return None


def _named_run(store: BaselineReader, plan: RunPlan, ref: str) -> RunResult:
    """The run `ref` names, checked to be a completed run of the plan's suite.

    Raises:
        UsageError: No such run, or it belongs to another suite or did not complete.
    """
    try:
        run = store.get_run(ref)
    except UsageError as exc:
        hint = suggest(ref, list(STRATEGIES))
        raise UsageError(
            f"baseline: {str(exc).rstrip('.')}.{hint} "
            "Give `last_passing`, `pinned` or a stored run's id"
        ) from None
    if run.suite != plan.suite_name:
        raise UsageError(
            f"baseline: run '{run.id}' belongs to suite '{run.suite}', not "
            f"'{plan.suite_name}'; a baseline must be a run of the same suite"
        )
    if run.status != "completed":
        raise UsageError(
            f"baseline: run '{run.id}' is {run.status}, and only a completed run can be a "
            f"baseline; finish it first (assay run --resume {run.id}) or name another run"
        )
    return run


def check_baseline(plan: RunPlan, sink: object) -> None:
    """Fail now, before any run starts, if the plan's baseline can never be found: a run id
    that is not stored (or of another suite), or an explicit baseline for an unstored run.

    Raises:
        UsageError: As above.
    """
    settings = plan.regression
    if settings is None:
        return
    store = _reader(plan, sink, settings)
    if store is not None and settings.strategy == "run":
        _named_run(store, plan, settings.baseline)


def track_new_run(
    plan: RunPlan, sink: object, *, run_id: str, started_at: str
) -> RegressionTracker | None:
    """Find the baseline of a new run (`run_id`, starting at `started_at`) and load its
    cases; None when the metric is off or skipped (an in-memory run of a suite with a
    `regression:` block).

    `last_passing` with no earlier passing run and `pinned` with no pin are not errors: the
    run's status is then `new`.

    Raises:
        UsageError: A named run is unknown, of another suite or unfinished, or an explicit
            baseline was asked of an unstored run.
    """
    settings = plan.regression
    if settings is None:
        return None
    store = _reader(plan, sink, settings)
    if store is None:
        return None
    found: RunResult | None
    if settings.strategy == "last_passing":
        found = store.last_passing_run(
            plan.suite_name, plan.target_name, before=started_at, exclude=run_id
        )
    elif settings.strategy == "pinned":
        pin = store.get_baseline(plan.suite_name)
        found = None if pin is None else store.get_run(pin.run_id)
    else:
        found = _named_run(store, plan, settings.baseline)
    return RegressionTracker(ResolvedBaseline(settings, found), store)


def track_resumed_run(sink: object, run_id: str) -> RegressionTracker | None:
    """Load the baseline recorded when run `run_id` was created (None: it had none).

    Raises:
        UsageError: The recorded baseline run has been deleted since.
    """
    if not isinstance(sink, BaselineReader):
        return None
    entry = sink.get_snapshot(run_id).get("regression")
    if not isinstance(entry, dict):
        return None
    try:  # a stored snapshot may come from an import: checked, never trusted
        settings = RegressionSettings(
            baseline=str(entry["baseline"]),
            tolerance=float(entry["tolerance"]),
            critical_threshold=float(entry["critical_threshold"]),
            case_score_delta=float(entry["case_score_delta"]),
            requested=False,
        )
    except (KeyError, TypeError, ValueError):
        raise UsageError(
            f"run '{run_id}' cannot be resumed: its snapshot's regression settings are not "
            "valid; start a new run"
        ) from None
    base_id = entry.get("baseline_run_id")
    found = None
    if base_id is not None:
        try:
            found = sink.get_run(str(base_id))
        except UsageError:
            raise UsageError(
                f"run '{run_id}' is measured against baseline run '{base_id}', which is no "
                f"longer in {sink.describe()}; a resumed run keeps its baseline, so it cannot "
                "be completed: start a new run instead"
            ) from None
    return RegressionTracker(ResolvedBaseline(settings, found), sink)


class RegressionTracker:
    """Holds (verdict, score) of the baseline's cases and of the run's as they finish, and
    builds the `RegressionResult` when the run completes."""

    def __init__(self, baseline: ResolvedBaseline, store: BaselineReader) -> None:
        self.baseline = baseline
        self._base: dict[str, _Record] = {}
        if baseline.run is not None:
            for case in store.iter_case_scores(baseline.run.id):
                self._base[case.case_id] = (case.verdict, case.score)
        self._head: dict[str, _Record] = {}

    def add(self, case: CaseResult) -> None:
        """Record one finished case of the run."""
        self._head[case.case_id] = (case.verdict, case.score)

    def result(self, summary: RunSummary, order: Iterable[str]) -> RegressionResult:
        """The run against its baseline.

        Args:
            summary: The run's final summary (its mean case score is the head score).
            order: The run's case ids in suite order, to list changed cases in.
        """
        from assay.comparison import CASE_STATUSES, regression_status

        settings, base_run = self.baseline.settings, self.baseline.run
        head_score = summary.weighted_metrics_score_pct / 100
        base_score = None if base_run is None else base_run.summary.weighted_metrics_score_pct / 100
        status = regression_status(
            base_score,
            head_score,
            tolerance=settings.tolerance,
            critical_threshold=settings.critical_threshold,
        )
        cases: list[RegressionCase] = []
        counts = dict.fromkeys(CASE_STATUSES, 0)
        if base_run is not None:
            cases = list(self._changes(order, settings.case_score_delta))
            for case in cases:
                counts[case.status] += 1
            paired = sum(case_id in self._base for case_id in self._head)
            counts["unchanged"] = paired - counts["regressed"] - counts["improved"]
        return RegressionResult(
            status=status,
            strategy=settings.strategy,
            baseline_run_id=None if base_run is None else base_run.id,
            tolerance=settings.tolerance,
            critical_threshold=settings.critical_threshold,
            base_score=base_score,
            head_score=head_score,
            score_delta=None if base_score is None else round(head_score - base_score, _DIGITS),
            case_counts=counts if base_run is not None else {},
            cases=cases,
        )

    def _changes(self, order: Iterable[str], min_delta: float) -> Iterator[RegressionCase]:
        """Every case that did not stay unchanged: the run's in `order`, then removed ones."""
        from assay.comparison import case_status

        for case_id in order:
            head = self._head.get(case_id)
            if head is None:
                continue
            base = self._base.get(case_id)
            if base is None:
                yield RegressionCase(
                    case_id=case_id,
                    status="new",
                    base_verdict=None,
                    head_verdict=head[0],
                    base_score=None,
                    head_score=head[1],
                    score_delta=None,
                )
                continue
            status, delta = case_status(
                base[0], base[1], head[0], head[1], case_score_delta=min_delta
            )
            if status != "unchanged":
                yield RegressionCase(
                    case_id=case_id,
                    status=status,
                    base_verdict=base[0],
                    head_verdict=head[0],
                    base_score=base[1],
                    head_score=head[1],
                    score_delta=delta,
                )
        for case_id, base in self._base.items():
            if case_id not in self._head:
                yield RegressionCase(
                    case_id=case_id,
                    status="removed",
                    base_verdict=base[0],
                    head_verdict=None,
                    base_score=base[1],
                    head_score=None,
                    score_delta=None,
                )
