"""Comparing two runs: per-case statuses, suite-level gates, and the statistics behind them.

Pure: the caller loads the runs (from a store, the API or memory) and passes them in. Case
results are reduced at once to compact records (verdict, score, latency), so the full results
of a large run are never held and two 100,000-case runs compare in
about 1.5 s.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeAlias

from assay.comparison._model import (
    CASE_STATUSES,
    CaseComparison,
    CaseStatus,
    CompareStatistics,
    CompareSummary,
    CompareThresholds,
    Comparison,
    GateName,
    GateState,
)
from assay.comparison._stats import (
    BOOTSTRAP_SEED,
    bootstrap_resamples,
    mcnemar_exact_p,
    paired_bootstrap_ci95,
)
from assay.errors import UsageError
from assay.results import CaseResult, CaseScore, RunResult, Verdict

__all__ = ["SIGNIFICANCE_LEVEL", "case_status", "compare"]

SIGNIFICANCE_LEVEL = 0.05
"""McNemar p-values below this count as a significant pass-rate change."""

_DIGITS = 12
LATENCY_NOISE_MS = 1.0
"""A mean latency rise smaller than this is never a regression, whatever its percentage: a fast
function's 0.025 ms against 0.036 ms is +45% of timer noise, and failed CI at random."""
"""Rates, means and deltas are rounded to this many decimals: `0.75 - 0.8` is
`-0.05000000000000004` in binary floating point, and a drop exactly at a bound must not be
flagged because of it."""


_Case: TypeAlias = tuple[Verdict, float | None, float]
"""What a comparison needs from a case result: (verdict, score, duration_ms). A plain tuple:
it is built once per case of both runs, and a NamedTuple costs several times more."""


@dataclass
class _Totals:
    """Suite-level sums of one run."""

    cases: int = 0
    passed: int = 0
    scored: int = 0
    score_sum: float = 0.0
    duration_sum: float = 0.0

    @property
    def pass_rate(self) -> float | None:
        return round(self.passed / self.cases, _DIGITS) if self.cases else None

    @property
    def avg_score(self) -> float | None:
        return round(self.score_sum / self.scored, _DIGITS) if self.scored else None

    @property
    def mean_latency_ms(self) -> float | None:
        return round(self.duration_sum / self.cases, _DIGITS) if self.cases else None


