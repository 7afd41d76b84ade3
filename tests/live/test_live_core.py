"""The live feeds' protocol core (asyncsports._wire.live) as pure functions: no socket anywhere."""

from __future__ import annotations

import copy
import random
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, example, given, note, settings
from hypothesis import strategies as st
from support import samples

from asyncsports._wire.live import (
    Ack,
    AuthFailed,
    ConnectionEnd,
    FeedState,
    Heartbeat,
    Malformed,
    MergeBook,
    Packet,
    Step,
    Unknown,
    classify,
    live_decoder,
    reconnect,
)
from asyncsports._wire.retry import Call, RetryPolicy
from asyncsports.errors import DecodeError
from asyncsports.models import Action, Statistics
from asyncsports.models._types import decode


def _step(state: FeedState, data: Any) -> Step:
    """:meth:`FeedState.on_message` as a Step always (its hot path returns the bare record)."""
    got = state.on_message(data)
    return got if isinstance(got, Step) else Step("deliver", (got,))


# --------------------------------------------------------------------------- classification


def _action_bytes(seq: Any = 1, **top: Any) -> bytes:
    record = samples.action(1)
    record["fixtureAction"]["fixtureSeqNum"] = seq
    record.update(top)
    return msgspec.json.encode(record)


def test_action_packet_decodes_like_rest() -> None:
    data = msgspec.json.encode(samples.action(7))
    msg = classify(data, "actions")
    assert isinstance(msg, Packet)
    assert msg.seq == 7
    assert msg.record == decode(Action, data)


def test_str_message_is_accepted() -> None:
    msg = classify(_action_bytes(3).decode(), "actions")
    assert isinstance(msg, Packet) and msg.seq == 3


@pytest.mark.parametrize("seq", ["12", 12])
def test_quoted_decimals_decode(seq: Any) -> None:
    record = samples.action(1)
    record["fixtureAction"].update(fixtureSeqNum=seq, timelineSequence="12.5", period="1")
    record["fixtureSummary"]["homeTeamScore"] = "3"
    msg = classify(msgspec.json.encode(record), "actions")
    assert isinstance(msg, Packet)
    fa = msg.record.fixture_action
    assert (msg.seq, fa.fixture_seq_num, fa.timeline_sequence, fa.period) == (12, 12, 12.5, 1)
    assert msg.record.fixture_summary.home_team_score == 3
    assert fa.timestamp is not None and fa.timestamp.utcoffset() is not None


def test_statistics_packet_quoted_and_not() -> None:
    plain = msgspec.json.encode(samples.STATISTICS)
    quoted = dict(samples.STATISTICS, seqNum="412", version="2", fixtureSeqNum="5")
    a = classify(plain, "statistics")
    b = classify(msgspec.json.encode(quoted), "statistics")
    assert isinstance(a, Packet) and isinstance(b, Packet)
    assert a.seq is None and b.seq == 5
    assert a.record == b.record == decode(Statistics, plain)


def test_live_decoder_is_lax_and_typed() -> None:
    assert live_decoder("actions").decode(_action_bytes("4")).fixture_action.fixture_seq_num == 4


@pytest.mark.parametrize(
    "text",
    [
        "{The supplied authentication is invalid}",
        "{\n    The supplied authentication is invalid\n}",
        "The supplied authentication is invalid",
        '{"message": "The supplied authentication is invalid"}',
        '"The supplied authentication is invalid"',
    ],
)
def test_bad_auth_text(text: str) -> None:
    for kind in ("actions", "statistics"):
        msg = classify(text, kind)  # type: ignore[arg-type]
        assert isinstance(msg, AuthFailed)
        assert "supplied authentication is invalid" in msg.text


@pytest.mark.parametrize(
    "text",
    [
        '{"type": "heartbeat"}',
        '{"type":"HEARTBEAT","ts":"1710000000"}',
        "heartbeat",
        '"ping"',
        "{}",
    ],
)
def test_heartbeats_and_empty_object(text: str) -> None:
    msg = classify(text, "actions")
    assert isinstance(msg, Heartbeat if text != "{}" else Unknown)


@pytest.mark.parametrize(
    "text", ['{"message": "authorised"}', '{"status": "Authorized"}', "Connection authorised"]
)
def test_acknowledgements(text: str) -> None:
    assert isinstance(classify(text, "actions"), Ack)


