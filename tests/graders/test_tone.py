"""The tone grader, heuristic mode (SPEC §4): each dimension, the weighted score, validation."""

from __future__ import annotations

import itertools
import math
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import write
from tests.graders._grading import SPEC, error_of
from tests.graders._grading import grade as grade_spec

from assay import EvalConfig, evaluate
from assay.graders import tone
from assay.graders._offload import OFF_LOOP_CHARS
from assay.graders.tone import (
    ASSERTIVENESS,
    FORMALITY,
    SENTIMENT,
    DimensionScore,
    TextFeatures,
    ToneProfile,
    features,
)
from assay.results import Detail, GraderResult


def grade(profile: dict[str, Any], output: str, **options: Any) -> GraderResult:
    return grade_spec({"type": "tone", "profile": profile, **options}, output)


def only(result: GraderResult) -> tuple[float | None, Detail]:
    assert result.error is None
    assert len(result.details) == 1
    return result.score, result.details[0]


def sentences(count: int, words: int = 10) -> str:
    return " ".join(" ".join(["word"] * words) + "." for _ in range(count))


# --- the graded three-way axes -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "target", "expected"),
    [
        (0.1, "positive", (1.0, "positive")),  # the cut-off itself is in the band
        (0.62, "positive", (1.0, "positive")),
        (0.05, "positive", (0.4167, "neutral")),  # 0.05 short: 0.5 · (1 − 0.05/0.3)
        (0.0, "positive", (0.3333, "neutral")),
        (-0.2, "positive", (0.0, "negative")),  # 0.3 past the edge: nothing
        (0.1, "neutral", (0.5, "positive")),  # on the edge, outside: half credit
        (0.16, "neutral", (0.4, "positive")),
        (-0.1, "negative", (1.0, "negative")),
        (0.0, "neutral", (1.0, "neutral")),
    ],
)
def test_sentiment_axis_grades_near_misses(
    value: float, target: str, expected: tuple[float, str]
) -> None:
    assert SENTIMENT.grade(value, target) == expected


def test_index_axes_share_cutoffs_and_falloff() -> None:
    assert FORMALITY.grade(0.0, "formal") == (0.25, "neutral")
    assert FORMALITY.grade(-0.9, "formal") == (0.0, "casual")
    assert FORMALITY.grade(1 / 3, "neutral") == (0.4167, "formal")
    assert ASSERTIVENESS.grade(-0.25, "balanced") == (0.5, "tentative")
    assert ASSERTIVENESS.grade(0.6, "confident") == (1.0, "confident")


# --- formality ---------------------------------------------------------------------------------


def test_formal_text_is_formal() -> None:
    text = "Dear customer, please note that refunds are accepted. Kind regards."
    score, d = only(grade({"formality": "formal"}, text))
    assert score == 1.0
    assert d == Detail(
        check="tone.formality",
        passed=True,
        expected="formal",
        actual="formal",
        message="index +0.60: 3 formal markers, 0 informal markers",
    )


def test_slang_and_contractions_are_casual() -> None:
    result = grade({"formality": "formal"}, "Hey, yeah it's gonna be fine lol")
    score, d = only(result)
    assert score == 0.0
    assert (d.passed, d.actual) == (False, "casual")
    assert d.message == "index -0.71: 0 formal markers, 5 informal markers"
    assert result.misses == [
        "formality is casual, expected formal (index -0.71: 0 formal markers, 5 informal markers)"
    ]
    assert grade({"formality": "casual"}, "Hey, yeah it's gonna be fine lol").score == 1.0


def test_fillers_emoji_and_double_exclamation_count_as_informal() -> None:
    text = "I guess it basically works 🙂 :) !!"
    score, d = only(grade({"formality": "neutral"}, text))
    # fillers "i guess", "basically"; emoji; emoticon; "!!"
    assert d.message == "index -0.71: 0 formal markers, 5 informal markers"
    assert (score, d.actual) == (0.0357, "casual")  # 0.46 past the neutral band


