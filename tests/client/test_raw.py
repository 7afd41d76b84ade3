"""``client.with_json``: every listing and single-record method gives each record's JSON as sent.

The stub serves hand-formatted JSON (indentation, spaces after colons, fields the models do
not know), and each test checks that a record's ``json`` is exactly the bytes the server
wrote for it, and that its ``value`` is what the plain method returns.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import msgspec
import pytest
from support.samples import (
    EVENT,
    FIXTURE_ID,
    MATCH,
    PLAYER_IMAGE,
    PLAYER_PROFILE,
    SEASON_ID,
    SQUAD,
    STANDINGS,
    STATISTICS,
    action,
    envelope,
    fixture,
)
from support.stub import Reply, Stub

from asyncsports import Client, RawRecord
from asyncsports.models import Action, Fixture, decode
from asyncsports.raw import WithJSON, elements

NEW = {"fieldFromTomorrow": {"nested": [1, "two", None]}, "anotherOne": True}


def pretty(obj: Any) -> str:
    """JSON as a person would write it: indented, a space after each colon."""
    return json.dumps(obj, indent=2)


def array_text(records: list[Any]) -> tuple[str, list[bytes]]:
    """A JSON array of ``records`` with odd spacing, and each element's exact bytes."""
    texts = [pretty(r) for r in records]
    return "[\n   " + " ,\n\n ".join(texts) + "  \n]\n", [t.encode() for t in texts]


def check(records: list[RawRecord[Any]], sent: list[bytes], plain: list[Any]) -> None:
    assert [r.json for r in records] == sent
    assert [r.value for r in records] == plain
    for r, s in zip(records, sent, strict=True):
        value, text = r  # a named pair: unpacks too
        assert value is r.value and text is r.json and isinstance(text, bytes)
        assert msgspec.json.decode(text) == json.loads(s)  # every field, known or not


async def test_actions_list_streamed(stub: Stub, client: Client) -> None:
    path = f"/american-football/fixtures/{FIXTURE_ID}/actions"
    records = [dict(action(i), **NEW) for i in range(1, 40)]
    text, sent = array_text(records)
    stub.add(path, Reply(text=text))
    got = await client.with_json.actions.list("american-football", FIXTURE_ID).collect()
    plain = await client.actions.list("american-football", FIXTURE_ID).collect()
    check(got, sent, plain)
    assert msgspec.json.decode(got[0].json)["fieldFromTomorrow"] == NEW["fieldFromTomorrow"]


async def test_actions_list_resumed_with_json_skips_what_was_handed_out(
    stub: Stub, client: Client
) -> None:
    path = f"/american-football/fixtures/{FIXTURE_ID}/actions"
    text, sent = array_text([action(i) for i in range(1, 11)])
    stub.add(path, Reply(text=text))
    listing = client.with_json.actions.list("american-football", FIXTURE_ID)
    first = [await anext(listing) for _ in range(4)]
    await listing.aclose()
    rest = await client.with_json.actions.list(
        "american-football", FIXTURE_ID, resume=listing.resume_token
    ).collect()
    assert [r.json for r in first + rest] == sent


async def test_fixtures_list_envelope_pages(stub: Stub, client: Client) -> None:
    page0 = [dict(fixture(i), **NEW) for i in range(3)]
    page1 = [fixture(i, rules=[{"rule": "ExtraTime", "value": "true"}]) for i in range(3, 5)]
    bodies, sent = [], []
    for n, items in enumerate((page0, page1)):
        env = envelope([], n, 3, 5)
        del env["content"]
        texts = [pretty(f) for f in items]
        bodies.append(
            Reply(text='{ "content" : [ ' + ",\n".join(texts) + " ],\n" + json.dumps(env)[1:])
        )
        sent += [t.encode() for t in texts]
    stub.add("/basketball/fixtures", *bodies)
    got = await client.with_json.fixtures.list("basketball", page_size=3).collect()
    stub.add("/basketball/fixtures", *bodies)
    plain = await client.fixtures.list("basketball", page_size=3).collect()
    check(got, sent, plain)
    assert got[3].value.rule("ExtraTime") == "true"


