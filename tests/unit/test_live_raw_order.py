"""A raw feed (records kept with their bytes) ends at its finishing record like a decoded
one, and a malformed packet fed without a URL names none."""

from __future__ import annotations

import msgspec
import pytest
from support import samples

from asyncsports._wire.live import FeedState
from asyncsports.errors import DecodeError
from asyncsports.raw import RawRecord


def packet(seq: int, finished: bool = False) -> bytes:
    return msgspec.json.encode(dict(samples.action(seq), finished=finished))


def test_a_raw_feed_ends_at_its_finishing_record() -> None:
    state = FeedState(raw=True)
    state.connect()
    first = state.on_message(packet(1))
    assert isinstance(first, RawRecord) and not state.finished
    step = state.on_message(packet(2, finished=True))
    assert step.verdict == "deliver" and step.finished  # type: ignore[union-attr]
    assert state.finished


def test_a_raw_feed_goes_on_past_a_record_not_finishing() -> None:
    state = FeedState(raw=True)
    state.connect()
    state.on_message(packet(1))
    assert state.on_message(packet(3)).verdict == "hold"  # type: ignore[union-attr]
    step = state.on_message(packet(2))
    assert step.verdict == "deliver" and not step.finished  # type: ignore[union-attr]
    assert len(step.records) == 2 and not state.finished  # type: ignore[union-attr]


def test_a_malformed_packet_fed_without_a_url_names_none() -> None:
    state = FeedState()
    state.connect()
    with pytest.raises(DecodeError) as raised:
        state.on_message(b'{"fixtureAction": ')
    assert raised.value.url == ""