def test_one_marker_each_way_is_neutral_and_a_near_miss_for_formal() -> None:
    score, d = only(grade({"formality": "formal"}, "However, it's fine."))
    assert (score, d.actual, d.message) == (
        0.25,
        "neutral",
        "index +0.00: 1 formal marker, 1 informal marker",
    )


def test_typographic_apostrophes_are_contractions_too() -> None:
    assert features("It’s fine, we’ll do it.").markers["contraction"] == 2


# --- sentiment ---------------------------------------------------------------------------------


def test_positive_wording_is_positive() -> None:
    text = "Thank you, we are happy to help. Your refund is great news!"
    score, d = only(grade({"sentiment": "positive"}, text))
    assert score == 1.0
    assert (d.expected, d.actual, d.message) == ("positive", "positive", "polarity +0.90")


def test_negative_wording_fails_a_positive_profile() -> None:
    score, d = only(grade({"sentiment": "positive"}, "This is a terrible, awful experience."))
    assert (score, d.passed, d.actual, d.message) == (0.0, False, "negative", "polarity -1.00")


def test_a_factual_reply_is_neutral_and_a_near_miss_for_positive() -> None:
    score, d = only(grade({"sentiment": "positive"}, "The refund takes 30 days."))
    assert (score, d.actual, d.message) == (0.3333, "neutral", "polarity +0.00")
    assert grade({"sentiment": "neutral"}, "The refund takes 30 days.").score == 1.0


def test_sentiment_is_textblobs_polarity() -> None:
    from textblob import TextBlob  # type: ignore[import-untyped]

    for text in ["The fee is slightly high.", "It is good.", "The delay is a bit bad.", ""]:
        expected = TextBlob(text).sentiment.polarity
        assert tone._polarity(text) == pytest.approx(expected, abs=1e-12)


NO_CORPUS = """
import nltk

def no_download(*args, **kwargs):
    raise AssertionError("tried to download an NLTK corpus")

nltk.download = no_download
nltk.data.path[:] = []  # any corpus lookup now fails
from assay.graders.tone import _polarity
print(_polarity("The delay is a bit bad, sadly."))
"""


def test_sentiment_never_needs_an_nltk_corpus(tmp_path: Path) -> None:
    # A fresh interpreter, so the lexicon really loads here, with no corpus reachable.
    env = {**os.environ, "HOME": str(tmp_path), "NLTK_DATA": str(tmp_path / "none")}
    done = subprocess.run(
        [sys.executable, "-c", NO_CORPUS], capture_output=True, text=True, env=env, check=False
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert float(done.stdout) == pytest.approx(-0.6)


# --- assertiveness -----------------------------------------------------------------------------


def test_confident_markers_and_plain_statements_are_confident() -> None:
    score, d = only(grade({"assertiveness": "confident"}, "The refund will definitely arrive."))
    assert (score, d.actual) == (1.0, "confident")
    assert d.message == "index +0.60: 3 confident signals, 0 hedges"


def test_hedges_are_tentative() -> None:
    text = "I think it might arrive on Monday, but perhaps later."
    score, d = only(grade({"assertiveness": "confident"}, text))
    assert (score, d.actual, d.message) == (
        0.0,
        "tentative",
        "index -0.60: 0 confident signals, 3 hedges",
    )
    assert grade({"assertiveness": "tentative"}, text).score == 1.0


def test_a_mix_is_balanced_and_questions_are_not_statements() -> None:
    text = "The refund is processed. It might arrive on Monday. Can I help with anything else?"
    score, d = only(grade({"assertiveness": "balanced"}, text))
    assert (score, d.actual, d.message) == (
        1.0,
        "balanced",
        "index +0.00: 1 confident signal, 1 hedge",
    )


def test_four_word_hedges_are_found() -> None:
    assert features("As far as I know, yes.").markers["hedge"] == 1


# --- verbosity ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "target", "score", "actual"),
    [
        (sentences(6), "concise", 1.0, "concise"),  # 60 words: the top of the band
        (sentences(9), "concise", 0.2075, "moderate"),  # 90 = 1.5 × 60: 0.5 · (1 − log2 1.5)
        (sentences(12), "concise", 0.0, "moderate"),  # twice the edge
        (sentences(12), "moderate", 1.0, "moderate"),
        (sentences(12), "detailed", 0.1315, "moderate"),  # 200/120: 0.5 · (1 − log2 5/3)
        (sentences(21), "detailed", 1.0, "detailed"),
        (sentences(3), "moderate", 0.0, "concise"),  # 30 words, half of 60
        ("", "concise", 1.0, "concise"),
    ],
)
def test_word_count_bands(text: str, target: str, score: float, actual: str) -> None:
    result_score, d = only(grade({"verbosity": target}, text))
    assert (result_score, d.actual) == (score, actual)


