"""A recording's reader on its edges: a URL under no base, an over-long line however it
arrives, a recording that stops mid-body, and a packet numbered before the connection."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from asyncsports._wire.recording import reading
from asyncsports._wire.recording.format import encode
from asyncsports._wire.recording.reading import Lines, read
from asyncsports._wire.recording.writing import split
from asyncsports.errors import RecordingError


def lines(*events: dict[str, Any]) -> list[bytes]:
    return [encode({"format": "asyncsports-recording", "version": 1}), *map(encode, events)]


def test_a_url_under_no_base_keeps_its_whole_target() -> None:
    bases = {"data": "https://api.example", "none": ""}
    assert split("https://other.example/x?a=1", bases) == (
        "",
        "https://other.example/x",
        [("a", "1")],
    )
    assert split("https://api.example?b=", bases) == ("data", "/", [("b", "")])


@pytest.mark.parametrize(
    "chunks",
    [[b"abcdefghij\nok\n"], [b"abc", b"defghij\n"], [b"ok\nabcdefghij"]],
    ids=["whole", "across-chunks", "unended"],
)
def test_a_line_over_its_bound_is_refused_with_its_number(chunks: list[bytes]) -> None:
    stream = Lines(chunks, "rec.jsonl", line=5)
    with pytest.raises(RecordingError, match="a line longer than 5 bytes") as caught:
        list(stream)
    assert "rec.jsonl" in str(caught.value)


def test_a_line_over_the_largest_is_refused_by_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reading, "MAX_LINE", 64)
    get = {"e": "get", "id": 1, "t": 0, "host": "data", "path": "/" + "a" * 80}
    with pytest.raises(RecordingError, match="a line longer than 64 bytes"):
        read(lines(get))


def test_a_recording_that_stops_mid_body_keeps_what_came() -> None:
    rec = read(
        lines(
            {"e": "get", "id": 1, "t": 0, "host": "data", "path": "/a"},
            {"e": "reply", "id": 1, "t": 0, "status": 200, "headers": {}},
            {"e": "body", "id": 1, "t": 0, "text": "[1,"},
        )
    )
    ((answer,),) = rec.exchanges.values()
    assert answer.body == b"[1," and not answer.complete


def test_a_packet_numbered_before_its_connection_starts_is_left_out() -> None:
    path = "/basketball/fixtures/f/actions"

    def packet(seq: int) -> str:
        return msgspec.json.encode({"fixtureAction": {"fixtureSeqNum": seq}}).decode()

    start = [["startPosition", "0"]]
    rec = read(
        lines(
            {"e": "connect", "id": 1, "t": 0, "host": "live", "path": path, "query": start},
            {"e": "open", "id": 1, "t": 0},
            {"e": "recv", "id": 1, "t": 1, "text": packet(0)},
            {"e": "recv", "id": 1, "t": 2, "text": packet(1)},
        )
    )
    (feed,) = rec.feeds.values()
    assert [e.index for e in feed.entries if e.index is not None] == [0]


def test_live_messages_that_are_not_numbered_records() -> None:
    path = "/basketball/fixtures/f/actions"
    start = [["startPosition", "0"]]

    def recv(t: int, text: str) -> dict[str, Any]:
        return {"e": "recv", "id": 1, "t": t, "text": text}

    rec = read(
        lines(
            {"e": "connect", "id": 1, "t": 0, "host": "live", "path": path, "query": start},
            {"e": "open", "id": 1, "t": 0},
            recv(1, "not json"),  # before the first record: the preamble
            recv(2, '{"fixtureAction": {"fixtureSeqNum": "x"}}'),  # no seq: the next one
            recv(3, '{"fixtureAction": {"fixtureSeqNum": "2"}}'),
        )
    )
    (feed,) = rec.feeds.values()
    assert feed.preamble == ["not json"]
    assert [e.index for e in feed.entries if e.index is not None] == [0, 1]
