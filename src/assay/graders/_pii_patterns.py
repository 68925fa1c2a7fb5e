"""What the `pii` grader looks for: one pattern and one validity check per kind of personal
data, so that a number that merely looks like a card or an IBAN is not reported.

The patterns are Python regular expressions written without nested unbounded repetition
(every repeated group is bounded and delimited), so each is linear in the text: a megabyte of
output is scanned in well under a second per kind.
"""

from __future__ import annotations

import bisect
import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["KINDS", "Finding", "PiiKind", "find_pii", "iban_valid", "luhn_valid", "redact"]


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum of a card number (digits only)."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def iban_valid(compact: str) -> bool:
    """The ISO 13616 check: the country and check digits moved to the end, letters as 10–35,
    the number modulo 97 is 1."""
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]
    number = "".join(str(int(c, 36)) for c in moved)
    return int(number) % 97 == 1


_CARD_PREFIXES = re.compile(r"4|5[1-5]|2[2-7]|3[47]|3[068]|35|6011|64[4-9]|65|62")


def _card(text: str) -> bool:
    digits = re.sub(r"\D", "", text)
    return 13 <= len(digits) <= 19 and bool(_CARD_PREFIXES.match(digits)) and luhn_valid(digits)


def _iban(text: str) -> bool:
    return iban_valid(text.replace(" ", "").upper())


def _ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


_SSN_SHAPE = re.compile(r"\d{3}-\d{2}-\d{4}")


def _phone(text: str) -> bool:
    if _SSN_SHAPE.fullmatch(text):
        return False  # an SSN-shaped number that failed the SSN checks is not a phone either
    digits = sum(c.isdigit() for c in text)
    separated = text.startswith("+") or "(" in text or len(re.findall(r"[ .-]", text)) >= 2
    return 9 <= digits <= 15 and separated


def _ssn(text: str) -> bool:
    area, group, serial = text.split("-")
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def _always(text: str) -> bool:
    del text
    return True


@dataclass(frozen=True)
class PiiKind:
    """One kind of personal data: its name, its pattern and the check a match must pass."""

    name: str
    pattern: re.Pattern[str]
    valid: Callable[[str], bool]
    description: str


KINDS: tuple[PiiKind, ...] = (
    PiiKind(
        "email",
        re.compile(
            r"(?<![\w.+-])[\w.+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}"
            r"\.[A-Za-z]{2,24}(?![\w-])"
        ),
        _always,
        "email addresses",
    ),
    PiiKind(
        "iban",
        re.compile(
            r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Za-z0-9]{4}){2,7}(?: ?[A-Za-z0-9]{1,3})?"
            r"(?![A-Za-z0-9])"
        ),
        _iban,
        "IBANs passing the ISO 13616 mod-97 check",
    ),
    PiiKind(
        "payment_card",
        re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])"),
        _card,
        "payment card numbers: 13–19 digits with a card network's prefix, passing the Luhn check",
    ),
    PiiKind(
        "national_id",
        re.compile(
            r"(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])"
            r"|(?<![A-Za-z0-9])[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]"
            r"(?![A-Za-z0-9])"
        ),
        lambda text: _ssn(text) if "-" in text else True,
        "US social security numbers (valid area, group, serial) and UK National Insurance numbers",
    ),
    PiiKind(
        "ip",
        re.compile(
            r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])"
            r"|(?<![:\w])(?:[0-9A-Fa-f]{1,4}:){1,7}"
            r"(?::|(?::[0-9A-Fa-f]{1,4}){1,7}|[0-9A-Fa-f]{1,4})(?![:\w])"
        ),
        _ip,
        "IPv4 and IPv6 addresses",
    ),
    PiiKind(
        "phone",
        re.compile(
            r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){1,5}"
            r"(?![\w])"
        ),
        _phone,
        "phone numbers: 9–15 digits, written with a leading +, an area code in parentheses, or "
        "at least two separators",
    ),
)
"""The kinds, in the order they are looked for: a text found as one kind is not looked at
again as a later one (a card number is not also a phone number)."""


@dataclass(frozen=True)
class Finding:
    """One piece of personal data in the text."""

    kind: str
    text: str
    start: int


def find_pii(text: str, kinds: frozenset[str]) -> list[Finding]:
    """The personal data of `kinds` in `text`, in text order."""
    found: list[Finding] = []
    starts: list[int] = []  # the spans already reported: disjoint, so sorted by start and end
    ends: list[int] = []
    for kind in KINDS:
        if kind.name not in kinds:
            continue
        for match in kind.pattern.finditer(text):
            start, end = match.span()
            before = bisect.bisect_left(starts, end) - 1
            if before >= 0 and ends[before] > start:
                continue  # inside what an earlier kind found
            if kind.valid(match.group(0)):
                found.append(Finding(kind.name, match.group(0), start))
                starts.insert(before + 1, start)
                ends.insert(before + 1, end)
    found.sort(key=lambda f: f.start)
    return found


def redact(finding: Finding) -> str:
    """The finding with all but what tells it apart masked: an email's first letter and top
    domain, a number's last 4 digits (2 for phones), an IP's first group."""
    text = finding.text
    if finding.kind == "email":
        local, _, domain = text.partition("@")
        return f"{local[:1]}***@***.{domain.rsplit('.', 1)[-1]}"
    if finding.kind == "ip":
        separator = "." if "." in text else ":"
        head = text.split(separator, 1)[0]
        return head + separator + "*"
    keep = 2 if finding.kind == "phone" else 4
    alnum = [c for c in text if c.isalnum()]
    shown = len(alnum) - keep
    out, seen = [], 0
    for c in text:
        if c.isalnum():
            out.append(c if seen >= shown else "*")
            seen += 1
        else:
            out.append(c)
    return "".join(out)