def test_long_sentences_are_not_concise() -> None:
    score, d = only(grade({"verbosity": "concise"}, sentences(1, words=30)))
    assert (score, d.passed, d.actual) == (0.2075, False, "concise (long sentences)")
    assert d.message == "30 words in 1 sentence, mean 30.0 words per sentence (over 20 for concise)"


def test_verbosity_message_counts_words_and_sentences() -> None:
    _, d = only(grade({"verbosity": "concise"}, "Refunds take 30 days. Ask us anything!"))
    assert d.message == "7 words in 2 sentences, mean 3.5 words per sentence"


def test_cjk_characters_count_as_words() -> None:
    text = "返金は三十日以内です。"
    assert (features(text).words, features(text).sentences) == (10, 1)


# --- persona -----------------------------------------------------------------------------------

PERSONA = {"required": ["Acme Support", "Cheers!"], "forbidden": ["lol", "as an AI"]}


def test_persona_markers_all_satisfied() -> None:
    text = "Thanks from acme support, here is a lollipop. Cheers!"
    score, d = only(grade({"persona": PERSONA}, text))
    assert score == 1.0
    assert d == Detail(
        check="tone.persona_consistency",
        passed=True,
        expected="required: Acme Support, Cheers!; forbidden: lol, as an AI",
        actual="4 of 4 markers satisfied",
        message="every required marker present, no forbidden one",
    )


def test_persona_score_is_the_fraction_satisfied() -> None:
    result = grade({"persona_consistency": PERSONA}, "lol, as an ai I can't. cheers")
    score, d = only(result)
    assert (score, d.actual) == (0.0, "0 of 4 markers satisfied")
    assert d.message == (
        "missing required 'Acme Support'; missing required 'Cheers!'; found forbidden 'lol'; "
        "found forbidden 'as an AI'"
    )
    half = grade({"persona": PERSONA}, "Acme Support here lol")
    assert half.score == 0.5
    assert half.misses == ["persona: missing required 'Cheers!'; found forbidden 'lol'"]


def test_persona_markers_match_typographic_apostrophes() -> None:
    assert grade({"persona": {"required": ["we're here"]}}, "We’re here to help.").score == 1.0


# --- the whole profile --------------------------------------------------------------------------

FULL = {
    "formality": "formal",
    "sentiment": "positive",
    "assertiveness": "confident",
    "verbosity": "concise",
    "persona": {"required": ["Acme"], "forbidden": ["lol"]},
}
LETTER = (
    "Dear customer, thank you for your inquiry. Refunds are accepted within 30 days of purchase. "
    "Please note that we will process your request promptly. Kind regards, Acme Support."
)


def test_a_matching_reply_passes_every_dimension() -> None:
    result = grade(FULL, LETTER)
    assert (result.score, result.verdict) == (1.0, "pass")
    assert [(d.check, d.passed, d.actual) for d in result.details] == [
        ("tone.formality", True, "formal"),
        ("tone.sentiment", True, "positive"),
        ("tone.assertiveness", True, "confident"),
        ("tone.verbosity", True, "concise"),
        ("tone.persona_consistency", True, "2 of 2 markers satisfied"),
    ]
    assert (
        result.hits[0] == "formality is formal (index +0.71: 5 formal markers, 0 informal markers)"
    )
    assert result.misses == []
    assert result.reasoning == (
        "heuristic tone: formality 1.00, sentiment 1.00, assertiveness 1.00, verbosity 1.00, "
        "persona_consistency 1.00 → 1.00"
    )


