"""Pure diffing of the live watchers."""

import random
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from asyncsports._iter.watch import Change, Tracker, jittered


@dataclass(frozen=True)
class Rec:
    id: int
    version: str = "Pending"


def test_new_then_update_then_nothing() -> None:
    t: Tracker[Rec] = Tracker(lambda r: r.id)
    assert t.seen([Rec(1), Rec(2)]) == [Change("new", Rec(1)), Change("new", Rec(2))]
    assert t.seen([Rec(1), Rec(2, "Confirmed"), Rec(3)]) == [
        Change("update", Rec(2, "Confirmed")),
        Change("new", Rec(3)),
    ]
    assert t.seen([Rec(1), Rec(2, "Confirmed"), Rec(3)]) == []


def test_the_key_is_a_callable() -> None:
    t: Tracker[Rec] = Tracker(lambda r: (r.id, "k"))  # any hashable key
    assert t.seen([Rec(1)]) == [Change("new", Rec(1))] and (1, "k") in t.known
    with pytest.raises(TypeError, match="key: expected a callable"):
        Tracker("id")  # type: ignore[arg-type]


def test_presence_reports_live_and_ended() -> None:
    t: Tracker[Rec] = Tracker(lambda r: r.id, presence=True)
    assert t.seen([Rec(1), Rec(2)]) == [Change("live", Rec(1)), Change("live", Rec(2))]
    assert t.seen([Rec(2, "x"), Rec(3)]) == [Change("live", Rec(3)), Change("ended", Rec(1))]
    assert t.seen([]) == [Change("ended", Rec(2, "x")), Change("ended", Rec(3))]


@given(st.lists(st.lists(st.integers(0, 20), max_size=15), max_size=8))
def test_each_key_is_new_exactly_once(polls: list[list[int]]) -> None:
    t: Tracker[Rec] = Tracker(lambda r: r.id)
    news = [c.record.id for poll in polls for c in t.seen([Rec(i) for i in poll])]
    assert sorted(news) == sorted({i for poll in polls for i in poll})


@given(
    st.lists(st.sets(st.integers(0, 10), max_size=8), min_size=1, max_size=8),
)
def test_presence_changes_replay_to_the_last_poll(polls: list[set[int]]) -> None:
    t: Tracker[Rec] = Tracker(lambda r: r.id, presence=True)
    live: set[int] = set()
    for poll in polls:
        for change in t.seen([Rec(i) for i in sorted(poll)]):
            if change.kind == "live":
                assert change.record.id not in live
                live.add(change.record.id)
            else:
                live.remove(change.record.id)
        assert live == poll


@given(st.floats(0, 100), st.floats(0, 1), st.integers())
def test_jitter_stays_within_its_spread(interval: float, jitter: float, seed: int) -> None:
    delay = jittered(interval, jitter, random.Random(seed))
    assert max(0.0, interval * (1 - jitter)) - 1e-9 <= delay <= interval * (1 + jitter) + 1e-9