def compare(
    base: RunResult,
    head: RunResult,
    *,
    base_cases: Iterable[CaseResult | CaseScore] | None = None,
    head_cases: Iterable[CaseResult | CaseScore] | None = None,
    thresholds: CompareThresholds | None = None,
    require_significance: bool = False,
) -> Comparison:
    """Compare a head run with a base run (SPEC §6).

    Args:
        base: The reference run.
        head: The candidate run.
        base_cases: The base's case results (e.g. streamed from a store); `base.results`
            when None. Consumed once.
        head_cases: The head's case results; `head.results` when None.
        thresholds: The gates; SPEC §6 defaults when None.
        require_significance: Flag the pass-rate gate only when McNemar's p < 0.05 with more
            passes lost than gained, and the score gate only when the bootstrap interval of
            the paired mean delta lies below 0. The latency gate is unaffected.

    Returns:
        Per-case statuses, suite numbers with `regression_detected` and its reasons, and the
        statistics (always computed, whatever `require_significance` says).

    Raises:
        UsageError: A run has two results with the same case id, or the runs have no case
            id in common (nothing can be compared: "no regression" would be meaningless).
    """
    limits = thresholds or CompareThresholds()
    base_totals, head_totals = _Totals(), _Totals()
    base_records = _records(
        base.id, base.results if base_cases is None else base_cases, base_totals
    )
    head_records = _records(
        head.id, head.results if head_cases is None else head_cases, head_totals
    )
    cases: list[CaseComparison] = []
    deltas: list[float] = []
    lost = gained = 0
    for case_id, b in base_records.items():
        h = head_records.get(case_id)
        if h is None:
            cases.append(_row(case_id, "removed", b, None, None))
            continue
        base_pass, head_pass = b[0] == "pass", h[0] == "pass"
        lost += base_pass and not head_pass
        gained += head_pass and not base_pass
        delta = None
        if b[1] is not None and h[1] is not None:
            delta = round(h[1] - b[1], _DIGITS)
            deltas.append(delta)
        cases.append(_row(case_id, _case_status(b, h, delta, limits.case_score_delta), b, h, delta))
    if all(case.status == "removed" for case in cases):  # no case id is in both runs
        raise UsageError(_nothing_in_common(base, head, len(base_records), len(head_records)))
    cases.extend(
        _row(case_id, "new", None, h, None)
        for case_id, h in head_records.items()
        if case_id not in base_records
    )
    statistics = CompareStatistics(
        mean_delta_ci95=_rounded(paired_bootstrap_ci95(deltas)),
        mcnemar_p=mcnemar_exact_p(lost, gained),
        mean_delta=round(sum(deltas) / len(deltas), _DIGITS) if deltas else None,
        paired_cases=len(deltas),
        resamples=bootstrap_resamples(len(deltas)),
        seed=BOOTSTRAP_SEED,
        pass_to_not_pass=lost,
        not_pass_to_pass=gained,
    )
    summary = _summary(
        base_totals,
        head_totals,
        cases,
        statistics,
        limits,
        require_significance=require_significance,
    )
    return Comparison(
        base=base.id,
        head=head.id,
        thresholds=limits,
        require_significance=require_significance,
        summary=summary,
        cases=cases,
        statistics=statistics,
        warnings=comparison_warnings(base, head, base_totals.cases, head_totals.cases),
    )


def _nothing_in_common(base: RunResult, head: RunResult, base_cases: int, head_cases: int) -> str:
    def side(role: str, run: RunResult, cases: int) -> str:
        return f"{role} run {run.id} (suite '{run.suite}', {cases} case{'s' * (cases != 1)})"

    return (
        f"{side('base', base, base_cases)} and {side('head', head, head_cases)} have no case "
        "id in common, so there is nothing to compare. Compare two runs of the same suite "
        "(e.g. `assay compare latest~1 latest --suite NAME`)."
    )


def comparison_warnings(
    base: RunResult, head: RunResult, base_cases: int, head_cases: int
) -> list[str]:
    """Comparisons that are allowed but probably not what the user meant (`warnings`)."""
    warnings: list[str] = []
    if base.id == head.id:
        warnings.append(f"BASE and HEAD are the same run ({base.id})")
    elif base.suite != head.suite:
        warnings.append(
            f"comparing runs of different suites ('{base.suite}' and '{head.suite}'): only "
            "cases with the same id are paired"
        )
    for role, run in (("BASE", base), ("HEAD", head)):
        if run.status != "completed":
            warnings.append(
                f"{role} run {run.id} is {run.status}: it compares with the cases it finished"
            )
    cached = _cached_share_warning(base, head, base_cases, head_cases)
    if cached:
        warnings.append(cached)
    return warnings


def _cached_share_warning(
    base: RunResult, head: RunResult, base_cases: int, head_cases: int
) -> str | None:
    """A warning when the runs' shares of cases answered from the response cache differ.

    A cached case repeats a recorded reply (and its recorded latency): a run that is mostly
    cached measures the past, so its scores and latency do not compare with a fresh run's.
    """
    shares: list[str] = []
    counted: list[tuple[int, int]] = []
    for role, run, cases in (("BASE", base, base_cases), ("HEAD", head, head_cases)):
        held = run.scheduling.cached_cases if run.scheduling is not None else None
        if held is None:
            if run.scheduling is not None and run.scheduling.cache_hits:
                return (
                    f"{role} run {run.id} answered {run.scheduling.cache_hits} calls from the "
                    "response cache and was made before assay recorded which cases were "
                    "cached (their latency is the cache lookup's, not the target's): "
                    "its latency and cached replies do not compare"
                )
            return None
        counted.append((held, cases))
        share = f"{held / cases * 100:.0f}%" if cases else "0%"
        shares.append(f"{role} {share} ({held} of {cases})")
    (base_held, base_all), (head_held, head_all) = counted
    if base_held * head_all == head_held * base_all:
        return None
    return (
        f"the runs answered different shares of their cases from the response cache: "
        f"{', '.join(shares)}. A cached case repeats a recorded reply and its recorded "
        "latency; run both with --no-cache (or both with the same cache) to compare fresh "
        "replies"
    )