async def test_fixtures_list_bare_array_and_get(stub: Stub, client: Client) -> None:
    text, sent = array_text([fixture(i) for i in range(4)])
    stub.add("/basketball/fixtures", Reply(text=text))
    got = await client.with_json.fixtures.list("basketball").collect()
    check(got, sent, [decode(Fixture, s) for s in sent])
    one = pretty(dict(fixture(), updateCount=2, **NEW))
    stub.add(f"/basketball/fixtures/{FIXTURE_ID}", Reply(text=one))
    record = await client.with_json.fixtures.get("basketball", FIXTURE_ID)
    assert record.json == one.encode()
    assert record.value == await client.fixtures.get("basketball", FIXTURE_ID)
    assert record.value.update_count == 2


async def test_statistics_get_is_the_whole_body(stub: Stub, client: Client) -> None:
    body = pretty(dict(STATISTICS, **NEW))
    stub.add(f"/basketball/fixtures/{FIXTURE_ID}/statistics", Reply(text=body))
    record = await client.with_json.statistics.get("basketball", FIXTURE_ID)
    assert record.json == body.encode()
    assert record.value == await client.statistics.get("basketball", FIXTURE_ID)


@pytest.mark.parametrize("shape", ["array", "object"])
async def test_standings_each_packet(stub: Stub, client: Client, shape: str) -> None:
    packets = [dict(STANDINGS, **NEW), STANDINGS]
    if shape == "array":
        text, sent = array_text(packets)
    else:
        text = pretty(packets[0])
        sent = [text.encode()]
    stub.add(f"/soccer/seasons/{SEASON_ID}/standings", Reply(text=text))
    got = await client.with_json.standings.get("soccer", season_id=SEASON_ID)
    check(got, sent, await client.standings.get("soccer", season_id=SEASON_ID))


async def test_squads_list(stub: Stub, client: Client) -> None:
    text, sent = array_text([SQUAD, dict(SQUAD, **NEW)])
    stub.add(f"/cricket/seasons/{SEASON_ID}/squads", Reply(text=text))
    got = await client.with_json.squads.list("cricket", season_id=SEASON_ID).collect()
    check(got, sent, await client.squads.list("cricket", season_id=SEASON_ID).collect())


@pytest.mark.parametrize("shape", ["array", "object"])
async def test_snooker_listing_inside_data(stub: Stub, client: Client, shape: str) -> None:
    if shape == "array":
        inner, sent = array_text([MATCH, dict(MATCH, **NEW)])
    else:
        inner = pretty(MATCH)
        sent = [inner.encode()]
    stub.add("/snooker/tvfeed/matches/101", Reply(text='{"other": 1,\n "data" : ' + inner + "}"))
    got = await client.with_json.snooker.matches(101).collect()
    check(got, sent, await client.snooker.matches(101).collect())


async def test_snooker_single_records(stub: Stub, client: Client) -> None:
    profile = pretty(dict(PLAYER_PROFILE, **NEW))
    stub.add(
        "/snooker/tvfeed/current-tournament-winner/101", Reply(text=f'{{"data": [ {profile} ]}}')
    )
    record = await client.with_json.snooker.current_tournament_winner(101)
    assert record.json == profile.encode()
    assert record.value == await client.snooker.current_tournament_winner(101)
    image = pretty(PLAYER_IMAGE)
    stub.add("/snooker/tvfeed/player-info/1/101", Reply(text=f'{{ "data":{image} }}'))
    got = await client.with_json.snooker.player_info(1, 101)
    assert got.json == image.encode() and got.value == await client.snooker.player_info(1, 101)


