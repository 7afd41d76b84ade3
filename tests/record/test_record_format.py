"""The recording format, sans I/O: scrubbing, pieces, keys, the feed timeline."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from asyncsports._wire.recording import (
    REDACTED,
    Pieces,
    Scrubber,
    decode_payload,
    encode,
    key,
    nearest,
    payload,
    read,
    schedule,
)

SECRETS = ("tok-ABCDEFGH", "sig0123456789abcdef", "héllo-sécret")


@given(
    before=st.text(max_size=300),
    after=st.text(max_size=300),
    which=st.sampled_from(SECRETS),
    cuts=st.lists(st.integers(min_value=0, max_value=700), max_size=8),
    size=st.integers(min_value=1, max_value=64),
)
def test_pieces_never_cut_a_secret_and_join_to_the_scrubbed_body(
    before: str, after: str, which: str, cuts: list[int], size: int
) -> None:
    scrub = Scrubber(*SECRETS)
    body = (before + which + after).encode()
    pieces = Pieces(scrub, size=size)
    out = []
    last = 0
    for cut in [*sorted({min(c, len(body)) for c in cuts}), len(body)]:
        out.append(pieces.feed(body[last:cut]))
        last = cut
    out.append(pieces.end())
    joined = b"".join(out)
    assert joined == scrub.bytes(body)
    for s in SECRETS:
        assert s.encode() not in joined
    # Each piece stays text when the body is (the cut never splits a character).
    for piece in out:
        assert "text" in payload(piece)


@given(st.binary(max_size=200))
def test_payload_round_trips_any_bytes(data: bytes) -> None:
    event = msgspec.json.decode(encode(payload(data)))
    assert decode_payload(event) == data


def test_credentials_are_replaced_in_queries_and_sent_messages_and_learnt() -> None:
    scrub = Scrubber()
    query = scrub.query([("operatorId", "1"), ("auth", "a1b2c3d4e5"), ("live", "true")])
    assert query == [["operatorId", "1"], ["auth", REDACTED], ["live", "true"]]
    sent = scrub.sent('{"authToken": "the-live-token"}')
    assert msgspec.json.decode(sent) == {"authToken": REDACTED}
    # Learnt: an echo of either later is scrubbed too.
    assert scrub.text("echo a1b2c3d4e5 and the-live-token") == f"echo {REDACTED} and {REDACTED}"
    headers = scrub.headers({"Content-Length": "3", "Set-Cookie": "s=1", "Date": "x"})
    assert headers == {"Date": "x"}


def test_a_key_ignores_credentials_order_and_live_positions() -> None:
    a = key("streaming", "/e", [("auth", "x"), ("timestamp", "1"), ("live", "true"), ("b", "1")])
    assert a == key("streaming", "/e", [("b", "1"), ("live", "true"), ("operatorId", "7")])
    # One name's values keep their order (sort=a&sort=b is not sort=b&sort=a).
    assert key("data", "/f", [("sort", "a"), ("sort", "b")]) != key(
        "data", "/f", [("sort", "b"), ("sort", "a")]
    )
    assert key("live", "/x/actions", [("startPosition", "5")]) == "live /x/actions"


def test_the_nearest_key_prefers_the_same_path() -> None:
    keys = ["data /basketball/fixtures?page=0&size=5", "data /basketball/fixtures/1/actions"]
    wanted = "data /basketball/fixtures?page=0&size=6"
    assert nearest(wanted, keys) == keys[0]
    assert nearest("data /soccer/fixtures/1/actions", keys) == keys[1]
    assert nearest("live /x", keys) is None


def lines(*events: dict[str, Any]) -> list[bytes]:
    head = {"format": "asyncsports-recording", "version": 1}
    return [encode(head), *(encode(e) for e in events)]


def packet(seq: int) -> str:
    return msgspec.json.encode({"fixtureAction": {"fixtureSeqNum": seq, "n": seq}}).decode()


def connection(ident: int, start: int, seqs: list[int], t0: float) -> list[dict[str, Any]]:
    path = "/basketball/fixtures/f/actions"
    query = [["startPosition", str(start)]]
    out: list[dict[str, Any]] = [
        {"e": "connect", "id": ident, "t": t0, "host": "live", "path": path, "query": query},
        {"e": "open", "id": ident, "t": t0},
        {"e": "recv", "id": ident, "t": t0, "text": '{"type":"authorised"}'},
    ]
    for i, seq in enumerate(seqs):
        out.append({"e": "recv", "id": ident, "t": t0 + i + 1, "text": packet(seq)})
    return out


def test_a_feed_merges_its_connections_by_position_and_renumbers_on_replay() -> None:
    # The first connection drops after 3 records (one duplicated); the second comes back
    # at startPosition 3 numbering from 1, as the vendor does.
    first = connection(1, 0, [1, 2, 2, 3], 0.0)
    second = connection(2, 3, [1, 2], 10.0)
    closed = {"e": "closed", "id": 2, "t": 13.0, "by": "server", "code": 1000}
    rec = read(lines(*first, *second, closed))
    (feed,) = rec.feeds.values()
    assert feed.preamble == ['{"type":"authorised"}']
    records = [e for e in feed.entries if e.index is not None]
    assert [e.index for e in records] == [0, 1, 2, 3, 4]
    plan = schedule(feed, 0)
    seqs = [msgspec.json.decode(t)["fixtureAction"]["fixtureSeqNum"] for _, t in plan]
    assert seqs == [1, 2, 3, 4, 5]  # the fixture's numbering, the second part rewritten
    assert [gap for gap, _ in plan] == [0.0, 1.0, 3.0, 10.0, 11.0]
    later = schedule(feed, 3)
    assert [gap for gap, _ in later] == [0.0, 1.0]  # gaps from the first record sent
    assert msgspec.json.decode(later[0][1])["fixtureAction"]["n"] == 1  # its own text


def test_rest_answers_are_kept_in_order_per_key_and_bodies_joined() -> None:
    get = {"e": "get", "host": "data", "path": "/a", "query": [["page", "0"]]}
    rec = read(
        lines(
            {**get, "id": 1, "t": 0},
            {"e": "reply", "id": 1, "t": 0, "status": 503, "headers": {}},
            {"e": "end", "id": 1, "t": 0, "complete": True},
            {**get, "id": 2, "t": 1},
            {"e": "reply", "id": 2, "t": 1, "status": 200, "headers": {"Date": "d"}},
            {"e": "body", "id": 2, "t": 1, "text": "[1,"},
            {"e": "body", "id": 2, "t": 1, "b64": "Mio="},  # "2*"
            {"e": "end", "id": 2, "t": 1, "complete": False},
        )
    )
    (answers,) = rec.exchanges.values()
    assert [a.status for a in answers] == [503, 200]
    assert answers[1].body == b"[1,2*" and not answers[1].complete
