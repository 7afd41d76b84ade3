"""The recording format, sans I/O: scrubbing, pieces, keys, the feed timeline."""

from __future__ import annotations

import itertools
from typing import Any

import msgspec
from hypothesis import given
from hypothesis import strategies as st
from support.samples import action

from asyncsports._wire.live.order import FeedState, Step
from asyncsports._wire.recording.feeds import CUT, End
from asyncsports._wire.recording.format import REDACTED, decode_payload, encode, key, payload
from asyncsports._wire.recording.reading import read
from asyncsports._wire.recording.writing import Pieces, kept_headers
from asyncsports._wire.secrets import Secrets
from asyncsports.emulator._match import Nearest, Script, schedule

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
    scrub = Secrets(SECRETS)
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
    scrub = Secrets()
    query = scrub.pairs([("operatorId", "1"), ("auth", "a1b2c3d4e5"), ("live", "true")])
    assert query == [("operatorId", "1"), ("auth", REDACTED), ("live", "true")]
    sent = scrub.sent('{"authToken": "the-live-token"}')
    assert msgspec.json.decode(sent) == {"authToken": REDACTED}
    # Learnt: an echo of either later is scrubbed too.
    assert scrub.text("echo a1b2c3d4e5 and the-live-token") == f"echo {REDACTED} and {REDACTED}"
    headers = kept_headers(scrub, {"Content-Length": "3", "Set-Cookie": "s=1", "Date": "x"})
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
    assert Nearest(keys).find(wanted) == keys[0]
    assert Nearest(keys).find("data /soccer/fixtures/1/actions") == keys[1]
    assert Nearest(keys).find("live /x") is None


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
    dropped = {"e": "closed", "id": 1, "t": 4.0, "by": "server", "code": 1006}
    second = connection(2, 3, [1, 2], 10.0)
    closed = {"e": "closed", "id": 2, "t": 13.0, "by": "server", "code": 1000}
    rec = read(lines(*first, dropped, *second, closed))
    (feed,) = rec.feeds.values()
    assert feed.preamble == ['{"type":"authorised"}']
    assert feed.numbering == "restart"
    records = [e for e in feed.entries if e.index is not None]
    assert [e.index for e in records] == [0, 1, 2, 3, 4]
    assert feed.ends == {3: End(4.0, CUT), 5: End(13.0, 1000)}
    script = schedule(feed, 0)  # ends where the recorded service cut the first
    assert seqs(script) == [1, 2, 3]
    assert [gap for gap, _ in script.messages] == [0.0, 1.0, 3.0]
    assert (script.code, script.at) == (CUT, 3.0)  # at its recorded time
    later = schedule(feed, 1)
    assert seqs(later) == [1, 2] and later.code == CUT  # numbered from 1 on a connection
    again = schedule(feed, 3)
    assert seqs(again) == [1, 2] and again.messages[0][1] == packet(1)  # as recorded
    assert [gap for gap, _ in again.messages] == [0.0, 1.0]  # gaps from the first sent
    assert (again.code, again.at) == (1000, 2.0)
    assert seqs(schedule(feed, 4)) == [1]  # the record at 4, recorded as 2, renumbered


def seqs(script: Script) -> list[int]:
    return [msgspec.json.decode(t)["fixtureAction"]["fixtureSeqNum"] for _, t in script.messages]


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


def test_the_service_ends_a_feed_after_its_finishing_record_unless_recorded_otherwise() -> None:
    # The recording client closed first once it had the finishing record: the service's
    # close after it is not in the file, yet it comes (the emulator closes 1000).
    done = msgspec.json.encode({"fixtureAction": {"fixtureSeqNum": 3}, "finished": True})
    first = connection(1, 0, [1, 2], 0.0)
    first.append({"e": "recv", "id": 1, "t": 3.0, "text": done.decode()})
    by_client = {"e": "closed", "id": 1, "t": 3.5, "by": "client", "code": 1000}
    (feed,) = read(lines(*first, by_client)).feeds.values()
    assert feed.numbering is None and feed.length == 3
    assert (schedule(feed, 0).code, schedule(feed, 0).at) == (1000, 2.0)
    past = schedule(feed, 3)  # at the end: nothing to send, closed at once
    assert past == Script([], 1000, 0.0) and schedule(feed, 9) == past
    # A recorded close there wins; a feed cut short (no finishing record) is left open.
    by_server = {**by_client, "by": "server", "code": 1001}
    (feed,) = read(lines(*first, by_server)).feeds.values()
    assert schedule(feed, 0).code == 1001
    (feed,) = read(lines(*connection(1, 0, [1, 2], 0.0), by_client)).feeds.values()
    assert schedule(feed, 0) == Script(schedule(feed, 0).messages, None) and feed.ends == {}
    assert schedule(feed, 2) == Script([])


