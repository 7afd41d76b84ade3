"""The live order's details to the letter: its defaults and refusals, a raw feed's records
with the bytes as sent on every path, and the reason each step gives."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from support import samples

from asyncsports._wire.live import FeedState
from asyncsports._wire.live.messages import HEARTBEAT, AuthFailed, Warned, classify
from asyncsports.errors import DecodeError
from asyncsports.models import Action
from asyncsports.models._types import decode
from asyncsports.raw import RawRecord


def packet(seq: int, **changes: Any) -> bytes:
    return msgspec.json.encode(dict(samples.action(seq), **changes))


def connected(**kwargs: Any) -> FeedState:
    state = FeedState(**kwargs)
    state.connect()
    return state


def test_the_defaults_and_a_new_state() -> None:
    state = FeedState()
    assert (state.window, state.patience, state.raw) == (32, 2, False)
    assert (state.connections, state.finished, state.position) == (0, False, 0)
    assert state.connect() == 0 and state.connect() == 0
    assert state.connections == 2


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"start_position": "1"}, TypeError, "start_position: expected an int, got '1'"),
        ({"start_position": -1}, ValueError, "start_position: must be >= 0, got -1"),
        ({"kind": "odds"}, ValueError, "kind: expected actions or statistics, got 'odds'"),
        (
            {"numbering": "maybe"},
            ValueError,
            "numbering: expected auto, restart or continue, got 'maybe'",
        ),
        ({"window": 0}, ValueError, "window must be >= 1 and patience >= 0"),
        ({"patience": -1}, ValueError, "window must be >= 1 and patience >= 0"),
    ],
)
def test_a_bad_argument_is_refused_with_its_reason(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as raised:
        FeedState(**kwargs)
    assert str(raised.value) == message


@pytest.mark.parametrize("frame", [bytes, lambda b: b.decode(), bytearray])
def test_a_raw_feed_keeps_each_records_bytes_on_every_path(frame: Any) -> None:
    state = connected(raw=True)
    wire = [packet(1), packet(3), packet(2)]
    one = state.on_message(frame(wire[0]))  # the hot path (or classify, for a bytearray)
    if not isinstance(one, RawRecord):
        assert one.verdict == "deliver"  # type: ignore[union-attr]
        (one,) = one.records  # type: ignore[union-attr]
    assert one == RawRecord(decode(Action, wire[0]), wire[0])
    assert state.on_message(frame(wire[1])).verdict == "hold"  # type: ignore[union-attr]
    step = state.on_message(frame(wire[2]))
    assert step.records == (  # type: ignore[union-attr]
        RawRecord(decode(Action, wire[2]), wire[2]),
        RawRecord(decode(Action, wire[1]), wire[1]),
    )
    assert state.position == 3


def test_each_step_says_why() -> None:
    state = connected()
    assert state.receive(AuthFailed()).reason == "authentication refused"
    assert state.receive(Warned()).reason == "a warning without text"
    assert state.on_message(packet(0)).reason == "gap at position 0: fixtureSeqNum 0 is below 1"  # type: ignore[union-attr]

    state = connected(window=1)
    state.on_message(packet(1))
    assert state.on_message(packet(1)).reason == "duplicate of record 0"  # type: ignore[union-attr]
    state.on_message(packet(3))
    assert state.on_message(packet(3)).reason == "duplicate of held record 2"  # type: ignore[union-attr]
    gap = state.on_message(packet(4))
    assert gap.reason == "gap at position 1: 2 records held past the missing one"  # type: ignore[union-attr]

    state = FeedState(5)
    state.connect()
    assert state.on_message(packet(9)).reason == (  # type: ignore[union-attr]
        "gap at position 5: first fixtureSeqNum 9 of a connection at startPosition 5 "
        "fits neither numbering"
    )


def test_a_delivery_that_leaves_records_held_stops_at_the_next_gap() -> None:
    state = connected()
    state.on_message(packet(1))
    assert state.on_message(packet(3)).verdict == "hold"  # type: ignore[union-attr]
    assert state.on_message(packet(5)).verdict == "hold"  # type: ignore[union-attr]
    step = state.on_message(packet(2))
    assert step.verdict == "deliver"  # type: ignore[union-attr]
    assert [r.fixture_action.fixture_seq_num for r in step.records] == [2, 3]  # type: ignore[union-attr]
    assert state.position == 3


def test_patience_counts_from_the_first_hold_and_afresh_after_a_delivery() -> None:
    state = connected(patience=1)
    state.on_message(packet(1))
    state.on_message(packet(3))
    assert state.receive(HEARTBEAT).verdict == "drop"
    state.on_message(packet(5))  # a second hold does not restart the count
    assert state.receive(HEARTBEAT).verdict == "gap"

    state = connected(patience=1)
    state.on_message(packet(1))
    state.on_message(packet(3))
    state.on_message(packet(5))
    assert state.receive(HEARTBEAT).verdict == "drop"
    state.on_message(packet(2))  # delivers 2 and 3; 5 is still held, the count starts again
    assert state.receive(HEARTBEAT).verdict == "drop"
    assert state.receive(HEARTBEAT).verdict == "gap"


def test_a_finished_feed_stays_finished_across_a_new_connection() -> None:
    state = connected()
    assert state.on_message(packet(1, finished=True)).finished  # type: ignore[union-attr]
    state.connect()
    assert state.on_message(packet(2)).verdict == "drop"  # type: ignore[union-attr]


def test_a_restarting_server_past_the_start_holds_a_later_record() -> None:
    state = FeedState(5, numbering="restart")
    state.connect()
    assert state.on_message(packet(2)).verdict == "hold"  # type: ignore[union-attr]


def test_a_malformed_packet_names_the_url_it_came_from() -> None:
    state = connected()
    with pytest.raises(DecodeError) as raised:
        state.on_message(b'{"fixtureAction": ', "wss://h/feed")
    assert raised.value.url == "wss://h/feed"
    bad = classify(b'{"fixtureAction": ', "actions")
    with pytest.raises(DecodeError) as raised:
        state.receive(bad)
    assert raised.value.url == ""