@pytest.mark.parametrize(
    "text",
    [
        '{"type": "score", "x": 1}',
        "[]",
        "[1, 2]",
        "42",
        "null",
        "",
        "not json at all",
        '{"message": "not authorised yet"}',
        '{"fixtureId": "6a0b2c1e-0f6e-4c1a-9a51-7f3a0f8d1c11"}',  # not a statistics packet
        '{"fixtureId": "6a0b2c1e-0f6e-4c1a-9a51-7f3a0f8d1c11", "timestamp": "2024-03-01T20:31:02Z"}',
    ],
)
def test_unknown_is_never_a_packet(text: str) -> None:
    for kind in ("actions", "statistics"):
        msg = classify(text, kind)  # type: ignore[arg-type]
        assert isinstance(msg, Unknown), (kind, msg)


@pytest.mark.parametrize(
    "data",
    [
        b'{"fixtureAction": {"actionId": "zz"}}',
        b'{"fixtureAction": {"actionId": "a1111111-2222-4333-8444-000000000001"}',  # cut short
        _action_bytes("twelve"),
        _action_bytes(1, finished="maybe"),
    ],
)
def test_malformed_action_names_position(data: bytes) -> None:
    msg = classify(data, "actions")
    assert isinstance(msg, Malformed)
    state = FeedState(5)
    state.connect()
    with pytest.raises(DecodeError) as info:
        state.receive(msg, "wss://streams/x")
    err = info.value
    assert "position 5" in str(err) and "start_position=6" in str(err)
    assert err.target == "Action" and err.url == "wss://streams/x"
    assert state.position == 5  # nothing delivered; a new feed at 6 resumes past it


def test_malformed_statistics() -> None:
    bad = dict(samples.STATISTICS, teamActionAggregates=[{"team": {"id": "nope"}}])
    msg = classify(msgspec.json.encode(bad), "statistics")
    assert isinstance(msg, Malformed) and msg.target == "Statistics"


def test_action_message_on_statistics_feed_is_not_a_packet() -> None:
    # an action record has no statistics in it: on the statistics feed it is unknown
    assert isinstance(classify(_action_bytes(1), "statistics"), Unknown)


@given(st.binary(max_size=200) | st.text(max_size=200))
def test_classify_never_raises(data: bytes | str) -> None:
    classify(data, "actions")
    classify(data, "statistics")


# --------------------------------------------------------------------------- FeedState units


def _rec(i: int, last: bool = False) -> Action:
    return decode(Action, msgspec.json.encode(dict(samples.action(i + 1), finished=last)))


def _feed(state: FeedState, seqs: list[int | None], records: list[Action]) -> list[str]:
    verdicts = []
    for seq, rec in zip(seqs, records, strict=True):
        verdicts.append(state.packet(rec, seq).verdict)
    return verdicts


def test_in_order_duplicate_and_reorder() -> None:
    r = [_rec(i) for i in range(4)]
    s = FeedState()
    assert s.connect() == 0
    assert s.packet(r[0], 1).records == (r[0],)
    assert s.packet(r[0], 1).verdict == "drop"
    assert s.packet(r[2], 3).verdict == "hold"
    assert s.packet(r[2], 3).verdict == "drop"
    step = s.packet(r[1], 2)
    assert step.verdict == "deliver" and step.records == (r[1], r[2])
    assert s.position == 3


def test_gap_by_patience_and_window() -> None:
    r = [_rec(i) for i in range(5)]
    s = FeedState(patience=1)
    s.connect()
    s.packet(r[0], 1)
    assert s.packet(r[2], 3).verdict == "hold"
    assert s.receive(Heartbeat()).verdict == "drop"
    gap = s.receive(Heartbeat())
    assert gap.verdict == "gap" and "position 1" in gap.reason
    assert s.packet(r[1], 2).verdict == "drop"  # the connection is done with
    assert s.connect() == 1
    s2 = FeedState(window=2)
    s2.connect()
    assert _feed(s2, [2, 3, 4], r[1:4]) == ["hold", "hold", "gap"]


def test_restart_numbering_learned() -> None:
    r = [_rec(i) for i in range(6)]
    s = FeedState()
    s.connect()
    _feed(s, [1, 2, 3], r[:3])
    assert s.connect() == 3
    assert s.packet(r[3], 1).records == (r[3],)
    assert s.numbering == "restart"