def test_a_continuing_servers_numbering_is_kept_and_empty_connections_end_nothing() -> None:
    first = connection(1, 0, [1, 2], 0.0)
    refused = connection(2, 2, [], 5.0)  # ended by the service before any record
    ended = {"e": "closed", "id": 2, "t": 5.5, "by": "server", "code": 1011}
    second = connection(3, 2, [3, 4], 10.0)  # numbered on from the fixture's start
    (feed,) = read(lines(*first, *refused, ended, *second)).feeds.values()
    assert feed.numbering == "continue" and feed.ends == {}
    assert seqs(schedule(feed, 0)) == [1, 2, 3, 4] and schedule(feed, 0).code is None
    assert seqs(schedule(feed, 1)) == [2, 3, 4]
    # A consumer cancelled mid-read is not the service ending the connection.
    cancelled = {"e": "closed", "id": 1, "t": 2.5, "by": "lost", "error": "CancelledError"}
    (feed,) = read(lines(*first, cancelled, *second)).feeds.values()
    assert feed.ends == {}


ENDS = st.sampled_from(
    [
        {"by": "client", "code": 1001},
        {"by": "server", "code": 1011},
        {"by": "server", "code": 1000},
        {"by": "lost", "error": "ConnectionResetError"},
    ]
)


@given(
    n=st.integers(min_value=1, max_value=40),
    cuts=st.sets(st.integers(min_value=1, max_value=39), max_size=6),
    continuing=st.booleans(),
    ends=st.lists(ENDS, min_size=7, max_size=7),
)
def test_every_start_position_replays_in_the_recorded_numbering_to_the_next_end(
    n: int, cuts: set[int], continuing: bool, ends: list[dict[str, Any]]
) -> None:
    """A recording of ``n`` records over connections cut at ``cuts``: a connection at any
    startPosition S gets records S on, numbered so that the client's rule (FeedState, told
    the recorded numbering; by itself when it is the documented one) takes each once,
    with no gap, up to the first position past S where the service ended a connection."""
    bounds = [0, *sorted(c for c in cuts if c < n), n]
    path = "/basketball/fixtures/f/actions"
    events: list[dict[str, Any]] = []
    service_ends = {}
    for i, (a, b) in enumerate(itertools.pairwise(bounds)):
        query = [["startPosition", str(a)]]
        events += [
            {"e": "connect", "id": i, "t": a, "host": "live", "path": path, "query": query},
            {"e": "open", "id": i, "t": a},
        ]
        for index in range(a, b):
            record = action(index + 1)
            record["finished"] = index == n - 1
            record["fixtureAction"]["fixtureSeqNum"] = index + 1 if continuing else index - a + 1
            text = msgspec.json.encode(record).decode()
            events.append({"e": "recv", "id": i, "t": index + 0.5, "text": text})
        events.append({"e": "closed", "id": i, "t": b, **ends[i]})
        if ends[i]["by"] != "client":
            service_ends[b] = ends[i].get("code", CUT)
    service_ends.setdefault(n, 1000)  # after the finishing record
    (feed,) = read(lines(*events)).feeds.values()
    assert feed.numbering == (("continue" if continuing else "restart") if n > bounds[1] else None)
    for start in range(n + 2):
        script = schedule(feed, start)
        state = FeedState(start, numbering="continue" if feed.numbering == "continue" else "auto")
        assert state.connect() == start
        got = []
        for _, text in script.messages:
            step = state.step(text)
            assert not isinstance(step, Step) or step.verdict == "deliver", step
            got += [step] if not isinstance(step, Step) else list(step.records)
        end = min((p for p in service_ends if p > start), default=n)
        ids = [int(str(r.fixture_action.action_id)[-12:]) - 1 for r in got]
        assert ids == list(range(start, end)), (start, script)
        assert script.code == service_ends[end]
        assert state.position == max(start, end)
