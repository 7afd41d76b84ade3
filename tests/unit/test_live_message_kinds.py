"""What classify makes of each kind of websocket message: statistics packets by any one of
their three signs, the vendor's shaped messages with their texts, and every frame type."""

from __future__ import annotations

import msgspec
import pytest

from asyncsports._wire.live.messages import (
    HEARTBEAT,
    Ack,
    AuthFailed,
    Malformed,
    Packet,
    Status,
    Unknown,
    Warned,
    classify,
)

FIXTURE = '"fixtureId":"a1111111-2222-4333-8444-000000000001"'


@pytest.mark.parametrize("sign", ['"seqNum":3', '"advancedSportStatistics":{}'])
def test_one_sign_of_statistics_makes_a_packet(sign: str) -> None:
    message = classify(f"{{{FIXTURE},{sign}}}".encode(), "statistics")
    assert isinstance(message, Packet)


def test_statistics_without_any_is_no_packet_and_not_malformed() -> None:
    data = f'{{{FIXTURE},"teamActionAggregates":[]}}'.encode()
    assert classify(data, "statistics") == Unknown(data)


def test_a_cut_packet_is_malformed_with_its_decode_error() -> None:
    message = classify(b'{"fixtureAction": ', "actions")
    assert isinstance(message, Malformed)
    assert isinstance(message.error, msgspec.DecodeError)
    assert (message.data, message.target) == (b'{"fixtureAction": ', "Action")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            b'{"eventElementType": "Alarm"}',
            Status("alarm", "", b'{"eventElementType": "Alarm"}'),
        ),
        (
            b'{"eventElementType": "Alarm", "alarm": "Feed open"}',
            Status("alarm", "Feed open", b'{"eventElementType": "Alarm", "alarm": "Feed open"}'),
        ),
        (
            b'{"eventElementType": "Coverage"}',
            Status("status", "Coverage", b'{"eventElementType": "Coverage"}'),
        ),
        (
            b'{"message": "Feed delayed upstream", "level": "INFO"}',
            Status(
                "notice",
                "Feed delayed upstream",
                b'{"message": "Feed delayed upstream", "level": "INFO"}',
            ),
        ),
        (
            b'{"message": "Authorisation accepted", "level": "INFO"}',
            Ack('{"message": "Authorisation accepted", "level": "INFO"}'),
        ),
        (b'{"eventElementType": "HeartBeat"}', HEARTBEAT),
        (
            b'{"message": 5, "level": "ERROR"}',
            AuthFailed("the server refused the connection (level ERROR)"),
        ),
        (b'{"message": "no", "level": " Fatal "}', AuthFailed("no")),
        (b'{"message": 5, "level": "warn"}', Warned("")),
        (b'{"message": "slow", "level": "WARNING"}', Warned("slow")),
    ],
)
def test_the_vendors_shaped_messages(data: bytes, message: object) -> None:
    assert classify(data, "actions") == message


def test_every_frame_type_is_read_and_nothing_raises() -> None:
    assert classify(bytearray(b"ping"), "actions") == HEARTBEAT
    assert classify(memoryview(b"ping"), "actions") == HEARTBEAT
    assert classify("ping", "actions") == HEARTBEAT
    # A lone surrogate in a text frame: kept as its bytes, not an exception.
    assert classify("\ud800", "actions") == Unknown(b"\xed\xa0\x80")