def test_continue_numbering_learned() -> None:
    r = [_rec(i) for i in range(6)]
    s = FeedState()
    s.connect()
    _feed(s, [1, 2, 3], r[:3])
    s.connect()
    # seq 4 first at 3: a restarting server's index 6 as well (seqs 1 to 3 late): ask again
    assert s.packet(r[3], 4).verdict == "gap"
    s.connect()
    assert s.packet(r[3], 4).records == (r[3],)
    assert s.numbering == "continue"
    s.connect()  # learnt: the next connection is taken at its word
    assert s.packet(r[4], 5).records == (r[4],)


def test_ambiguous_start_at_one_reconnects_once() -> None:
    r = [_rec(i) for i in range(4)]
    s = FeedState(1)
    s.connect()
    assert s.packet(r[1], 2).verdict == "gap"
    s.connect()
    assert s.packet(r[1], 2).records == (r[1],)
    assert s.numbering == "continue"


def test_unfitting_first_seq_is_a_gap() -> None:
    s = FeedState(5)
    s.connect()
    assert s.packet(_rec(7), 3).verdict == "gap"
    assert FeedState(numbering="restart").packet(_rec(0), 0).verdict == "gap"


def test_no_seq_is_next_and_finished_ends() -> None:
    s = FeedState()
    s.connect()
    a, b = _rec(0), _rec(1, last=True)
    assert s.packet(a, None).records == (a,)
    step = s.packet(b, None)
    assert step.finished and s.finished
    assert s.packet(_rec(2), None).verdict == "drop"


def test_finished_stops_release_of_held() -> None:
    r = [_rec(0), _rec(1, last=True), _rec(2)]
    s = FeedState()
    s.connect()
    s.packet(r[2], 3)
    s.packet(r[1], 2)
    step = s.packet(r[0], 1)
    assert step.records == (r[0], r[1]) and step.finished


def test_auth_verdict_and_arguments() -> None:
    s = FeedState()
    assert s.receive(AuthFailed("bad")).verdict == "auth"
    assert s.receive(Ack()).verdict == "drop"
    with pytest.raises(ValueError):
        FeedState(-1)
    with pytest.raises(TypeError):
        FeedState(True)
    with pytest.raises(ValueError):
        FeedState(numbering="sometimes")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- scripted servers

N_MAX = 25
_TEMPLATES = [samples.action(i + 1) for i in range(N_MAX)]
HEARTBEAT = b'{"type":"heartbeat"}'


def _wire(index: int, seq: int, last: bool, quoted: bool) -> bytes:
    record = copy.deepcopy(_TEMPLATES[index])
    record["finished"] = last
    record["fixtureAction"]["fixtureSeqNum"] = str(seq) if quoted else seq
    return msgspec.json.encode(record)


fault = st.one_of(
    st.tuples(st.just("drop"), st.integers(0, N_MAX)),  # close after n messages
    st.tuples(st.just("dup"), st.integers(0, N_MAX)),  # send message i twice
    st.tuples(st.just("swap"), st.integers(0, N_MAX)),  # swap messages i and i+1
    st.tuples(st.just("lose"), st.integers(0, N_MAX)),  # message i never arrives
    st.tuples(st.just("beat"), st.integers(0, N_MAX)),  # a heartbeat before message i
    st.tuples(st.just("noise"), st.integers(0, N_MAX)),  # an unknown message before i
)


