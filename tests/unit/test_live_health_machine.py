"""The pure state machine behind a live feed's health events (issue 44, item 1): whatever
the driver tells it, in any order, the events keep their rules."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from asyncsports._wire.live.health import (
    Connected,
    Coverage,
    Delayed,
    Ended,
    HealthEvent,
    HealthMachine,
    Lost,
    Reconnecting,
    Recovered,
    Resumed,
    VendorStatus,
)

CAUSES = st.sampled_from(["silent", "lagging"])
INPUTS = st.one_of(
    st.tuples(st.just("connected"), st.integers(1, 9), st.integers(0, 99)),
    st.tuples(st.just("lost"), st.integers(0, 99), st.text(max_size=5), st.booleans()),
    st.tuples(st.just("reconnecting"), st.integers(1, 9), st.floats(0, 30)),
    st.tuples(st.just("delay"), CAUSES, st.floats(0, 60)),
    st.tuples(st.just("recover"), CAUSES),
    st.tuples(st.just("status"), st.sampled_from(["alarm", "notice", "unknown"])),
    st.tuples(st.just("ended"), st.integers(0, 99), st.booleans()),
    st.tuples(st.just("coverage"), st.sampled_from(["CollectingLive", "CollectionDropped"])),
)


def _tell(m: HealthMachine, what: tuple[Any, ...], now: float) -> list[HealthEvent]:
    name, *args = what
    if name == "status":
        return m.status(args[0], "", b"{}", now)
    if name == "ended":
        return m.ended(args[0], args[1], "why", now)
    if name == "coverage":
        return m.coverage(args[0], None, "", 1, now)
    if name == "lost":
        return m.lost(args[0], args[1], args[2], now)
    method = getattr(m, name)
    return list(method(*args, now))


@given(st.lists(INPUTS, max_size=40))
def test_the_events_keep_their_rules_whatever_happens(inputs: list[tuple[Any, ...]]) -> None:
    m = HealthMachine("f")
    out: list[HealthEvent] = []
    delayed: str | None = None
    for now, what in enumerate(inputs):
        events = _tell(m, what, float(now))
        for e in events:
            assert e.fixture_id == "f" and e.at == now
        # A delay is one at a time, and recovered from by its own cause only.
        for e in events:
            if isinstance(e, Delayed):
                assert delayed is None
                delayed = e.cause
            elif isinstance(e, Recovered):
                assert delayed == e.cause and e.seconds >= 0
                delayed = None
            elif isinstance(e, (Lost, Reconnecting, Connected, Ended)):
                delayed = None
        out += events
        assert m.delayed == delayed
        assert (m.state == "delayed") == (delayed is not None)
    # Nothing after the end, and the state says it.
    ends = [i for i, e in enumerate(out) if isinstance(e, Ended)]
    assert len(ends) <= 1 and (not ends or ends[0] == len(out) - 1)
    assert (m.state == "over") == bool(ends)
    for i, e in enumerate(out):
        # Resumed follows the Connected of a connection after a lost one, at its position.
        if isinstance(e, Resumed):
            before = out[i - 1]
            assert isinstance(before, Connected) and before.position == e.position
            assert any(isinstance(x, Lost) for x in out[:i])
        # Lost only from an open connection.
        if isinstance(e, Lost):
            opened = [x for x in out[:i] if isinstance(x, (Connected, Lost))]
            assert opened and isinstance(opened[-1], Connected)
        # A status is told as it came, whatever the state but the end.
        if isinstance(e, VendorStatus):
            assert e.raw == b"{}"


@given(st.lists(INPUTS, max_size=40))
def test_the_state_follows_the_last_event(inputs: list[tuple[Any, ...]]) -> None:
    m = HealthMachine()
    for now, what in enumerate(inputs):
        said = _tell(m, what, float(now))
        events = [e for e in said if not isinstance(e, (VendorStatus, Coverage))]
        if events:
            last = events[-1]
            want = {
                Connected: "live",
                Resumed: "live",
                Recovered: "live",
                Lost: "reconnecting",
                Reconnecting: "reconnecting",
                Delayed: "delayed",
                Ended: "over",
            }[type(last)]
            assert m.state == want


def test_a_first_connection_is_not_resumed_and_a_delay_needs_an_open_feed() -> None:
    m = HealthMachine(1)
    assert m.delay("silent", 5, 0) == []  # connecting: not yet a delay
    assert [type(e) for e in m.connected(1, 0, 1)] == [Connected]
    assert [type(e) for e in m.delay("lagging", 9, 2)] == [Delayed]
    assert m.recover("silent", 3) == []  # not its cause
    assert m.delay("silent", 5, 3) == []  # one delay at a time
    (rec,) = m.recover("lagging", 4.5)
    assert isinstance(rec, Recovered) and rec.seconds == 2.5
    assert [type(e) for e in m.lost(3, "cut", False, 5)] == [Lost]
    assert [type(e) for e in m.connected(2, 3, 6)] == [Connected, Resumed]
    assert [type(e) for e in m.ended(4, True, "done", 7)] == [Ended]
    assert m.status("alarm", "x", b"", 8) == [] and m.connected(3, 4, 9) == []