async def test_events_list_paged_and_unpaged_playback(stub: Stub, client: Client) -> None:
    events = [dict(EVENT, id=i, **NEW) for i in range(3)]
    text, sent = array_text(events)
    stub.add("/api/v2/streaming/events", Reply(text=text))
    paired = await client.with_json.events.list().collect()
    check(paired, sent, await client.events.list().collect())
    one = pretty(EVENT)
    stub.add("/api/v2/streaming/events", Reply(text=one))
    (record,) = await client.with_json.events.list(restrictions="whitelist").collect()
    assert record.json == one.encode()
    body = pretty({"eventId": 7, "hlsUrl": "https://example.test/7.m3u8", **NEW})
    stub.add("/api/v2/streaming/events/7/stream", Reply(text=body))
    playback = await client.with_json.events.playback(7)
    assert playback.json == body.encode() and playback.value.event_id == 7


async def test_watchers_carry_the_json(stub: Stub, client: Client) -> None:
    path = f"/american-football/fixtures/{FIXTURE_ID}/actions"
    first = dict(action(1), **NEW)
    closing = dict(action(2, 21, "Post Match Check Complete"), finished=True)
    stub.add(path, Reply(text=pretty([first])), Reply(text=pretty([first, closing])))
    changes = [
        c
        async for c in client.with_json.actions.follow("american-football", FIXTURE_ID, interval=0)
    ]
    assert [(c.kind, msgspec.json.decode(c.record.json)) for c in changes] == [
        ("new", json.loads(json.dumps(first))),
        ("new", closing),
    ]
    assert changes[-1].record.value.finished
    stub.add("/api/v2/streaming/events", [EVENT], [])
    seen = []
    async for change in client.with_json.events.watch(interval=0):
        seen.append((change.kind, change.record.value.id, msgspec.json.decode(change.record.json)))
        if len(seen) == 2:
            break
    assert seen == [("live", EVENT["id"], EVENT), ("ended", EVENT["id"], EVENT)]


def test_with_json_decodes_a_run_like_the_typed_decoder() -> None:
    texts = [msgspec.json.encode(action(i)) for i in range(3)]
    run = b"[" + b",".join(texts) + b"]"
    pairs = WithJSON[Action](Action).decode(run)
    assert [p.json for p in pairs] == texts
    assert [p.value for p in pairs] == msgspec.json.decode(run, type=list[Action])
    assert WithJSON(Action).type == list[Action]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b' [ {"a": 1} , 2 ,"x"] ', [b'{"a": 1}', b"2", b'"x"']),
        (b' {"a": [1]}\n', [b'{"a": [1]}']),
        (b"null", []),
        (b"  ", []),
        (b"[]", []),
    ],
)
def test_elements(body: bytes, expected: list[bytes]) -> None:
    assert elements(body) == expected
    assert elements(msgspec.Raw(body)) == expected


def test_raw_record_is_a_named_pair() -> None:
    record = RawRecord(uuid.UUID(int=1), b"{}")
    assert record == (uuid.UUID(int=1), b"{}")
    assert record._fields == ("value", "json")


async def test_a_long_streamed_timeline_against_the_emulator() -> None:
    """Many 64 KiB chunks: each record's JSON is its slice of the body, boundaries or not."""
    import aiohttp

    from asyncsports.emulator import Emulator

    async with Emulator(seed=3, big_timeline=3000) as emu, emu.client() as client:
        fid = emu.big_fixture_id
        assert fid is not None
        async with (
            aiohttp.ClientSession() as http,
            http.get(  # the body as the server sends it
                f"{emu.base_url}/american-football/fixtures/{fid}/actions",
                headers={"Authorization": f"Bearer {emu.token}", "Accept": ACCEPT % emu.vendor},
            ) as resp,
        ):
            body = await resp.read()
        assert len(body) > 20 * 64 * 1024
        got = await client.with_json.actions.list("american-football", fid).collect()
        assert [r.json for r in got] == elements(body)
        assert [r.value for r in got] == await client.actions.list(
            "american-football", fid
        ).collect()


ACCEPT = "application/vnd.%s.dde.api+json;version=1"
