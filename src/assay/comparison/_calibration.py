"""Agreement between machine and human verdicts (SPEC §6, `assay calibrate`): pure functions.

Both sides are reduced to two labels: the machine's verdict is `pass` or not (borderline, fail
and error all count as `fail`: none of them let a case through), the person's is `pass` or
`fail`. Over n reviewed cases that gives a 2×2 confusion matrix `confusion[machine][human]`,
from which:

- `agreement` = (both pass + both fail) / n, the observed agreement p_o;
- `cohen_kappa` κ = (p_o − p_e) / (1 − p_e), where p_e = (m_pass·h_pass + m_fail·h_fail) / n² is
  the agreement two raters with these label shares would reach by chance; undefined (None)
  when p_e = 1 (both sides gave one and the same label to every case);
- `kappa_ci95`: κ ± 1.96·SE with Cohen's (1960) large-sample SE = √(p_o(1−p_o) / (n(1−p_e)²)),
  clipped to [−1, 1];
- `false_pass_rate`: of the cases the person failed, the share the machine passed (what a
  judge lets through); None when the person failed none.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from assay.results import JSON, CaseResult, GraderResult, Review

__all__ = [
    "Agreement",
    "Calibration",
    "ReviewSummary",
    "agreement",
    "calibrate",
    "review_summary",
]

Label = Literal["pass", "fail"]
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Agreement:
    """Machine against human verdicts over `n` reviewed cases."""

    confusion: Mapping[Label, Mapping[Label, int]]
    """`confusion[machine][human]`: how many cases got that pair of labels."""

    @property
    def n(self) -> int:
        return sum(sum(row.values()) for row in self.confusion.values())

    @property
    def agreement(self) -> float | None:
        n = self.n
        return (self.confusion["pass"]["pass"] + self.confusion["fail"]["fail"]) / n if n else None

    @property
    def chance(self) -> float | None:
        """p_e: the agreement expected from the two sides' label shares alone."""
        n = self.n
        if not n:
            return None
        machine_pass = sum(self.confusion["pass"].values())
        human_pass = self.confusion["pass"]["pass"] + self.confusion["fail"]["pass"]
        return (machine_pass * human_pass + (n - machine_pass) * (n - human_pass)) / n**2

    @property
    def cohen_kappa(self) -> float | None:
        observed, chance = self.agreement, self.chance
        if observed is None or chance is None or math.isclose(chance, 1.0):
            return None
        return (observed - chance) / (1.0 - chance)

    @property
    def kappa_ci95(self) -> tuple[float, float] | None:
        kappa, observed, chance = self.cohen_kappa, self.agreement, self.chance
        if kappa is None or observed is None or chance is None:
            return None
        error = math.sqrt(observed * (1.0 - observed) / (self.n * (1.0 - chance) ** 2))
        return max(-1.0, kappa - Z95 * error), min(1.0, kappa + Z95 * error)

    @property
    def false_pass_rate(self) -> float | None:
        human_fail = self.confusion["pass"]["fail"] + self.confusion["fail"]["fail"]
        return self.confusion["pass"]["fail"] / human_fail if human_fail else None

    def to_json(self) -> dict[str, JSON]:
        """The SPEC §6 shape: `{n, agreement, cohen_kappa, kappa_ci95, confusion,
        false_pass_rate}`, rates rounded to 6 places."""
        interval = self.kappa_ci95
        return {
            "n": self.n,
            "agreement": _rounded(self.agreement),
            "cohen_kappa": _rounded(self.cohen_kappa),
            "kappa_ci95": None if interval is None else [_rounded(v) for v in interval],
            "confusion": {m: dict(row) for m, row in self.confusion.items()},
            "false_pass_rate": _rounded(self.false_pass_rate),
        }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def agreement(pairs: Iterable[tuple[Label, Label]]) -> Agreement:
    """The agreement of `(machine, human)` label pairs."""
    confusion: dict[Label, dict[Label, int]] = {
        "pass": {"pass": 0, "fail": 0},
        "fail": {"pass": 0, "fail": 0},
    }
    for machine, human in pairs:
        confusion[machine][human] += 1
    return Agreement(confusion)


@dataclass(frozen=True)
class Calibration:
    """`assay calibrate`: the case verdict's agreement and each judged grader's."""

    case: Agreement
    graders: Mapping[str, Agreement]

    def to_json(self) -> dict[str, JSON]:
        return {
            "case": self.case.to_json(),
            "graders": {name: a.to_json() for name, a in self.graders.items()},
        }


def _label(verdict: str) -> Label:
    return "pass" if verdict == "pass" else "fail"


def _judged(results: Iterable[GraderResult]) -> Iterable[GraderResult]:
    """Judged grader results, composite members included (an LLM judge answered them)."""
    for result in results:
        if result.judge_model is not None:
            yield result
        yield from _judged(result.children)


def calibrate(
    reviewed: Iterable[tuple[CaseResult, Review]], grader: str | None = None
) -> Calibration:
    """Agreement over reviewed cases: the case verdict, and every judged grader (only
    `grader`, by name, when given); a grader absent from a case is not counted there."""
    case_pairs: list[tuple[Label, Label]] = []
    grader_pairs: dict[str, list[tuple[Label, Label]]] = {}
    for result, review in reviewed:
        case_pairs.append((_label(result.verdict), review.verdict))
        for judged in _judged(result.grader_results):
            if grader is None or judged.name == grader:
                grader_pairs.setdefault(judged.name, []).append(
                    (_label(judged.verdict), review.verdict)
                )
    return Calibration(
        agreement(case_pairs),
        {name: agreement(pairs) for name, pairs in sorted(grader_pairs.items())},
    )


@dataclass(frozen=True)
class ReviewSummary:
    """A run's reviews beside its machine verdicts."""

    cases: int
    reviewed: int
    human_passed: int
    agreed: int
    """Reviewed cases where the machine's pass/not-pass matches the person's verdict."""
    reviewed_pass_rate: float | None
    """The run's pass rate counting each reviewed case by its human verdict and every other
    case by its machine verdict."""


def review_summary(verdicts: Mapping[str, str], reviews: Iterable[Review]) -> ReviewSummary:
    """Summarise `reviews` against the machine `verdicts` (case id → verdict) of one run."""
    human = {r.case_id: r.verdict for r in reviews if r.case_id in verdicts}
    passed = sum(
        (human[case] if case in human else _label(verdict)) == "pass"
        for case, verdict in verdicts.items()
    )
    return ReviewSummary(
        cases=len(verdicts),
        reviewed=len(human),
        human_passed=sum(v == "pass" for v in human.values()),
        agreed=sum(_label(verdicts[c]) == v for c, v in human.items()),
        reviewed_pass_rate=passed / len(verdicts) if verdicts else None,
    )
