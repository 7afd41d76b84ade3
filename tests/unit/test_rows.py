"""The backfill's action rows straight from the wire equal those of the full models."""

from __future__ import annotations

import datetime as dt
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.samples import FIXTURE_ID, action

from asyncsports.models import Action, decode
from asyncsports.store._rows import ActionRows, action_row, utc_text
from asyncsports.store._rows import utc_text as _iso

stamps = st.datetimes(min_value=dt.datetime(1970, 1, 2), max_value=dt.datetime(2100, 1, 1)).map(
    lambda d: d.isoformat()
)
offsets = st.sampled_from(["", "Z", "+00:00", "+02:00", "-05:30", ".5Z", ".1234567Z"])
records = st.lists(
    st.tuples(
        st.integers(0, 10**6),
        stamps,
        offsets,
        st.sampled_from(["Start Clock", "Touchdown", "Period Start"]),
        st.sampled_from(["Confirmed", "Deleted", "Provisional"]),
        st.text(max_size=8),
    ),
    max_size=8,
)


def wire(seq: int, stamp: str, offset: str, kind: str, send: str, extra: str) -> dict[str, Any]:
    record = action(seq, type_name=kind, note=extra)
    fa = record["fixtureAction"]
    fa["timestamp"] = stamp.split(".")[0] + offset if offset.startswith(".") else stamp + offset
    fa["sendType"] = send
    return record


@given(records)
def test_rows_are_those_of_the_full_models(specs: list[tuple[Any, ...]]) -> None:
    body = msgspec.json.encode([wire(*spec) for spec in specs])
    want = [
        action_row("soccer", FIXTURE_ID, a, msgspec.json.encode(w))
        for a, w in zip(decode(list[Action], body), msgspec.json.decode(body), strict=True)
    ]
    got = ActionRows("soccer", FIXTURE_ID).decode(body)
    # The JSON column is the element as sent, byte for byte; the rest equal column by column.
    assert [r[:-1] for r in got] == [r[:-1] for r in want]
    assert [msgspec.json.decode(r[-1]) for r in got] == msgspec.json.decode(body)


def test_the_json_column_is_the_text_as_sent_and_a_missing_id_fails() -> None:
    body = (
        b'[ {"fixtureAction": {"actionId": "A1111111-2222-4333-8444-000000000001",'
        b' "timestamp": null}, "x": "\\u00e9 caf\xc3\xa9"} ]'
    )
    (row,) = ActionRows("soccer", FIXTURE_ID).decode(body)
    assert row[1] == "a1111111-2222-4333-8444-000000000001"  # canonical, as str(UUID)
    assert row[-1] == body[2:-2].decode()
    assert row[6] is None
    with pytest.raises(msgspec.ValidationError, match="actionId"):
        ActionRows("soccer", FIXTURE_ID).decode(b'[{"fixtureAction": {}}]')


@given(st.datetimes(timezones=st.sampled_from([None, dt.UTC, dt.timezone(dt.timedelta(hours=3))])))
def test_utc_text_is_the_sinks_iso(value: dt.datetime) -> None:
    aware = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    assert utc_text(value) == _iso(aware)
