"""The argument rule (docs/wire.md): checked before sending, sets case-blind, sports open, ids UUIDs.

Every test talks HTTP to the stub server of conftest.py and looks at what it received.
"""

from __future__ import annotations

import datetime as dt
import inspect
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from support.samples import FIXTURE_ID, STATISTICS, envelope, fixture
from support.stub import Stub

from asyncsports import Client, Sport
from asyncsports.errors import NotFoundError

Call = Callable[[Client, Any], Any]


async def run(result: Any) -> Any:
    """Drive whatever a resource method returned far enough to send its first request."""
    if hasattr(result, "collect"):
        return await result.collect()
    if inspect.isawaitable(result):
        return await result
    return await anext(result)


@pytest.mark.parametrize(
    ("sport", "path"),
    [
        ("Basketball", "/basketball"),
        (Sport.BASKETBALL, "/basketball"),
        ("Ice Hockey", "/ice-hockey"),
        ("ICE_HOCKEY", "/ice-hockey"),
        ("IceHockey", "/ice-hockey"),
        ("Volleyball", "/v2/volleyball"),
        ("american football", "/american-football"),
        ("curling", "/curling"),  # not in api-spec: the server judges it
        ("Table Tennis", "/v2/tabletennis"),  # the vendor's spelling, under v2
        ("Field Hockey", "/field-hockey"),
        ("v2/volleyball", "/v2/volleyball"),
    ],
)
async def test_sports_are_case_blind_and_open(
    stub: Stub, client: Client, sport: str, path: str
) -> None:
    stub.add(f"{path}/fixtures/{FIXTURE_ID}/statistics", STATISTICS)
    await client.statistics.get(sport, FIXTURE_ID)
    assert stub.last().path == f"{path}/fixtures/{FIXTURE_ID}/statistics"


async def test_an_unknown_sport_goes_to_the_server(stub: Stub, client: Client) -> None:
    with pytest.raises(NotFoundError):
        await client.fixtures.get("Curling", FIXTURE_ID)
    assert stub.last().path == f"/curling/fixtures/{FIXTURE_ID}"


@pytest.mark.parametrize("sport", ["a/b", "", "  ", "über", "-x", "ice hockey?", "..", "a%2F"])
async def test_a_sport_that_cannot_be_a_path_segment_is_refused(
    stub: Stub, client: Client, sport: str
) -> None:
    with pytest.raises(ValueError, match=r"^sport: "):
        await client.fixtures.get(sport, FIXTURE_ID)
    with pytest.raises(TypeError, match=r"^sport: "):
        await client.fixtures.get(7, FIXTURE_ID)  # type: ignore[arg-type]
    assert stub.seen == []


# The ids the spec types UUID, and those it types string (any one path segment).
UUID_CALLS: list[tuple[str, Call]] = [
    ("season_id", lambda c, v: c.fixtures.list("basketball", season_id=v)),
    ("fixture_id", lambda c, v: c.fixtures.get("basketball", v)),
    ("team_id", lambda c, v: c.squads.list("cricket", team_id=v)),
]
STRING_CALLS: list[tuple[str, Call]] = [
    ("season_id", lambda c, v: c.squads.list("cricket", season_id=v)),
    ("fixture_id", lambda c, v: c.actions.list("american-football", v)),
    ("fixture_id", lambda c, v: c.actions.follow("american-football", v, interval=0)),
    ("season_id", lambda c, v: c.standings.get("soccer", season_id=v)),
    ("stage_id", lambda c, v: c.standings.get("basketball", stage_id=v)),
    ("fixture_id", lambda c, v: c.statistics.get("basketball", v)),
]
ID_CALLS = UUID_CALLS + STRING_CALLS
UUID_NAMES = [f"{name}-{i}" for i, (name, _) in enumerate(UUID_CALLS)]
STRING_NAMES = [f"{name}-{i}" for i, (name, _) in enumerate(STRING_CALLS)]
ID_NAMES = UUID_NAMES + STRING_NAMES


@pytest.mark.parametrize(("name", "call"), UUID_CALLS, ids=UUID_NAMES)
@pytest.mark.parametrize("bad", ["42", "not-a-uuid", FIXTURE_ID[:-1], "../x", ""])
async def test_ids_the_spec_types_uuid_must_be_uuids(
    stub: Stub, client: Client, name: str, call: Call, bad: str
) -> None:
    with pytest.raises(ValueError, match=f"^{name}: expected a UUID"):
        await run(call(client, bad))
    with pytest.raises(TypeError, match=f"^{name}: expected a UUID"):
        await run(call(client, 42))
    assert stub.seen == []


