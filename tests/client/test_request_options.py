"""extra_query and extra_headers on every resource method, and the pure argument helpers.

The methods are driven against the stub server of conftest.py, which records what it
received; the helpers of asyncsports._http.request are checked with hypothesis.
"""

from __future__ import annotations

import inspect
import string
import typing
import urllib.parse
import uuid
from typing import Any

import pytest
from aiohttp import web
from hypothesis import example, given
from hypothesis import strategies as st
from support.samples import FIXTURE_ID, envelope, fixture
from support.stub import Stub

from asyncsports import Client, RequestOptions, StreamingCredentials
from asyncsports._http import request as arg
from asyncsports.errors import NotFoundError
from asyncsports.resources import (
    ActionsResource,
    EventsResource,
    FixturesResource,
    SnookerResource,
    SquadsResource,
    StandingsResource,
    StatisticsResource,
)
from asyncsports.resources.fixtures import COVERAGE_LEVELS, STATUSES, TYPES

EXTRA = {"extra_query": {"subscribed": "true"}, "extra_headers": {"X-Trace": "abc"}}


async def run(result: Any) -> Any:
    """Drive a resource method's result far enough to send its first request."""
    if hasattr(result, "collect"):
        return await result.collect()
    if inspect.isawaitable(result):
        return await result
    return await anext(result)


async def test_a_status_the_spec_omits_and_an_extra_parameter_both_reach_the_server(
    stub: Stub, client: Client
) -> None:
    stub.add("/basketball/fixtures", envelope([fixture()], 0, 20, 1))
    listing = client.fixtures.list(
        "basketball", status="suspended", extra_query={"subscribed": "true"}
    )
    assert len(await listing.collect()) == 1
    query = stub.last().query
    assert ("status", "suspended") in query
    assert ("subscribed", "true") in query
    assert ("page", "0") in query  # the listing's own paging still applies


async def test_extra_query_replaces_drops_and_repeats(stub: Stub, client: Client) -> None:
    stub.add("/basketball/fixtures", envelope([fixture()], 0, 20, 1))
    extra = {"status": "live", "paged": None, "tag": ["a", "b"], "flag": True, "n": 3}
    await client.fixtures.list("basketball", status="completed", extra_query=extra).collect()
    query = stub.last().query
    assert [v for k, v in query if k == "status"] == ["live"]  # merged after: it wins
    assert "paged" not in dict(query)  # None drops the method's own
    assert [v for k, v in query if k == "tag"] == ["a", "b"]
    assert ("flag", "true") in query and ("n", "3") in query


async def test_extra_headers_are_merged_after_the_clients_own(stub: Stub, client: Client) -> None:
    stub.add(f"/basketball/fixtures/{FIXTURE_ID}", fixture())
    headers = {"X-Trace": "abc", "accept": "application/json", "Content-Type": None}
    await client.fixtures.get("basketball", FIXTURE_ID, extra_headers=headers)
    seen = stub.last().headers
    assert seen["X-Trace"] == "abc"
    assert seen["Accept"] == "application/json"  # replaced, whatever the case
    assert "Content-Type" not in seen  # dropped
    assert seen["Authorization"] == "Bearer secret-token"
    # The next request is the client's own again.
    await client.fixtures.get("basketball", FIXTURE_ID)
    assert "X-Trace" not in stub.last().headers
    assert stub.last().headers["Content-Type"] == "application/json"


