"""The one Detail builder (SPEC §1.1): 80-character truncation and the "+ N more" cap."""

from __future__ import annotations

import pytest

from assay.graders._details import (
    MAX_FAILED_DETAILS,
    TRUNCATE_AT,
    cap_details,
    detail,
    negated,
    truncate,
)
from assay.results import Detail


def test_limits_match_the_spec() -> None:
    assert TRUNCATE_AT == 80
    assert MAX_FAILED_DETAILS == 10


# ---- truncate ------------------------------------------------------------------------------


@pytest.mark.parametrize("length", [0, 1, 79, 80])
def test_short_strings_are_kept_whole(length: int) -> None:
    text = "x" * length
    assert truncate(text) == text


def test_long_string_is_cut_to_exactly_80_with_an_ellipsis() -> None:
    text = "abcdefghij" * 9  # 90 characters
    cut = truncate(text)
    assert len(cut) == 80
    assert cut == text[:79] + "…"


def test_81_characters_is_cut() -> None:
    cut = truncate("y" * 81)
    assert cut == "y" * 79 + "…"
    assert len(cut) == 80


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"amount": 12}, '{"amount": 12}'),
        ([1, "a", None], '[1, "a", null]'),
        (42, "42"),
        (0.5, "0.5"),
        (True, "true"),
        (None, "null"),
        ({"name": "café"}, '{"name": "café"}'),  # not \u-escaped
    ],
)
def test_non_strings_are_json_dumped(value: object, expected: str) -> None:
    assert truncate(value) == expected


def test_json_dumped_values_are_truncated_too() -> None:
    value = {"k": "v" * 100}
    dumped = '{"k": "' + "v" * 100 + '"}'
    assert truncate(value) == dumped[:79] + "…"
    assert len(truncate(value)) == 80


def test_strings_are_not_json_quoted() -> None:
    assert truncate("plain") == "plain"


def test_custom_limit() -> None:
    assert truncate("abcdef", limit=4) == "abc…"


# ---- detail --------------------------------------------------------------------------------


def test_detail_truncates_expected_and_actual() -> None:
    d = detail("format.length", False, expected="e" * 100, actual="a" * 100, message="too long")
    assert d == Detail(
        check="format.length",
        passed=False,
        expected="e" * 79 + "…",
        actual="a" * 79 + "…",
        message="too long",
    )


def test_detail_dumps_structured_values_and_keeps_none() -> None:
    d = detail("json_path.$.amount", True, expected=12, actual={"a": [1]})
    assert d == Detail(check="json_path.$.amount", passed=True, expected="12", actual='{"a": [1]}')
    assert detail("x", True) == Detail(check="x", passed=True, expected=None, actual=None)


# ---- cap_details ---------------------------------------------------------------------------


def failed(i: int) -> Detail:
    return Detail(check=f"bad.{i}", passed=False)


def passed(i: int) -> Detail:
    return Detail(check=f"ok.{i}", passed=True)


def test_ten_or_fewer_failed_details_are_unchanged() -> None:
    details = [passed(0), *(failed(i) for i in range(10)), passed(1)]
    assert cap_details(details) == details


def test_empty_details() -> None:
    assert cap_details([]) == []


def test_eleven_failed_keep_ten_and_summarise_one() -> None:
    details = [failed(i) for i in range(11)]
    assert cap_details(details) == [
        *(failed(i) for i in range(10)),
        Detail(check="+ 1 more", passed=False),
    ]


def test_cap_keeps_every_passed_detail_in_order() -> None:
    # interleave: ok.0, bad.0, ok.1, bad.1, … with 25 failed and 15 passed
    details: list[Detail] = []
    for i in range(25):
        if i < 15:
            details.append(passed(i))
        details.append(failed(i))
    capped = cap_details(details)
    expected: list[Detail] = []
    for i in range(15):
        expected.append(passed(i))
        if i < 10:
            expected.append(failed(i))
    expected.append(Detail(check="+ 15 more", passed=False))
    assert capped == expected
    assert sum(not d.passed for d in capped) == 11
    assert sum(d.passed for d in capped) == 15


def test_summary_entry_shape() -> None:
    summary = cap_details([failed(i) for i in range(30)])[-1]
    assert summary == Detail(check="+ 20 more", passed=False, expected=None, actual=None)
    assert summary.message == ""


def test_identical_failed_details_are_counted_separately() -> None:
    same = Detail(check="dup", passed=False)
    capped = cap_details([same.model_copy() for _ in range(12)])
    assert len(capped) == 11
    assert capped[-1].check == "+ 2 more"


def test_cap_does_not_mutate_its_input() -> None:
    details = [failed(i) for i in range(12)]
    copy = list(details)
    cap_details(details)
    assert details == copy


def test_the_same_detail_object_repeated_is_still_capped() -> None:
    same = Detail(check="dup", passed=False)
    capped = cap_details([same] * 12)
    assert capped == [*([same] * 10), Detail(check="+ 2 more", passed=False)]


def test_i10_detail_and_negated_build_what_the_constructor_builds() -> None:
    """`detail` and `negated` validate a field dict directly: the same Detail (fields, fields
    set, JSON) as `Detail(...)`, coercion and refusal included."""
    built = detail("regex", True, expected="x" * 100, actual={"a": 1})
    assert built == Detail(check="regex", passed=True, expected="x" * 79 + "…", actual='{"a": 1}')
    assert built.model_fields_set == {"check", "passed", "expected", "actual", "message"}
    flipped = negated(built)
    assert flipped.model_dump_json() == built.model_copy(update={"passed": False}).model_dump_json()
    assert negated(flipped) == built
    with pytest.raises(ValueError, match="check"):
        detail(None, True)  # type: ignore[arg-type]