def test_weights_make_a_weighted_average() -> None:
    # formality 0.25 (neutral), sentiment 1.0: (0.25·1 + 1.0·3) / 4
    result = grade(
        {"formality": "formal", "sentiment": "positive"}, "It is good.", weights={"sentiment": 3}
    )
    assert result.score == 0.8125
    assert result.reasoning == "heuristic tone: formality 0.25, sentiment 1.00 ×3 → 0.81"


def test_a_zero_weight_dimension_is_reported_but_not_scored() -> None:
    result = grade(
        {"formality": "formal", "sentiment": "positive"}, "It is good.", weights={"formality": 0}
    )
    assert result.score == 1.0
    assert [d.passed for d in result.details] == [False, True]


def test_empty_output_is_measured_like_any_text() -> None:
    result = grade(FULL, "")
    assert result.error is None
    assert [(d.actual, d.message) for d in result.details] == [
        ("neutral", "index +0.00: 0 formal markers, 0 informal markers"),
        ("neutral", "polarity +0.00"),
        ("balanced", "index +0.00: 0 confident signals, 0 hedges"),
        ("concise", "0 words in 0 sentences, mean 0.0 words per sentence"),
        ("1 of 2 markers satisfied", "missing required 'Acme'"),
    ]
    # (0.25 + 0.3333 + 0.25 + 1 + 0.5) / 5
    assert result.score == pytest.approx(0.46666, abs=1e-5)


def test_huge_output_is_graded() -> None:
    text = (LETTER + " ") * 6000  # ~1 MB
    assert len(text) > 1_000_000
    result = grade({"formality": "formal", "verbosity": "detailed"}, text)
    assert result.score == 1.0
    assert result.details[1].message == (
        "168000 words in 24000 sentences, mean 7.0 words per sentence"
    )


def test_negated_tone() -> None:
    result = grade({"sentiment": "negative"}, "It is good.", negate=True)
    assert (result.score, result.verdict) == (1.0, "pass")


def test_a_dimension_measure_can_be_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    """The seam the LLM judge will use: one function per dimension."""

    def judged(text: TextFeatures, profile: ToneProfile) -> DimensionScore:
        return DimensionScore(0.7, "mostly positive", f"judged {len(text.text)} chars")

    monkeypatch.setitem(tone.HEURISTICS, "sentiment", judged)  # type: ignore[index]
    result = grade({"sentiment": "positive", "formality": "neutral"}, "Fine.")
    assert result.score == 0.85
    assert result.details[1] == Detail(
        check="tone.sentiment",
        passed=False,
        expected="positive",
        actual="mostly positive",
        message="judged 5 chars",
    )


# --- validation when the suite loads ----------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"profile": {}},
            "Value error, the tone profile sets no dimension; give one of formality, sentiment, "
            "assertiveness, verbosity, persona_consistency",
        ),
        (
            {"profile": {"sentimnet": "positive"}},
            "unknown key 'sentimnet'. Did you mean 'sentiment'?",
        ),
        (
            {"profile": {"formality": "formal"}, "weights": {"formalty": 2}},
            "Value error, unknown tone dimension 'formalty'. Did you mean 'formality'? "
            "Dimensions: formality, sentiment, assertiveness, verbosity, persona_consistency",
        ),
        (
            {"profile": {"formality": "formal"}, "weights": {"sentiment": 2}},
            "Value error, weights names 'sentiment', which the profile does not set; add it to "
            "the profile or remove its weight",
        ),
        (
            {"profile": {"formality": "formal"}, "weights": {"formality": 0}},
            "Value error, every tone dimension of the profile has weight 0; give one > 0",
        ),
        (
            {"profile": {"formality": "formal"}, "weights": {"formality": -1}},
            "Input should be greater than or equal to 0",
        ),
        (
            {"profile": {"formality": "posh"}},
            "Input should be 'formal', 'neutral' or 'casual'",
        ),
        (
            {"profile": {"persona": {}}},
            "Value error, persona needs at least one `required` or `forbidden` marker",
        ),
        (
            {"profile": {"persona": {"required": ["ok", " "]}}},
            "Value error, persona markers must not be empty or blank",
        ),
        (
            {
                "profile": {
                    "persona": {"required": ["a"]},
                    "persona_consistency": {"required": ["b"]},
                }
            },
            "Value error, the profile gives both 'persona' and 'persona_consistency'; keep "
            "'persona_consistency'",
        ),
        (
            {"profile": {"formality": "formal"}, "wieghts": {}},
            "unknown key 'wieghts'. Did you mean 'weights'?",
        ),
    ],
)
def test_invalid_options_are_rejected(options: dict[str, Any], message: str) -> None:
    assert error_of({"type": "tone", **options}) == message