# Every public method of every resource, with arguments that send one request.
CALLS: list[tuple[str, Any]] = [
    ("fixtures.list", lambda c, **k: c.fixtures.list("basketball", **k)),
    ("fixtures.get", lambda c, **k: c.fixtures.get("basketball", FIXTURE_ID, **k)),
    ("squads.list", lambda c, **k: c.squads.list("cricket", season_id="2023", **k)),
    ("actions.list", lambda c, **k: c.actions.list("american-football", FIXTURE_ID, **k)),
    ("actions.follow", lambda c, **k: c.actions.follow("soccer", FIXTURE_ID, interval=0, **k)),
    ("standings.get", lambda c, **k: c.standings.get("soccer", season_id="s1", **k)),
    ("statistics.get", lambda c, **k: c.statistics.get("basketball", FIXTURE_ID, **k)),
    ("events.list", lambda c, **k: c.events.list(**k)),
    ("events.list paged", lambda c, **k: c.events.list(restrictions="whitelist", **k)),
    ("events.watch", lambda c, **k: c.events.watch(interval=0, **k)),
    ("events.playback", lambda c, **k: c.events.playback(7, **k)),
    ("snooker.tournaments", lambda c, **k: c.snooker.tournaments(**k)),
    ("snooker.matches", lambda c, **k: c.snooker.matches(1, **k)),
    ("snooker.ast", lambda c, **k: c.snooker.ast("x", **k)),
    ("snooker.centuries", lambda c, **k: c.snooker.centuries(1, **k)),
    ("snooker.tournament_players", lambda c, **k: c.snooker.tournament_players(1, **k)),
    ("snooker.tour_players", lambda c, **k: c.snooker.tour_players(**k)),
    (
        "snooker.current_tournament_winner",
        lambda c, **k: c.snooker.current_tournament_winner(1, **k),
    ),
    (
        "snooker.previous_tournament_winners",
        lambda c, **k: c.snooker.previous_tournament_winners(1, **k),
    ),
    ("snooker.player_info", lambda c, **k: c.snooker.player_info(1, 2, **k)),
]


@pytest.mark.parametrize(("name", "call"), CALLS, ids=[n for n, _ in CALLS])
async def test_every_method_sends_extra_query_and_headers(
    stub: Stub, client: Client, name: str, call: Any
) -> None:
    # Nothing is routed: each answers 404, after the request was received.
    with pytest.raises(NotFoundError):
        await run(call(client, **EXTRA))
    seen = stub.last()
    assert ("subscribed", "true") in seen.query, name
    assert seen.headers["X-Trace"] == "abc", name


@pytest.mark.parametrize(("name", "call"), CALLS, ids=[n for n, _ in CALLS])
async def test_an_unknown_keyword_is_a_type_error(
    stub: Stub, client: Client, name: str, call: Any
) -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'extra_qeury'"):
        await run(call(client, extra_qeury={"a": "b"}))
    assert stub.seen == []


RESOURCES = [
    ActionsResource,
    EventsResource,
    FixturesResource,
    SnookerResource,
    SquadsResource,
    StandingsResource,
    StatisticsResource,
]


def test_every_public_method_takes_the_options_once() -> None:
    options = typing.get_type_hints(RequestOptions)
    assert set(options) == {"extra_query", "extra_headers"}
    methods = 0
    for cls in RESOURCES:
        for name, fn in vars(cls).items():
            if name.startswith("_") or not callable(fn):
                continue
            methods += 1
            # One signature per method: the records with their JSON are client.with_json's.
            assert typing.get_overloads(fn) == [], f"{cls.__name__}.{name}"
            extra = inspect.signature(fn).parameters.get("extra")
            assert extra is not None and extra.kind is inspect.Parameter.VAR_KEYWORD, (
                f"{cls.__name__}.{name}"
            )
            assert "RequestOptions" in str(extra.annotation)
    assert methods == len(CALLS) - 1  # events.list is called twice


