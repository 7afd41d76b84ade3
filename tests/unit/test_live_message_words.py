"""How a live message that is not a packet is read: its words (keys and text, lower-cased,
bounded in depth and breadth) and the kind they make, with its text kept as sent."""

from __future__ import annotations

import msgspec
import pytest
from support import samples

from asyncsports._wire.live import FeedState
from asyncsports._wire.live.messages import Ack, AuthFailed, Unknown, _words, classify


def test_words_are_keys_and_text_lower_cased() -> None:
    assert _words({"Status": "Welcome", "N": 1}) == "status welcome n "
    assert _words(["A", "B"]) == "a b"
    assert _words(5) == ""
    assert _words([5, None]) == " "


def test_words_stop_four_levels_down() -> None:
    deep = {"A": {"B": {"C": {"D": "x"}}}}
    assert _words(deep) == "a b c d "
    assert _words([[["x"]]]) == "x"
    assert _words([[[["x"]]]]) == ""
    # Asked from a depth, it goes only as far as is left.
    assert _words(deep, 2) == "a b "


def test_words_take_sixteen_keys_and_items() -> None:
    keys = {f"K{i}": "" for i in range(17)}
    assert _words(keys).split() == [f"k{i}" for i in range(16)]
    assert _words([f"W{i}" for i in range(17)]).split() == [f"w{i}" for i in range(16)]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        # The text as sent, braces and blanks around it trimmed; a bad byte replaced.
        (
            b" {The supplied authentication is invalid \xff} ",
            AuthFailed("The supplied authentication is invalid \ufffd"),
        ),
        (b" Welcome \xff ", Ack("Welcome \ufffd")),
        (b'{"status": "Welcome"}', Ack('{"status": "Welcome"}')),
        # "authori" in "unauthorized" is no acknowledgement, nor is "not connected".
        (b"Unauthorized", Unknown(b"Unauthorized")),
        (b"not connected", Unknown(b"not connected")),
    ],
)
def test_a_text_message_is_read_by_its_words(data: bytes, message: object) -> None:
    assert classify(data, "actions") == message


def test_a_malformed_packet_names_its_position_and_its_fault() -> None:
    state = FeedState(3)
    state.connect()
    message = classify(b'{"fixtureAction": 5}', "actions")
    error = state.malformed(message)  # type: ignore[arg-type]
    assert error.url == ""
    assert error.path == "$.fixtureAction"
    assert error.reason == (
        "live Action packet after position 3 does not decode (start_position=4 resumes "
        "past it): Expected `object`, got `int`"
    )


def test_a_gap_by_patience_says_why() -> None:
    state = FeedState(patience=0)
    state.connect()
    first, third = (msgspec.json.encode(samples.action(n)) for n in (1, 3))
    state.on_message(first)
    assert state.on_message(third).verdict == "hold"  # type: ignore[union-attr]
    step = state.receive(classify(b'{"x": 1}', "actions"))  # not a packet
    assert step.verdict == "gap"
    assert step.reason == (
        "gap at position 1: the missing record did not come before other messages"
    )


def test_only_braces_and_blanks_are_trimmed_from_a_refusal() -> None:
    data = b"XThe supplied authentication is invalidX"
    assert classify(data, "actions") == AuthFailed(data.decode())
