"""The service's clock, as the ``Date`` header of its responses tells it. Pure: no I/O.

The session keeps the last response's headers and when it came; the date is parsed only
when asked for (:meth:`Session.server_time`), so a request pays two assignments.
"""

from __future__ import annotations

import datetime as dt
import email.utils

__all__ = ["EARLIEST", "LATEST", "http_date", "parse_date"]

EARLIEST = dt.datetime(2000, 1, 1, tzinfo=dt.UTC).timestamp()
"""A ``Date`` before this (2000-01-01 UTC) is absurd: a server whose clock was never set."""
LATEST = dt.datetime(2100, 1, 1, tzinfo=dt.UTC).timestamp()
"""A ``Date`` from this on (2100-01-01 UTC) is absurd too."""


def parse_date(value: str | None) -> float | None:
    """Epoch seconds of an HTTP ``Date`` header (RFC 9110's HTTP-date, or any form
    :func:`email.utils.parsedate_to_datetime` reads with a zone), or None when it is
    absent, unparseable, without a zone, or absurd (before 2000 or from 2100 on)."""
    seconds = http_date(value) if value else None
    return seconds if seconds is not None and EARLIEST <= seconds < LATEST else None


def http_date(text: str) -> float | None:
    """Epoch seconds of an HTTP-date (or any date :func:`email.utils.parsedate_to_datetime`
    reads) that names its zone; None for any other text. No bounds: see :func:`parse_date`."""
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return None if when.tzinfo is None else when.timestamp()