def case_status(
    base_verdict: Verdict,
    base_score: float | None,
    head_verdict: Verdict,
    head_score: float | None,
    *,
    case_score_delta: float,
) -> tuple[CaseStatus, float | None]:
    """The status of a case present in both runs, by the rule `compare` applies to each case,
    and its score delta (`head − base`; None unless both runs scored it).

    The run-level regression metric classifies its cases with this, so a case reads the same
    in `assay run --baseline` as in `assay compare`.
    """
    delta = _change(base_score, head_score)
    base, head = (base_verdict, base_score, 0.0), (head_verdict, head_score, 0.0)
    return _case_status(base, head, delta, case_score_delta), delta


def _case_status(base: _Case, head: _Case, delta: float | None, min_delta: float) -> CaseStatus:
    """The status of a case present in both runs.

    1. A flip between pass and not pass (fail, borderline, error) always counts.
    2. Else, a case that starts or stops being an `error` is regressed or improved: it has no
       score to compare, and an ungraded case is worse than any graded one.
    3. Else a score change larger than `min_delta` in either direction counts; two missing
       scores (error in both runs) leave the case unchanged.
    """
    base_pass, head_pass = base[0] == "pass", head[0] == "pass"
    if base_pass != head_pass:
        return "improved" if head_pass else "regressed"
    base_error, head_error = base[0] == "error", head[0] == "error"
    if base_error != head_error:
        return "regressed" if head_error else "improved"
    if delta is None or abs(delta) <= min_delta:
        return "unchanged"
    return "improved" if delta > 0 else "regressed"


def _records(
    run_id: str, cases: Iterable[CaseResult | CaseScore], totals: _Totals
) -> dict[str, _Case]:
    """The compact records of a run's cases by id, summing the run's totals on the way."""
    records: dict[str, _Case] = {}
    for case in cases:
        case_id, verdict = case.case_id, case.verdict
        # An error has no score (SPEC §1); rows stored before that rule may still carry one.
        score = None if verdict == "error" else case.score
        if case_id in records:
            raise UsageError(
                f"run '{run_id}' has two results for case '{case_id}': "
                "a run can be compared only when its case ids are unique"
            )
        records[case_id] = (verdict, score, case.duration_ms)
        totals.passed += verdict == "pass"
        totals.duration_sum += case.duration_ms
        if score is not None:
            totals.scored += 1
            totals.score_sum += score
    totals.cases = len(records)
    return records


def _row(
    case_id: str, status: CaseStatus, base: _Case | None, head: _Case | None, delta: float | None
) -> CaseComparison:
    return CaseComparison(
        case_id,
        status,
        None if base is None else base[0],
        None if head is None else head[0],
        None if base is None else base[1],
        None if head is None else head[1],
        delta,
    )


def _rounded(interval: tuple[float, float] | None) -> tuple[float, float] | None:
    return None if interval is None else (round(interval[0], _DIGITS), round(interval[1], _DIGITS))


def _change(base: float | None, head: float | None) -> float | None:
    return None if base is None or head is None else round(head - base, _DIGITS)