def _connection(
    start: int, n: int, numbering: str, faults: list[tuple[str, int]], quoted: bool, protect: bool
) -> list[bytes]:
    """What a server sends on one connection at startPosition ``start``, faults applied."""
    msgs: list[bytes] = [b'{"message":"authorised"}']
    body = [
        _wire(i, (i - start + 1) if numbering == "restart" else i + 1, i == n - 1, quoted)
        for i in range(start, n)
    ]
    cut = len(body) + 10
    for kind, at in faults:
        # ``protect``: "auto" cannot tell this twice-in-a-row case apart (docs/wire.md)
        if protect and at < start and kind in ("lose", "swap"):
            continue
        if kind == "drop":
            cut = min(cut, at)
        elif at < len(body):
            if kind == "dup":
                body.insert(at + 1, body[at])
            elif kind == "swap" and at + 1 < len(body):
                body[at], body[at + 1] = body[at + 1], body[at]
            elif kind == "lose":
                body[at] = HEARTBEAT
            elif kind == "beat":
                body.insert(at, HEARTBEAT)
            elif kind == "noise":
                body.insert(at, b'{"type":"somethingNew","n":1}')
    return (msgs + body)[: cut + 1]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(1, N_MAX),
    server=st.sampled_from(["restart", "continue"]),
    client=st.sampled_from(["auto", "auto", "restart", "continue"]),
    quoted=st.booleans(),
    start=st.integers(0, 3),
    script=st.lists(st.lists(fault, max_size=4), max_size=8),
    window=st.sampled_from([1, 3, 32]),
    patience=st.sampled_from([0, 2]),
    hot=st.booleans(),
)
@example(5, "restart", "auto", False, 1, [[("lose", 0)]], 32, 2, True)  # seq 2 first at position 1
@example(5, "continue", "auto", True, 1, [[("swap", 0)], [("dup", 0)]], 32, 2, False)
@example(5, "restart", "auto", False, 2, [[("swap", 1), ("swap", 0)]], 1, 0, False)  # seq 3 at 2
@example(9, "restart", "auto", False, 0, [[("drop", 3), ("swap", 1)], [("lose", 0)]], 1, 0, True)
def test_every_record_once_in_order(
    n: int,
    server: str,
    client: str,
    quoted: bool,
    start: int,
    script: list[Any],
    window: int,
    patience: int,
    hot: bool,
) -> None:
    if client != "auto" and client != server:
        client = server  # a caller who states the numbering states it right
    start = min(start, n - 1)
    state = FeedState(start, numbering=client, window=window, patience=patience)  # type: ignore[arg-type]
    got: list[Action] = []
    for conn in range(len(script) + 4):
        p = state.connect()
        faults = script[conn] if conn < len(script) else []
        ambiguous = state._ambiguous  # a reconnect at 1 already said "seq 2 first" once
        protect = state.numbering == "auto" and p >= 1 and server == "restart" and ambiguous
        for data in _connection(p, n, server, faults, quoted, protect):
            step = _step(state, data) if hot else state.receive(classify(data, "actions"))
            got.extend(step.records)  # type: ignore[arg-type]
            if step.verdict == "gap" or step.finished:
                note(f"conn {conn} at {p}: {step.verdict} {step.reason}")
                break
        if state.finished:
            break
    assert state.finished
    ids = [a.fixture_action.action_id for a in got]
    want = [decode(Action, msgspec.json.encode(t)).fixture_action.action_id for t in _TEMPLATES]
    assert ids == want[start:n]
    assert state.position == n


# --------------------------------------------------------------------------- reconnecting


def test_reconnect_budget_counts_consecutive_failures() -> None:
    policy = RetryPolicy(max_retries=3, base=0.1, cap=1.0)
    call = Call()
    rng = random.Random(1)
    for _ in range(3):
        assert reconnect(ConnectionEnd(), call, policy, now=0, rng=rng).action == "retry"
    assert reconnect(ConnectionEnd(stalled=True), call, policy, now=0).action == "raise"


def test_delivering_connection_resets_budget() -> None:
    policy = RetryPolicy(max_retries=2)
    call = Call()
    for _ in range(50):  # a feed that lives all afternoon
        assert reconnect(ConnectionEnd(), call, policy, now=0).action == "retry"
        d = reconnect(ConnectionEnd(delivered=1), call, policy, now=0)
        assert d.action == "retry" and 0 <= d.wait <= policy.base
    assert call.retries == 0


@given(st.lists(st.integers(0, 3), max_size=40), st.integers(0, 4))
def test_reconnect_raises_exactly_after_budget(ends: list[int], budget: int) -> None:
    policy = RetryPolicy(max_retries=budget, base=0.0)
    call = Call()
    streak = 0
    for delivered in ends:
        d = reconnect(ConnectionEnd(delivered=delivered), call, policy, now=0)
        streak = 0 if delivered else streak + 1
        should_raise = streak > budget or (delivered and budget == 0)
        assert (d.action == "raise") == should_raise
        if should_raise:
            break


def test_bad_token_raises_once_or_refreshes_once() -> None:
    policy = RetryPolicy()
    assert reconnect(ConnectionEnd(auth_failed=True), Call(), policy, now=0).action == "raise"
    call = Call()
    end = ConnectionEnd(auth_failed=True)
    assert reconnect(end, call, policy, now=0, refreshable=True).action == "refresh"
    assert reconnect(end, call, policy, now=0, refreshable=True).action == "raise"


def test_deadline_is_respected() -> None:
    call = Call(total=0.05, now=0.0)
    policy = RetryPolicy(max_retries=10, base=10.0, cap=10.0)
    d = reconnect(ConnectionEnd(), call, policy, now=0.0, rng=random.Random(0))
    assert d.action == "raise"