def test_persona_shorthand_in_weights() -> None:
    grader = SPEC.validate_python(
        {"type": "tone", "profile": {"persona": {"forbidden": ["x"]}}, "weights": {"persona": 2}}
    )
    assert grader.weights == {"persona_consistency": 2.0}
    assert grader.profile.persona_consistency.forbidden == ["x"]


def test_cutoffs_are_ordered_and_bands_contiguous() -> None:
    for axis in (FORMALITY, SENTIMENT, ASSERTIVENESS):
        assert axis.cutoffs[0] < axis.cutoffs[1]
    bands = list(tone.WORD_BANDS.values())
    assert bands[0][0] == 0 and bands[-1][1] == math.inf
    assert all(a[1] == b[0] for a, b in itertools.pairwise(bands))


# --- a suite -----------------------------------------------------------------------------------

SUITE = """\
name: tone
target:
  type: fake
  responses:
    letter: "Dear customer, thank you for your inquiry. We will process your refund promptly."
    chat: "hey, it's gonna be fine lol, I think"
tests:
  - id: letter
    input: letter
    assertions:
      - {type: tone, profile: {formality: formal, assertiveness: confident}}
  - id: chat
    input: chat
    assertions:
      - type: tone
        profile: {formality: formal, sentiment: positive, persona: {forbidden: [lol]}}
        weights: {formality: 2}
"""


def test_a_suite_through_evaluate(tmp_path: Path) -> None:
    path = write(tmp_path / "tone.eval.yaml", SUITE)
    run = evaluate(path, config=EvalConfig(store=False, cache_mode="off"))
    outcome = {c.case_id: (c.verdict, c.score) for c in run.results}
    # chat: formality 0 (weight 2), sentiment 1 ("fine"), persona 0 → 1/4
    assert outcome == {"letter": ("pass", 1.0), "chat": ("fail", 0.25)}
    chat = next(c for c in run.results if c.case_id == "chat")
    assert [d.actual for d in chat.grader_results[0].details] == [
        "casual",
        "positive",
        "0 of 1 marker satisfied",
    ]


@pytest.mark.parametrize(("chars", "off_loop"), [(200, False), (OFF_LOOP_CHARS, True)])
def test_i21_1_long_outputs_are_measured_off_the_event_loop_thread(
    monkeypatch: pytest.MonkeyPatch, chars: int, off_loop: bool
) -> None:
    threads: list[int] = []
    measure = tone.HEURISTICS["verbosity"]

    def recording(text: tone.TextFeatures, profile: tone.ToneProfile) -> tone.DimensionScore:
        threads.append(threading.get_ident())
        return measure(text, profile)

    monkeypatch.setitem(tone.HEURISTICS, "verbosity", recording)  # type: ignore[arg-type]
    output = ("Refunds take thirty days. " * (chars // 26 + 1))[:chars]
    result = grade({"verbosity": "detailed"}, output, mode="heuristic")
    assert result.error is None
    assert (threads[0] != threading.get_ident()) is off_loop