@pytest.mark.parametrize(
    ("extra", "error", "message"),
    [
        ({"extra_query": ["a"]}, TypeError, "extra_query: expected a mapping"),
        ({"extra_query": {"": "x"}}, ValueError, "extra_query: expected names"),
        ({"extra_query": {"a": {"b": 1}}}, TypeError, r"extra_query\['a'\]"),
        ({"extra_headers": {"Bad Name": "x"}}, ValueError, "not a header name"),
        ({"extra_headers": {"X-A": "a\r\nX-B: b"}}, ValueError, "line break"),
        ({"extra_headers": {"X-A": 1}}, TypeError, r"extra_headers\['X-A'\]"),
    ],
)
async def test_bad_options_are_refused_before_sending(
    stub: Stub, client: Client, extra: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        await client.fixtures.get("basketball", FIXTURE_ID, **extra)
    assert stub.seen == []


async def test_error_bodies_with_error_and_status_give_their_message(
    stub: Stub, client: Client
) -> None:
    # The stub's 404 body is {"error": "Not Found", "status": 404}.
    with pytest.raises(NotFoundError) as caught:
        await client.fixtures.get("basketball", FIXTURE_ID)
    assert caught.value.message == "Not Found"
    assert str(caught.value).startswith("404 Not Found (GET ")


# ---------------------------------------------------------------- pure helpers

PLAIN = string.ascii_letters + string.digits


@given(st.text(min_size=1))
@example("a+b?c#d%e")
@example("%2e%2e")
@example("...")
@example("ü")
def test_a_segment_is_one_path_segment_that_decodes_to_the_id(text: str) -> None:
    if arg._HIDDEN.search(text):
        with pytest.raises(ValueError, match=r"^season_id: must not hold whitespace"):
            arg.segment("season_id", text)
        return
    if "/" in text or text in (".", ".."):
        with pytest.raises(ValueError, match=r"^season_id: expected one path segment"):
            arg.segment("season_id", text)
        return
    got = arg.segment("season_id", text)
    assert got == text  # sent as given...
    path = arg.Request(f"/cricket/seasons/{got}/squads").target
    prefix, _, rest = path.partition("/cricket/seasons/")
    encoded, _, tail = rest.rpartition("/")
    # ...as exactly one segment, nothing of it read as a query, a fragment or a separator,
    assert prefix == "" and tail == "squads" and "/" not in encoded
    assert not set(encoded) & set("?# \t\r\n")
    # ...and it decodes back to the id, "%" included.
    assert urllib.parse.unquote(encoded, errors="strict") == text


@given(st.sampled_from(["", ".", "..", "/", "a/", "/b", "../x"]))
def test_a_segment_refuses_what_would_change_the_path(text: str) -> None:
    with pytest.raises(ValueError, match=r"^stage_id: "):
        arg.string_id("stage_id", text)


@given(st.uuids())
def test_a_uuid_as_a_string_id_is_its_canonical_text(value: uuid.UUID) -> None:
    assert arg.string_id("season_id", value) == str(value)


@st.composite
def respelled(draw: st.DrawFn, values: tuple[str, ...]) -> tuple[str, str]:
    """A known value in another case, with spaces, '-' or '_' between its characters."""
    wire = draw(st.sampled_from(values))
    out = []
    for char in wire:
        if not char.isalnum():
            out.append(draw(st.sampled_from([char, "", " "])))
            continue
        out.append(char.upper() if draw(st.booleans()) else char.lower())
        out.append(draw(st.sampled_from(["", "", " ", "-", "_"])))
    return wire, draw(st.sampled_from(["", " "])) + "".join(out)


@given(respelled(STATUSES + TYPES + COVERAGE_LEVELS))
@example(("completed", "Completed"))
@example(("completed", "COMPLETED"))
@example(("inVenue", "In Venue"))
@example(("inVenue", "in-venue"))
@example(("video(postmatch)", "Video (Post Match)"))
def test_a_known_filter_value_in_any_spelling_is_sent_in_the_wire_one(
    pair: tuple[str, str],
) -> None:
    wire, spelled = pair
    known = next(v for v in (STATUSES, TYPES, COVERAGE_LEVELS) if wire in v)
    assert arg.open_choice("status", spelled, known) == wire


@given(st.text(min_size=1).filter(str.strip))
@example("suspended")
@example("Dropped Collection")
def test_any_other_filter_value_is_sent_as_given(text: str) -> None:
    fold = "".join(c for c in text.lower() if c.isalnum())
    if any(fold == "".join(c for c in v.lower() if c.isalnum()) for v in STATUSES):
        return  # a known one, in some spelling
    assert arg.open_choice("status", text, STATUSES) == text


@given(st.text(alphabet=" \t\n", max_size=3))
def test_a_blank_filter_value_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"^status: expected a value"):
        arg.open_choice("status", text, STATUSES)