def test_feed_hot_path_releases_held_and_counts_patience_afresh() -> None:
    wire = [_action_bytes(seq) for seq in range(1, 8)]
    s = FeedState(patience=1)
    s.connect()
    assert type(s.on_message(wire[0])) is Action  # the hot path: the record itself, no Step
    assert _step(s, wire[2]).verdict == "hold"
    assert _step(s, HEARTBEAT).verdict == "drop"  # patience 1: one other message is fine
    assert [r.fixture_action.fixture_seq_num for r in _step(s, wire[1]).records] == [2, 3]
    assert _step(s, wire[4]).verdict == "hold"  # a new hold: patience counts from 0 again
    assert _step(s, HEARTBEAT.decode()).verdict == "drop"
    assert _step(s, HEARTBEAT).verdict == "gap"
    assert s.position == 3
    assert _step(s, wire[3]).verdict == "drop"  # after a gap, until the next connect()
    s.connect()
    assert _step(s, wire[0]).records[0].fixture_action.fixture_seq_num == 1  # restart: index 3
    assert s.numbering == "restart" and s.position == 4


# --------------------------------------------------------------------------- merging


@given(
    st.lists(
        st.tuples(st.sampled_from("abc"), st.integers(0, 3)) | st.just(("pop", 0)),
        max_size=200,
    ),
    st.integers(1, 6),
)
def test_merge_keeps_order_bounds_memory_and_positions(ops: list[Any], per_feed: int) -> None:
    book: MergeBook[str] = MergeBook(per_feed)
    sent = {k: 0 for k in "abc"}
    taken: dict[str, list[int]] = {k: [] for k in "abc"}
    for k in "abc":
        book.add(k, start_position=10)
    records = [_rec(i) for i in range(4)]
    for key, count in ops:
        if key == "pop":
            got = book.pop()
            if got is not None:
                taken[got[0]].append(got[1].fixture_action.fixture_seq_num)  # type: ignore[union-attr]
            for k in book.resumable():
                assert not book.paused(k)
            continue
        if book.paused(key):  # a paused feed does not read its socket
            continue
        batch = tuple(_with_seq(records[(sent[key] + j) % 4], sent[key] + j) for j in range(count))
        sent[key] += count
        book.push(key, batch)
        assert book.buffered(key) < per_feed + 4  # at most one delivery past the bound
    for k in "abc":
        assert taken[k] == list(range(len(taken[k])))  # each feed's order, nothing skipped
        assert book.position(k) == 10 + len(taken[k])
        assert book.buffered(k) == sent[k] - len(taken[k])
    assert book.buffered() == sum(book.buffered(k) for k in "abc")
    assert len(book.remove("a")) == sent["a"] - len(taken["a"])


def _with_seq(record: Action, seq: int) -> Action:
    return msgspec.structs.replace(
        record, fixture_action=msgspec.structs.replace(record.fixture_action, fixture_seq_num=seq)
    )


def test_merge_pause_and_resume() -> None:
    book: MergeBook[int] = MergeBook(per_feed=4)
    book.add(1)
    assert not book.push(1, (_rec(0), _rec(1)))
    assert book.push(1, (_rec(2), _rec(3))) and book.paused(1)
    book.pop()
    assert book.resumable() == []
    book.pop()
    assert book.resumable() == [1] and not book.paused(1)
    assert book.position(1) == 2
    with pytest.raises(ValueError):
        book.add(1)
    with pytest.raises(ValueError):
        MergeBook(0)
    assert book.pop() is not None and book.pop() is not None and book.pop() is None


def test_statistics_feed_orders_by_fixture_seq_num() -> None:
    def packet(seq: int, last: bool = False) -> bytes:
        return msgspec.json.encode(
            dict(samples.STATISTICS, fixtureSeqNum=str(seq), seqNum=400 + seq, finished=last)
        )

    s = FeedState(kind="statistics")
    s.connect()
    got: list[int | None] = []
    for data in [packet(1), packet(3), packet(2), packet(2), HEARTBEAT, packet(4, last=True)]:
        step = _step(s, data)
        got += [r.seq_num for r in step.records]  # type: ignore[union-attr]
    assert got == [401, 402, 403, 404] and s.finished and s.position == 4
    with pytest.raises(ValueError):
        FeedState(kind="odds")  # type: ignore[arg-type]
