"""Evaluate a Python function with assay's API: no YAML, no server, no API key.

Run it with `python examples/python-api/evaluate.py`. It prints one line per case and exits
1 when the run fails, like `assay run`.
"""

from __future__ import annotations

import sys
from typing import Any

import assay
from assay.graders import Contains

FAQ = {
    "refund": "Refunds are accepted within 30 days of purchase.",
    "shipping": "Shipping takes 3-5 business days.",
}


def support_bot(case: dict[str, Any]) -> str:
    """The system under test: gets the case mapping, returns the reply."""
    question = str(case["input"]).lower()
    return next((reply for topic, reply in FAQ.items() if topic in question), "Sorry?")


def no_apology(context: dict[str, Any]) -> dict[str, Any]:
    """An inline grader, called like an in-process code-grader with the grading context."""
    if "sorry" in context["output"].lower():
        return {"score": 0.0, "misses": ["apologises instead of answering"]}
    return {"score": 1.0, "hits": ["answers directly"]}


CASES = [
    {"id": "refund", "input": "What is your refund policy?", "expected_output": "30 days"},
    {"id": "shipping", "input": "How long is shipping?", "expected_output": "3-5 business days"},
    {"id": "warranty", "input": "Is there a warranty?", "expected_output": "2 years"},
]


def main() -> int:
    summary = assay.evaluate(
        CASES,
        target=support_bot,
        graders=[Contains(), no_apology],  # Contains() checks each case's expected_output
        config=assay.EvalConfig(threshold=0.8, store=False),
    )
    for case in summary.results:
        misses = [m for g in case.grader_results for m in g.misses]
        print(f"{case.case_id:<10} {case.verdict:<10} {case.score:.2f}  {'; '.join(misses)}")
    print(f"pass rate {summary.summary.cases_pass_rate_pct:.0f}%  passed={summary.passed}")
    return 0 if summary.passed else 1


if __name__ == "__main__":
    sys.exit(main())
