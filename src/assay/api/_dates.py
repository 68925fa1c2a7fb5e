"""Dates that bound a listing of runs (`--since`, `since=`), read once for every caller.

Runs store `started_at` as UTC ISO 8601 text with milliseconds, and listings compare that
text; a bound is therefore read as a date or date-time and written in the same form, so
`2026-11-01T10:00+02:00` means 08:00 UTC and a misspelt date is an error, not a filter that
silently matches nothing (or everything).
"""

from __future__ import annotations

from datetime import UTC, datetime

from assay.errors import UsageError

__all__ = ["DATE_FORMATS", "run_time_bound"]

DATE_FORMATS = "2026-11-01, 2026-11-01T14:30, 2026-11-01T14:30:00Z or 2026-11-01T14:30:00+02:00"
"""Examples of what a bound may be, for messages and help texts."""


def run_time_bound(text: str, name: str) -> str:
    """`text` as the `started_at` text it bounds: UTC, milliseconds. A date is its
    midnight, and a time without an offset is UTC (as stored).

    Raises:
        UsageError: `text` is not an ISO 8601 date or date-time; `name` says which option.
    """
    try:
        moment = datetime.fromisoformat(text.strip())
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC).isoformat(timespec="milliseconds")
    except (ValueError, OverflowError):
        shown = text if len(text) <= 40 else text[:40] + "…"
        raise UsageError(
            f"{name} {shown!r} is not a date: use ISO 8601, e.g. {DATE_FORMATS} "
            "(a time without an offset is UTC)"
        ) from None