@pytest.mark.parametrize(("name", "call"), STRING_CALLS, ids=STRING_NAMES)
@pytest.mark.parametrize(
    ("given", "sent"),
    [
        ("2023", "2023"),
        ("not-a-uuid", "not-a-uuid"),
        (FIXTURE_ID.upper(), FIXTURE_ID.upper()),
        ("a+b?c#d%e", "a%2Bb%3Fc%23d%25e"),
        ("über", "%C3%BCber"),
    ],
)
async def test_ids_the_spec_types_string_reach_the_server_as_given(
    stub: Stub, client: Client, name: str, call: Call, given: str, sent: str
) -> None:
    with pytest.raises(NotFoundError):  # the stub knows no such path: 404
        await run(call(client, given))
    assert f"/{sent}/" in stub.last().raw_path or stub.last().raw_path.endswith(f"/{sent}")


@pytest.mark.parametrize(("name", "call"), STRING_CALLS, ids=STRING_NAMES)
@pytest.mark.parametrize("bad", ["", ".", "..", "../x", "a/b", "/"])
async def test_a_string_id_must_be_one_path_segment(
    stub: Stub, client: Client, name: str, call: Call, bad: str
) -> None:
    with pytest.raises(ValueError, match=f"^{name}: expected one path segment"):
        await run(call(client, bad))
    with pytest.raises(TypeError, match=f"^{name}: expected an id"):
        await run(call(client, 42))
    assert stub.seen == []


async def test_squads_of_a_season_named_2023_reach_the_server(stub: Stub, client: Client) -> None:
    stub.add("/v2/volleyball/seasons/2023/squads", [])
    assert await client.squads.list("volleyball", season_id="2023").collect() == []
    assert stub.last().path == "/v2/volleyball/seasons/2023/squads"


@pytest.mark.parametrize(("name", "call"), ID_CALLS, ids=ID_NAMES)
async def test_a_uuid_id_is_sent_in_canonical_form(
    stub: Stub, client: Client, name: str, call: Call
) -> None:
    given = uuid.UUID(FIXTURE_ID)
    uuid_typed = (name, call) in UUID_CALLS
    # Text is canonicalised only where the spec types the id UUID; a UUID always is.
    for value in (given, FIXTURE_ID.upper(), given.hex) if uuid_typed else (given,):
        with pytest.raises(NotFoundError):  # the stub knows no such path: 404
            await run(call(client, value))
        assert FIXTURE_ID in stub.last().path and FIXTURE_ID.upper() not in stub.last().path


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("live", lambda c: c.fixtures.list("basketball", live="true")),
        ("include_deleted", lambda c: c.fixtures.list("basketball", include_deleted=1)),
        ("live", lambda c: c.events.list(live=1)),
        ("vendor_data_id", lambda c: c.events.list(vendor_data_id="yes")),
        ("for_season", lambda c: c.snooker.ast(1, for_season="false")),
        ("status", lambda c: c.fixtures.list("basketball", status=1)),
        ("date_from", lambda c: c.fixtures.list("basketball", date_from=20240101)),
        ("start", lambda c: c.snooker.tournaments(start=2024)),
        ("sort", lambda c: c.fixtures.list("basketball", sort=3)),
        ("sort", lambda c: c.snooker.matches(1, sort=[1])),
        ("page_size", lambda c: c.fixtures.list("basketball", page_size="20")),
        ("interval", lambda c: c.events.watch(interval="30")),
        ("resume", lambda c: c.fixtures.list("basketball", resume=3)),
        ("lookahead", lambda c: c.events.list(lookahead=1.5)),
        ("lookahead", lambda c: c.events.list(restrictions="whitelist", lookahead="2")),
    ],
)
async def test_a_wrong_type_is_a_type_error_naming_the_argument(
    stub: Stub, client: Client, name: str, call: Callable[[Client], Any]
) -> None:
    with pytest.raises(TypeError, match=f"^{name}: expected"):
        await run(call(client))
    assert stub.seen == []


async def test_sort_values_are_sent_in_the_wire_spelling(stub: Stub, client: Client) -> None:
    stub.add("/basketball/fixtures", envelope([fixture()], 0, 20, 1))
    await client.fixtures.list("basketball", sort=["StartTime , DESC", "NAME"]).collect()
    assert [v for k, v in stub.last().query if k == "sort"] == ["startTime,desc", "name"]
    stub.add("/snooker/tvfeed/matches/1", {"data": []})
    await client.snooker.matches(1, sort=["roundNumber,ASC", "matchId"]).collect()
    assert [v for k, v in stub.last().query if k == "sortOptions"] == ["roundNumber,asc", "matchId"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: c.snooker.matches(1, sort="round number"), "sort field"),
        (lambda c: c.snooker.matches(1, sort="matchId,up"), "sort direction"),
        (lambda c: c.snooker.matches(1, sort=[""]), "sort"),
        (lambda c: c.snooker.tournaments(start="2024-13-01"), "start"),
        (lambda c: c.snooker.tournaments(end="next week"), "end"),
    ],
)
async def test_snooker_values_are_checked_like_the_others(
    stub: Stub, client: Client, call: Callable[[Client], Any], message: str
) -> None:
    with pytest.raises(ValueError, match=f"^{message}: "):
        await run(call(client))
    assert stub.seen == []