@given(
    st.dictionaries(st.text(PLAIN, min_size=1, max_size=5), st.text(max_size=5), max_size=4),
    st.lists(st.tuples(st.sampled_from("abc"), st.text(PLAIN, max_size=3)), max_size=4),
)
def test_extra_query_is_merged_after_the_methods_own(
    extra: dict[str, str], own: list[tuple[str, str]]
) -> None:
    req = arg.options(arg.Request("/x", tuple(own)), {"extra_query": extra})
    kept = [p for p in own if p[0] not in extra]
    assert req.params == tuple(kept) + tuple(extra.items())
    assert req.target == arg.Request("/x", req.params).target


async def test_client_defaults_go_with_every_request_below_the_methods_own(
    stub: Stub,
) -> None:
    stub.add("/basketball/fixtures", envelope([fixture()], 0, 20, 1))
    stub.add("/api/v2/streaming/events", [])
    async with Client(
        stub.url,
        token="secret-token",
        streaming_url=stub.url,
        streaming_credentials=StreamingCredentials(9, "stream-auth", 1700000000000),
        default_query={"subscribed": "true", "status": "live"},
        default_headers={"X-Team": "data", "Accept": "application/json"},
    ) as client:
        await client.fixtures.list("basketball", status="completed").collect()
        seen = stub.last()
        assert ("subscribed", "true") in seen.query
        assert [v for k, v in seen.query if k == "status"] == ["completed"]  # the method's
        assert seen.headers["X-Team"] == "data"
        assert seen.headers["Accept"] == "application/json"  # replaces the client's own
        assert seen.headers["Authorization"] == "Bearer secret-token"
        await client.fixtures.list(
            "basketball", extra_query={"subscribed": "false"}, extra_headers={"X-Team": "x"}
        ).collect()
        seen = stub.last()
        assert [v for k, v in seen.query if k == "subscribed"] == ["false"]
        assert ("status", "live") in seen.query
        assert seen.headers["X-Team"] == "x"
        await client.events.list().collect()  # the streaming host too
        assert ("subscribed", "true") in stub.last().query
        assert ("operatorId", "9") in stub.last().query


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"default_query": {"a": object()}}, r"^default_query\['a'\]"),
        ({"default_headers": {"X": "a\nb"}}, r"^default_headers\['X'\]"),
    ],
)
def test_bad_client_defaults_are_refused_at_once(kw: dict[str, Any], message: str) -> None:
    with pytest.raises((TypeError, ValueError), match=message):
        Client("http://127.0.0.1:9", token="t", **kw)


async def test_a_live_feed_sends_its_extra_query_and_headers_with_each_handshake() -> None:
    fid = uuid.UUID(int=9)
    seen: list[tuple[dict[str, str], str | None]] = []
    action = {"actionId": str(uuid.UUID(int=1)), "fixtureId": str(fid), "fixtureSeqNum": 1}

    async def feed(request: web.Request) -> web.StreamResponse:
        seen.append((dict(request.query), request.headers.get("X-Trace")))
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.receive()  # the token
        await ws.send_json({"fixtureAction": action, "finished": True})
        await ws.close()
        return ws

    app = web.Application()
    app.router.add_get(f"/basketball/fixtures/{fid}/actions", feed)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}"
    try:
        async with (
            Client(url, token="t", live_url="ws" + url[4:]) as c,
            c.live.actions(
                "basketball",
                fid,
                replay="turbo",  # a value the service may add: sent as given
                extra_query={"subscribed": "true"},
                extra_headers={"X-Trace": "abc"},
            ) as live,
        ):
            got = [a async for a in live]
    finally:
        await runner.cleanup()
    assert len(got) == 1
    ((query, trace),) = seen
    assert query["subscribed"] == "true" and query["speed"] == "turbo"
    assert query["startPosition"] == "0" and trace == "abc"
