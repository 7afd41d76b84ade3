"""The live feed's order keeping on its rarer paths: refused shapes, a raw text frame, a
held record that does not follow the one delivered, and seqs that are not numbers."""

from __future__ import annotations

import uuid

import msgspec
import pytest
from support import samples

from asyncsports._wire.live import FeedState, Packet, classify
from asyncsports.models import Action
from asyncsports.models._types import decode
from asyncsports.raw import RawRecord


def action(seq: int) -> Action:
    return decode(Action, msgspec.json.encode(samples.action(seq)))


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"window": 0}, ValueError, "window must be >= 1 and patience >= 0"),
        ({"patience": -1}, ValueError, "window must be >= 1 and patience >= 0"),
        ({"start_position": -1}, ValueError, "start_position: must be >= 0, got -1"),
        ({"start_position": True}, TypeError, "start_position: expected an int, got True"),
        ({"kind": "scores"}, ValueError, "kind: expected actions or statistics, got 'scores'"),
        ({"numbering": "guess"}, ValueError, "numbering: expected auto, restart or continue"),
    ],
)
def test_a_feed_state_refuses_what_it_cannot_keep(
    kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        FeedState(**kwargs)  # type: ignore[arg-type]


def test_a_raw_text_frame_keeps_its_bytes_as_sent() -> None:
    state = FeedState(raw=True)
    state.connect()
    text = msgspec.json.encode(samples.action(1)).decode()
    got = state.on_message(text)
    assert isinstance(got, RawRecord)
    assert got.json == text.encode() and got.value == action(1)


def test_a_held_record_waits_for_the_one_between() -> None:
    state = FeedState()
    state.connect()
    assert state.packet(action(1), 1).verdict == "deliver"
    assert state.packet(action(4), 4).verdict == "hold"
    # Seq 2 is delivered; 3 is still missing, so 4 stays held.
    step = state.packet(action(2), 2)
    assert step.verdict == "deliver" and step.records == (action(2),)
    step = state.packet(action(3), 3)
    assert step.records == (action(3), action(4)) and state.position == 4


@pytest.mark.parametrize(("seq", "read"), [(True, None), ("7", 7), ("x", None), (2.5, None)])
def test_a_statistics_seq_is_read_only_from_an_integer_or_its_text(
    seq: object, read: object
) -> None:
    packet = {"fixtureId": str(uuid.UUID(int=1)), "seqNum": 3, "fixtureSeqNum": seq}
    message = classify(msgspec.json.encode(packet), "statistics")
    assert isinstance(message, Packet)
    assert message.seq == read
