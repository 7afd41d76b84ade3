"""Errors cross a process boundary whole (pickled: a worker's error in its parent), and
the helpers the models and errors share."""

from __future__ import annotations

import pickle
from datetime import UTC, datetime, timedelta, timezone

import msgspec

from asyncsports._wire.json.scan import bad_utf8
from asyncsports.errors import (
    BodyTooLargeError,
    MissingDependencyError,
    RateLimitError,
    RecordingError,
    redact,
)
from asyncsports.models._types import UTCDateTime, utc_required


def test_errors_pickle_with_every_field() -> None:
    limited = pickle.loads(pickle.dumps(RateLimitError(429, "slow down", retry_after=2.5)))
    assert (limited.status, limited.retry_after) == (429, 2.5)
    big = BodyTooLargeError("too big", limit=10, method="GET", url="https://h/p")
    again = pickle.loads(pickle.dumps(big))
    assert (again.limit, again.url, str(again)) == (10, "https://h/p", str(big))
    missing = MissingDependencyError("tracing", "opentelemetry", "otel", reason="old")
    back = pickle.loads(pickle.dumps(missing))
    assert (back.feature, back.module, back.extra, back.reason) == (
        "tracing",
        "opentelemetry",
        "otel",
        "old",
    )
    rec = pickle.loads(pickle.dumps(RecordingError("r.jsonl", 3, "not JSON")))
    assert (rec.file, rec.line, rec.what, str(rec)) == (
        "r.jsonl",
        3,
        "not JSON",
        "r.jsonl:3: not JSON",
    )


def test_redact_hides_a_urls_secrets() -> None:
    assert redact("GET https://u:pw@h/p?token=abc&x=1") == "GET https://u:***@h/p?token=***&x=1"


class Stamped(msgspec.Struct):
    _at: datetime
    at = utc_required("_at")


def test_a_required_datetime_reads_as_aware_utc() -> None:
    assert isinstance(Stamped.at, UTCDateTime)
    naive = Stamped(datetime(2024, 1, 1, 12))
    assert naive.at == datetime(2024, 1, 1, 12, tzinfo=UTC)
    east = Stamped(datetime(2024, 1, 1, 12, tzinfo=timezone(timedelta(hours=2))))
    assert east.at == datetime(2024, 1, 1, 10, tzinfo=UTC)


def test_bad_utf8_points_at_the_first_bad_byte_or_the_last_byte() -> None:
    assert bad_utf8(b"ab\xffcd") == 2
    assert bad_utf8(b"abc") == 2  # all good: msgspec's error is then about the end