async def test_snooker_dates_are_sent_as_dates(stub: Stub, client: Client) -> None:
    stub.add("/snooker/tvfeed/tournaments", {"data": []})
    start = dt.datetime(2024, 1, 1, 23, 30, tzinfo=dt.timezone(dt.timedelta(hours=-2)))
    await client.snooker.tournaments(start=start, end="2024-02-01").collect()
    assert stub.last().query == [("start", "2024-01-02"), ("end", "2024-02-01")]


@pytest.mark.parametrize(
    ("given", "sent"),
    [
        ("Completed", "completed"),
        ("COMPLETED", "completed"),
        (" completed ", "completed"),
        ("suspended", "suspended"),  # not in the spec: the server judges it
        ("Suspended Collection", "Suspended Collection"),
    ],
)
async def test_filter_values_are_open(stub: Stub, client: Client, given: str, sent: str) -> None:
    stub.add("/basketball/fixtures", envelope([], 0, 20, 0))
    await client.fixtures.list("basketball", status=given).collect()
    assert ("status", sent) in stub.last().query


@pytest.mark.parametrize(
    ("call", "wire", "sent"),
    [
        (lambda c, v: c.fixtures.list("basketball", coverage_level=v), "coverageLevel", "inVenue"),
        (lambda c, v: c.fixtures.list("basketball", type=v), "type", "official"),
    ],
)
@pytest.mark.parametrize("spelling", ["upper", "title", "kebab"])
async def test_known_filter_values_in_response_spellings(
    stub: Stub, client: Client, call: Call, wire: str, sent: str, spelling: str
) -> None:
    words = {"inVenue": ["in", "venue"], "official": ["official"]}[sent]
    given = {
        "upper": "".join(words).upper(),
        "title": " ".join(w.title() for w in words),
        "kebab": "-".join(words),
    }[spelling]
    stub.add("/basketball/fixtures", envelope([], 0, 20, 0))
    await call(client, given).collect()
    assert (wire, sent) in stub.last().query


async def test_events_restrictions_are_open(stub: Stub, client: Client) -> None:
    stub.add("/api/v2/streaming/events", [])
    await client.events.list(restrictions="Greylist", sub_restrictions="WHITELIST").collect()
    query = stub.last().query
    assert ("restrictions", "Greylist") in query and ("subRestrictions", "whitelist") in query


async def test_an_unknown_sort_field_is_sent_as_given(stub: Stub, client: Client) -> None:
    stub.add("/basketball/fixtures", envelope([], 0, 20, 0))
    await client.fixtures.list("basketball", sort=["updatedAt,DESC", "STARTTIME"]).collect()
    assert [v for k, v in stub.last().query if k == "sort"] == ["updatedAt,desc", "startTime"]


@pytest.mark.parametrize(
    ("old", "new", "call"),
    [
        ("size", "page_size", lambda c, kw, _: c.fixtures.list("basketball", **kw)),
        ("speed", "replay", lambda c, kw, fid: c.live.actions("basketball", fid, **kw)),
        ("speed", "replay", lambda c, kw, fid: c.live.statistics("basketball", fid, **kw)),
        ("sort_options", "sort", lambda c, kw, _: c.snooker.tour_players(**kw)),
    ],
)
async def test_a_renamed_keyword_still_works_for_a_release_and_says_so(
    sports_client: Client, old: str, new: str, call: Callable[..., Any]
) -> None:
    client = sports_client
    done = await anext(client.fixtures.list("basketball", status="completed", page_size=1))
    value = {"page_size": 5, "replay": "fast", "sort": "playerId"}[new]
    with pytest.warns(DeprecationWarning, match=f"{old}= is deprecated: use {new}=") as seen:
        listing = call(client, {old: value}, done.id)
    async with listing:  # the old name reaches the wire as the new one does
        assert len([r async for r in listing]) > 0
    assert seen[0].filename == __file__  # it points at the caller's line
    with pytest.raises(TypeError, match=f"give {new}= only"):
        call(client, {old: value, new: value}, done.id)
