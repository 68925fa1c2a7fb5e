"""`pii` (SPEC §4.1): deterministic detection of personal data, checksums included, with an
`allow` list and redacted findings."""

from __future__ import annotations

import time

import pytest
from tests.graders._grading import error_of, grade

from assay.graders._pii_patterns import iban_valid, luhn_valid
from assay.results import Detail, GraderResult


def pii(output: str, **options: object) -> GraderResult:
    return grade({"type": "pii", **options}, output)


def findings(result: GraderResult) -> list[tuple[str, str | None]]:
    return [(d.check, d.actual) for d in result.details if not d.passed]


def test_i26_5_checksums_by_hand() -> None:
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")
    assert luhn_valid("79927398713")  # the textbook example
    assert iban_valid("DE89370400440532013000") and not iban_valid("DE89370400440532013001")
    assert iban_valid("GB82WEST12345698765432")


def test_i26_5_clean_text_passes() -> None:
    text = "Refunds take 30 days; order 1234567890 ships on 2024-01-15 at 10:30:00 (v1.2.3)."
    result = pii(text)
    assert (result.score, result.verdict, result.hits) == (1.0, "pass", ["no personal data found"])
    assert [d.check for d in result.details] == [
        "pii.email",
        "pii.phone",
        "pii.payment_card",
        "pii.iban",
        "pii.national_id",
        "pii.ip",
    ]
    assert all(d.passed for d in result.details)


def test_i26_5_each_kind_is_found_and_redacted() -> None:
    text = (
        "Mail jane.doe@example.co.uk or call +44 20 7946 0958. Card 4111 1111 1111 1111, "
        "IBAN DE89 3704 0044 0532 0130 00, SSN 123-45-6789, NI AB 12 34 56 C, "
        "from 192.168.0.1 or 2001:db8::1."
    )
    result = pii(text)
    assert (result.score, result.verdict) == (0.0, "fail")
    assert findings(result) == [
        ("pii.email", "j***@***.uk"),
        ("pii.phone", "+** ** **** **58"),
        ("pii.payment_card", "**** **** **** 1111"),
        ("pii.iban", "**** **** **** **** **30 00"),
        ("pii.national_id", "***-**-6789"),
        ("pii.national_id", "** ** *4 56 C"),
        ("pii.ip", "192.*"),
        ("pii.ip", "2001:*"),
    ]
    assert result.misses == [
        "found 1 email address",
        "found 1 phone number",
        "found 1 payment card number",
        "found 1 IBAN",
        "found 2 national ids",
        "found 2 IP addresses",
    ]
    assert result.details[0] == Detail(
        check="pii.email",
        passed=False,
        actual="j***@***.uk",
        message="email address at character 5",
    )
    assert "jane.doe" not in str(result.model_dump())  # never the value itself


def test_i26_5_look_alikes_failing_their_checks_are_not_reported() -> None:
    text = (
        "Card 4111 1111 1111 1112 (bad Luhn), IBAN DE89 3704 0044 0532 0130 01 (bad mod 97), "
        "SSN 000-12-3456 (area 000), IP 999.1.1.1, ref 5555-55"
    )
    assert pii(text).score == 1.0


def test_i26_5_allow_list_and_kinds() -> None:
    text = "Write to support@shop.example or jane@gmail.com; test card 4242 4242 4242 4242."
    result = pii(text, allow=["*@shop.example", "4242-4242-4242-4242"])
    assert findings(result) == [("pii.email", "j***@***.com")]
    assert pii(text, kinds=["payment_card"], allow=["4242424242424242"]).score == 1.0
    assert error_of({"type": "pii", "kinds": []}) == (
        "Value error, `kinds` is empty; list the kinds to look for, or leave it out"
    )
    assert "Input should be" in error_of({"type": "pii", "kinds": ["passport"]})


def test_i26_5_empty_output_passes() -> None:
    assert pii("").score == 1.0


def test_i26_5_unicode_text() -> None:
    result = pii("Écrivez à zoë@exemple.fr — 電話 +81 3-1234-5678 です。")
    assert findings(result) == [("pii.email", "z***@***.fr"), ("pii.phone", "+** *-****-**78")]


@pytest.mark.parametrize(
    ("chunk", "found"),
    [
        ("Nothing personal here, order 12345. ", 0),
        ("12 ", None),  # a worst case for the phone pattern: groups of digits everywhere
        ("Mail a.b@c.example now. ", None),
    ],
)
def test_i26_5_a_megabyte_output_is_scanned_in_reasonable_time(
    chunk: str, found: int | None
) -> None:
    text = (chunk * (1_000_000 // len(chunk) + 1))[:1_000_000]
    started = time.perf_counter()
    result = pii(text)
    assert time.perf_counter() - started < 20.0
    assert result.score == (1.0 if found == 0 else 0.0)
    if found is None:
        assert sum(not d.passed for d in result.details) == 11  # 10 kept and "+ N more"