def _summary(
    base: _Totals,
    head: _Totals,
    cases: list[CaseComparison],
    stats: CompareStatistics,
    limits: CompareThresholds,
    *,
    require_significance: bool,
) -> CompareSummary:
    pass_rate_delta = _change(base.pass_rate, head.pass_rate)
    avg_score_delta = _change(base.avg_score, head.avg_score)
    base_latency, head_latency = base.mean_latency_ms, head.mean_latency_ms
    latency_pct = None
    if base_latency and head_latency is not None:
        latency_pct = round((head_latency - base_latency) / base_latency * 100, _DIGITS)
    reasons: list[str] = []
    notes: list[str] = []
    gates: dict[GateName, GateState] = {
        "pass_rate": "skipped" if pass_rate_delta is None else "ok",
        "avg_score": "skipped" if avg_score_delta is None else "ok",
        "latency": "skipped" if latency_pct is None else "ok",
    }

    def gate(name: GateName, message: str, significant: bool, evidence: str) -> None:
        if not require_significance:
            reasons.append(message)
            gates[name] = "regression"
        elif significant:
            reasons.append(f"{message}; significant: {evidence}")
            gates[name] = "regression"
        else:
            notes.append(f"{message}, not flagged: not significant ({evidence})")
            gates[name] = "not_significant"

    if pass_rate_delta is not None and -pass_rate_delta > limits.max_pass_rate_drop:
        drop, allowed = _apart(-pass_rate_delta * 100, limits.max_pass_rate_drop * 100)
        p = stats.mcnemar_p
        gate(
            "pass_rate",
            f"pass rate dropped {drop} points (allowed {allowed})",
            p < SIGNIFICANCE_LEVEL and stats.pass_to_not_pass > stats.not_pass_to_pass,
            f"McNemar p = {p:.4g}, {stats.pass_to_not_pass} pass→not-pass, "
            f"{stats.not_pass_to_pass} not-pass→pass",
        )
    if avg_score_delta is not None and -avg_score_delta > limits.max_avg_score_drop:
        drop, allowed = _apart(-avg_score_delta * 100, limits.max_avg_score_drop * 100)
        ci = stats.mean_delta_ci95
        gate(
            "avg_score",
            f"average score dropped {drop} points (allowed {allowed})",
            ci is not None and ci[1] < 0,
            "no case scored in both runs"
            if ci is None
            else f"95% CI of the paired mean score delta "
            f"[{ci[0] * 100:+.1f}, {ci[1] * 100:+.1f}] points",
        )
    if latency_pct is not None and latency_pct > limits.max_latency_increase_pct:
        rise, allowed = _apart(latency_pct, limits.max_latency_increase_pct)
        by_ms = (head_latency or 0.0) - (base_latency or 0.0)
        if by_ms < LATENCY_NOISE_MS:
            notes.append(
                f"mean case latency rose {rise}% (allowed {allowed}%), not flagged: by "
                f"{by_ms:.3f} ms, under {LATENCY_NOISE_MS:g} ms"
            )
        else:
            reasons.append(f"mean case latency rose {rise}% (allowed {allowed}%)")
            gates["latency"] = "regression"
    counts = dict.fromkeys(CASE_STATUSES, 0)
    for case in cases:
        counts[case.status] += 1
    return CompareSummary(
        base_pass_rate=base.pass_rate,
        head_pass_rate=head.pass_rate,
        pass_rate_delta=pass_rate_delta,
        base_avg_score=base.avg_score,
        head_avg_score=head.avg_score,
        avg_score_delta=avg_score_delta,
        latency_increase_pct=latency_pct,
        regression_detected=bool(reasons),
        reasons=reasons,
        notes=notes,
        base_cases=base.cases,
        head_cases=head.cases,
        base_mean_latency_ms=base_latency,
        head_mean_latency_ms=head_latency,
        case_counts=counts,
        gates=gates,
    )


def _apart(value: float, allowed: float) -> tuple[str, str]:
    """Both numbers with the fewest decimals (at least one) that tell them apart, so a
    message never reads "dropped 5.0 points (allowed 5.0)"."""
    for digits in range(1, 7):
        shown, bound = f"{value:.{digits}f}", f"{allowed:.{digits}f}"
        if shown != bound:
            break
    return shown, bound
