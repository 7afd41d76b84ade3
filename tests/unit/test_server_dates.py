"""The service's Date header read as a clock: a zone is required, and absurd years are none."""

from __future__ import annotations

import pytest

from asyncsports._wire.clock import EARLIEST, LATEST, http_date, parse_date


def test_a_date_without_a_zone_is_none() -> None:
    # RFC 5322's -0000: the zone is unknown, so the instant is too.
    assert http_date("Mon, 01 Jan 2024 00:00:00 -0000") is None
    assert http_date("Mon, 01 Jan 2024 00:00:00 GMT") == 1704067200.0


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("Sat, 01 Jan 2000 00:00:00 GMT", EARLIEST),
        ("Fri, 31 Dec 2099 23:59:59 GMT", LATEST - 1),
        ("Mon, 01 Jan 2024 01:00:00 +0100", 1704067200.0),
    ],
)
def test_a_date_within_the_century_is_read(value: str, seconds: float) -> None:
    assert parse_date(value) == seconds


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "soon",
        "Fri, 31 Dec 1999 23:59:59 GMT",
        "Fri, 01 Jan 2100 00:00:00 GMT",
        "Mon, 01 Jan 2024 00:00:00 -0000",
    ],
)
def test_an_absent_unreadable_or_absurd_date_is_none(value: str | None) -> None:
    assert parse_date(value) is None
