"""The pure parts: identifiers, the listing's filter/sort/page, wire formats, the world."""

from __future__ import annotations

import datetime as dt
import itertools
import random
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asyncsports.emulator import DEFAULT_NOW
from asyncsports.emulator._ids import IdCodec, Kind
from asyncsports.emulator._listing import DEFAULT_SORT, Filters, Listings, SortKey
from asyncsports.emulator._records import Fixture, Scale
from asyncsports.emulator._timeline import _potted
from asyncsports.emulator._wire import duration, iso_ms, iso_ns, naive, plus0000
from asyncsports.emulator._world import World

NOW = DEFAULT_NOW.timestamp()


@given(
    st.sampled_from(list(Kind)),
    st.integers(0, 15),
    st.integers(0, 63),
    st.integers(0, 255),
    st.integers(0, (1 << 38) - 1),
)
def test_ids_round_trip(kind: Kind, sport: int, comp: int, season: int, index: int) -> None:
    codec = IdCodec(5)
    text = codec.encode(kind, sport, comp, season, index)
    assert str(uuid.UUID(text)) == text and uuid.UUID(text).version == 4
    assert codec.decode(text) == (kind, sport, comp, season, index)
    assert codec.decode(text.upper()) == (kind, sport, comp, season, index)
    assert IdCodec(6).decode(text) is None


def test_foreign_ids_are_not_ours() -> None:
    codec = IdCodec(0)
    rnd = random.Random(1)
    assert all(
        codec.decode(str(uuid.UUID(int=rnd.getrandbits(128), version=4))) is None
        for _ in range(2000)
    )
    assert codec.decode("not-a-uuid") is None
    with pytest.raises(ValueError):
        codec.encode(Kind.FIXTURE, 16, 0, 0, 0)


def test_wire_formats() -> None:
    ts = dt.datetime(2023, 5, 1, 12, 0, tzinfo=dt.UTC).timestamp()
    assert naive(ts) == "2023-05-01T12:00:00"
    assert plus0000(ts) == "2023-05-01T12:00:00+0000"
    assert iso_ms(int(ts) * 1000 + 7) == "2023-05-01T12:00:00.007Z"
    assert iso_ns(int(ts) * 10**9 + 123456789) == "2023-05-01T12:00:00.123456789Z"
    assert duration(23_456_000_0) == "00:00:23.4560000"
    assert duration((86400 + 3723) * 10**7 + 5) == "1.01:02:03.0000005"


@given(st.integers(0, 147))
def test_potted_balls_make_the_break(points: int) -> None:
    values = {
        "redBalls": 1,
        "yellowBalls": 2,
        "greenBalls": 3,
        "brownBalls": 4,
        "blueBalls": 5,
        "pinkBalls": 6,
        "blackBalls": 7,
    }
    assert sum(values[k] * v for k, v in _potted(points).items()) == points


def test_scale_is_checked() -> None:
    for bad in ({"teams": 1}, {"competitions": 0}, {"seasons": 300}, {"fixtures_per_season": -1}):
        with pytest.raises(ValueError):
            Scale(**bad)


WORLD = World(0, DEFAULT_NOW, Scale(fixtures_per_season=37, seasons=3))
SEASONS = WORLD.seasons("basketball")
ALL = [WORLD.fixture(s, i) for s in SEASONS for i in range(s.n)]
RANK = WORLD.name_rank("basketball")


def reference(filters: Filters, sort: tuple[SortKey, ...]) -> list[str]:
    """The listing computed the slow, obvious way."""

    def keep(f: Fixture) -> bool:
        day = f.start - f.start % 86400
        return (
            (filters.statuses is None or f.status(NOW) in filters.statuses)
            and (filters.types is None or f.type in filters.types)
            and (filters.coverages is None or f.coverage in filters.coverages)
            and (filters.include_deleted or not f.deleted)
            and (filters.date_from is None or day >= filters.date_from)
            and (filters.date_until is None or day < filters.date_until)
        )

    full = list(sort) + [d for d in DEFAULT_SORT if d[0] not in dict(sort)]
    order = {s.id: n for n, s in enumerate(SEASONS)}

    def key(f: Fixture) -> tuple[int, ...]:
        parts = []
        for name, desc in full:
            v = RANK[f"{f.home.name} v {f.away.name}"] if name == "name" else f.start
            parts.append(-v if desc else v)
        return (*parts, order[f.season.id], f.index)

    return [f.id for f in sorted(filter(keep, ALL), key=key)]


SORTS: list[tuple[SortKey, ...]] = [
    (),
    *(((a, d1),) for a in ("name", "startTime") for d1 in (False, True)),
    *(
        ((a, d1), (b, d2))
        for a, b in (("name", "startTime"), ("startTime", "name"))
        for d1, d2 in itertools.product((False, True), repeat=2)
    ),
]
FILTERS = [
    Filters(),
    Filters(statuses=frozenset({"live"})),
    Filters(statuses=frozenset({"scheduled"})),
    Filters(statuses=frozenset({"completed"}), include_deleted=False),
    Filters(statuses=frozenset({"completed", "postponed"}), coverages=frozenset({"inVenue"})),
    Filters(types=frozenset({"official", "training"})),
    Filters(
        date_from=int(NOW) // 86400 * 86400 - 200 * 86400, date_until=int(NOW) // 86400 * 86400
    ),
]


@pytest.mark.parametrize("filters", FILTERS)
def test_listing_matches_the_obvious_computation(filters: Filters) -> None:
    listings = Listings(WORLD)
    for sort in SORTS:
        expected = reference(filters, sort)
        listing = listings.get(SEASONS, filters, sort, NOW)
        assert [f.id for f in listing] == expected
        assert listing.count() == len(expected)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(FILTERS),
    st.sampled_from(SORTS),
    st.integers(1, 40),
    st.permutations(range(12)),
)
def test_pages_in_any_order_match_the_list(
    filters: Filters, sort: tuple[SortKey, ...], size: int, order: list[int]
) -> None:
    listings = Listings(WORLD)  # fresh checkpoints, filled in the order pages are asked for
    expected = reference(filters, sort)
    pages = {
        p: [f.id for f in listings.get(SEASONS, filters, sort, NOW).page(p * size, size)]
        for p in order
    }
    for p, ids in pages.items():
        assert ids == expected[p * size : (p + 1) * size]
