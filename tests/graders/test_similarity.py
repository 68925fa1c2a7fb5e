"""The similarity and rouge graders (SPEC §4): closeness to a reference text on 0–1."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import write
from tests.graders._grading import error_of, grade, load_errors

from assay import EvalConfig, evaluate
from assay.results import Detail

REFERENCE = "The refund is accepted within thirty days."
ANSWER = "Refunds are accepted within 30 days."


# --- similarity -------------------------------------------------------------------------------


def test_ratio_is_the_default_and_reports_one_detail() -> None:
    result = grade({"type": "similarity", "value": "sitting"}, "kitten")
    assert result.score == pytest.approx(8 / 13, abs=1e-12)  # 2 × LCS 4 / (6 + 7) characters
    assert (result.verdict, result.error) == ("fail", None)
    assert result.hits == []
    assert result.misses == ["similarity.ratio 0.62 is below 0.80"]
    assert result.details == [
        Detail(
            check="similarity.ratio",
            passed=False,
            expected="sitting",
            actual="kitten",
            message="ratio 0.6154",
        )
    ]


@pytest.mark.parametrize(
    ("method", "output", "reference", "score"),
    [
        ("ratio", "kitten", "sitting", 8 / 13),
        ("indel", "kitten", "sitting", 8 / 13),  # the same measure as ratio
        ("levenshtein", "kitten", "sitting", 4 / 7),  # 3 edits over 7 characters
        ("partial_ratio", "Your refund is approved", "refund", 1.0),
        ("ratio", "refund 30 days", "30 days refund", 0.5),
        ("token_sort_ratio", "refund 30 days", "30 days refund", 1.0),
        ("token_set_ratio", "accepted refund, yes", "refund accepted", 6 / 7),
        ("token_set_ratio", "refund denied", "refund", 1.0),  # a subset counts as equal
        ("levenshtein", "日本語のテキスト", "日本語テキスト", 7 / 8),
    ],
)
def test_each_method(method: str, output: str, reference: str, score: float) -> None:
    result = grade({"type": "similarity", "method": method, "value": reference}, output)
    assert result.score == pytest.approx(score, abs=1e-12)
    assert result.details[0].check == f"similarity.{method}"


def test_the_reference_defaults_to_the_expected_output() -> None:
    result = grade(
        {"type": "similarity"}, "Refunds within 30 days", expected="refunds within 30 days"
    )
    assert result.score == pytest.approx(21 / 22, abs=1e-12)
    assert result.verdict == "pass"
    assert result.hits == ["similarity.ratio 0.95 is at least 0.80"]


def test_a_json_expected_output_is_compared_as_compact_json_text() -> None:
    result = grade({"type": "similarity"}, '{"a": 1}', expected={"a": 1})
    assert result.score == 1.0
    assert result.details[0].expected == '{"a": 1}'


def test_case_insensitive_folds_both_sides() -> None:
    spec = {"type": "similarity", "value": "STRASSE", "case_sensitive": False}
    assert grade(spec, "straße").score == 1.0
    assert grade({"type": "similarity", "value": "STRASSE"}, "straße").score == 0.0


def test_min_score_sets_the_bar_of_the_detail_and_the_verdict() -> None:
    result = grade({"type": "similarity", "value": "sitting", "min_score": 0.6}, "kitten")
    assert result.verdict == "pass"
    assert result.details[0].passed is True
    assert result.hits == ["similarity.ratio 0.62 is at least 0.60"]


@pytest.mark.parametrize(
    "method",
    ["ratio", "partial_ratio", "token_sort_ratio", "token_set_ratio", "levenshtein", "indel"],
)
def test_empty_texts(method: str) -> None:
    assert grade({"type": "similarity", "method": method, "value": ""}, "").score == 1.0
    assert grade({"type": "similarity", "method": method, "value": ""}, "text").score == 0.0
    assert grade({"type": "similarity", "method": method}, "", expected="text").score == 0.0


def test_a_huge_output_is_graded_quickly() -> None:
    output = "refund " * 150_000  # about 1 MB
    started = time.perf_counter()
    result = grade({"type": "similarity", "value": "refund policy"}, output)
    assert time.perf_counter() - started < 5.0
    assert result.score == pytest.approx(2 * 7 / (len(output) + 13), abs=1e-12)
    assert result.details[0].actual == ("refund " * 12)[:79] + "…"


def test_negated_similarity_passes_on_different_text() -> None:
    result = grade({"type": "similarity", "value": "yes", "negate": True}, "no")
    assert (result.score, result.verdict) == (1.0, "pass")
    assert result.hits == ["similarity.ratio 0.00 is below 0.80"]


def test_no_reference_at_run_time_is_a_grader_error() -> None:
    result = grade({"type": "similarity"}, "x")
    assert result.verdict == "error"
    assert result.error is not None
    assert result.error.message == "similarity needs `value` or the test's `expected_output`"


def test_an_unknown_method_is_rejected() -> None:
    assert error_of({"type": "similarity", "method": "jaro"}) == (
        "Input should be 'ratio', 'partial_ratio', 'token_sort_ratio', 'token_set_ratio', "
        "'levenshtein' or 'indel'"
    )


# --- rouge ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "check", "score", "message"),
    [
        ({}, "rouge.rougeL", 6 / 13, "precision 0.5000, recall 0.4286, F 0.4615"),
        (
            {"variant": "rouge1"},
            "rouge.rouge1",
            6 / 13,
            "precision 0.5000, recall 0.4286, F 0.4615",
        ),
        (
            {"variant": "rouge2"},
            "rouge.rouge2",
            2 / 11,
            "precision 0.2000, recall 0.1667, F 0.1818",
        ),
        (
            {"variant": "rouge1", "use_stemmer": True},
            "rouge.rouge1",
            8 / 13,
            "precision 0.6667, recall 0.5714, F 0.6154",
        ),
    ],
)
def test_rouge_variants(options: dict[str, Any], check: str, score: float, message: str) -> None:
    result = grade({"type": "rouge", **options}, ANSWER, expected=REFERENCE)
    assert result.score == pytest.approx(score, abs=1e-12)
    assert result.verdict == "fail"
    assert result.details == [
        Detail(check=check, passed=False, expected=REFERENCE, actual=ANSWER, message=message)
    ]
    assert result.misses == [f"{check} {score:.2f} is below 0.80"]


CORPUS = [
    ("the cat sat on the mat", "the cat was on the mat"),
    ("Refunds are accepted within 30 days of purchase.", "Refunds: 30 days, with a receipt."),
    ("a b a b a b c", "b a b a"),
    ("Running runners ran quickly.", "The runner runs quick"),
    ("nothing in common", "zzz yyy"),
]


@pytest.mark.parametrize("variant", ["rouge1", "rouge2", "rougeL"])
@pytest.mark.parametrize("stem", [False, True])
def test_scores_equal_rouge_scores_own_scorer(variant: str, stem: bool) -> None:
    from rouge_score.rouge_scorer import RougeScorer

    reference_scorer = RougeScorer([variant], use_stemmer=stem)
    for reference, output in CORPUS:
        want = reference_scorer.score(reference, output)[variant].fmeasure
        spec = {"type": "rouge", "variant": variant, "use_stemmer": stem, "value": reference}
        assert grade(spec, output).score == pytest.approx(want, abs=1e-12), (reference, output)


def test_identical_text_scores_one_and_passes() -> None:
    result = grade({"type": "rouge", "value": REFERENCE}, REFERENCE)
    assert (result.score, result.verdict) == (1.0, "pass")
    assert result.hits == ["rouge.rougeL 1.00 is at least 0.80"]


def test_empty_output_scores_zero() -> None:
    result = grade({"type": "rouge", "value": REFERENCE}, "")
    assert (result.score, result.error) == (0.0, None)
    assert result.details[0].message == "precision 0.0000, recall 0.0000, F 0.0000"


def test_non_latin_output_scores_zero_and_says_why() -> None:
    result = grade({"type": "rouge", "value": REFERENCE}, "Возврат принимается в течение дней.")
    assert result.score == 0.0
    assert result.details[0].message == (
        "precision 0.0000, recall 0.0000, F 0.0000; the output has no words the tokenizer keeps"
    )


def test_a_non_latin_reference_is_a_grader_error_with_the_fix() -> None:
    result = grade({"type": "rouge"}, "Привет мир", expected="Привет мир")
    assert (result.score, result.verdict) == (None, "error")
    assert result.error is not None
    assert result.error.message == (
        "rouge: the reference text has no words rouge-score can read (it keeps only a–z and "
        "0–9, so other scripts are dropped); set `tokenizer: unicode`"
    )


@pytest.mark.parametrize(
    ("reference", "output", "score"),
    [
        (
            "Возврат принимается в течение тридцати дней",
            "Возврат принимается в течение 30 дней",
            5 / 6,
        ),
        ("退款在三十天内受理", "退款在30天内受理", 2 * (7 / 8) * (7 / 9) / (7 / 8 + 7 / 9)),
        ("Straße Ärger", "STRASSE ärger", 1.0),  # casefolded: strasse = strasse, ärger = ärger
    ],
)
def test_the_unicode_tokenizer_reads_every_script(
    reference: str, output: str, score: float
) -> None:
    spec = {"type": "rouge", "variant": "rouge1", "tokenizer": "unicode", "value": reference}
    result = grade(spec, output)
    assert result.score == pytest.approx(score, abs=1e-12)


def test_rouge2_needs_two_reference_words() -> None:
    result = grade({"type": "rouge", "variant": "rouge2"}, "yes", expected="Yes.")
    assert result.error is not None
    assert (
        result.error.message == "rouge: the reference text has only 1 word; rouge2 needs at least 2"
    )


def test_a_huge_output_gets_rouge_l_quickly() -> None:
    output = "the refund is accepted " * 45_000  # about 1 MB, 180,000 words
    started = time.perf_counter()
    result = grade({"type": "rouge", "value": REFERENCE}, output)
    assert time.perf_counter() - started < 5.0
    # the longest common subsequence is "the refund is accepted": 4 words
    assert result.score == pytest.approx(2 * (4 / 180_000) * (4 / 7) / (4 / 180_000 + 4 / 7))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"type": "rouge", "use_stemmer": True, "tokenizer": "unicode"},
            "Value error, use_stemmer applies the English Porter stemmer and works only with "
            "`tokenizer: rouge`; remove use_stemmer or the unicode tokenizer",
        ),
        (
            {"type": "rouge", "value": "  "},
            "Value error, `value` is empty; ROUGE needs reference words",
        ),
        (
            {"type": "rouge", "value": "日本語"},
            "Value error, `value` has no words rouge-score can read (it keeps only a–z and 0–9, so "
            "other scripts are dropped); set `tokenizer: unicode`",
        ),
        (
            {"type": "rouge", "variant": "rouge2", "value": "refund"},
            "Value error, `value` has only 1 word; rouge2 needs at least 2",
        ),
        (
            {"type": "rouge", "variant": "rougeLsum"},
            "Input should be 'rouge1', 'rouge2' or 'rougeL'",
        ),
        (
            {"type": "rouge", "variants": ["rouge1"]},
            "unknown key 'variants'. Did you mean 'variant'?",
        ),
    ],
)
def test_bad_rouge_configs_are_rejected(spec: dict[str, Any], message: str) -> None:
    assert error_of(spec) == message


# --- the suite loader and a run ----------------------------------------------------------------


def test_a_missing_or_unreadable_reference_fails_when_the_suite_loads(tmp_path: Path) -> None:
    errors = load_errors(
        tmp_path,
        "assertions: [{type: similarity}, {type: rouge}]\n"
        "tests:\n"
        "  - {id: a, input: hi}\n"
        "  - {id: b, input: hi, expected_output: 'Спасибо'}\n",
    )
    assert errors == [
        "s.eval.yaml:3 assertions[0]: similarity has no `value` and test 'a' has no "
        "`expected_output`; give one of them",
        "s.eval.yaml:3 assertions[1]: rouge has no `value` and test 'a' has no "
        "`expected_output`; give one of them",
        "s.eval.yaml:3 assertions[1]: rouge: the expected_output of test 'b' has no words "
        "rouge-score can read (it keeps only a–z and 0–9, so other scripts are dropped); set "
        "`tokenizer: unicode`",
    ]


SUITE = """\
name: summaries
target:
  type: fake
  responses:
    close: "Refunds are accepted within 30 days of purchase."
    far: "Please contact our support team."
tests:
  - id: close
    input: close
    expected_output: "Refunds are accepted within 30 days of the purchase."
    assertions:
      - {type: similarity, method: token_set_ratio, case_sensitive: false}
      - {type: rouge, variant: rouge1, use_stemmer: true}
  - id: far
    input: far
    expected_output: "Refunds are accepted within 30 days of the purchase."
    assertions:
      - {type: similarity}
      - {type: rouge}
"""


def test_a_suite_through_evaluate(tmp_path: Path) -> None:
    path = write(tmp_path / "summaries.eval.yaml", SUITE)
    run = evaluate(path, config=EvalConfig(store=False, cache_mode="off"))
    verdicts = {c.case_id: c.verdict for c in run.results}
    assert verdicts == {"close": "pass", "far": "fail"}
    far = next(c for c in run.results if c.case_id == "far")
    assert [g.details[0].check for g in far.grader_results] == ["similarity.ratio", "rouge.rougeL"]
    assert far.grader_results[1].score == 0.0
