"""The live stream events listing (api-spec 2.7, 4.8) and the playback address."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from support.api import Api

from asyncsports.auth import StreamingCredentials, stream_token

EVENTS = "/streaming/api/v2/streaming/events"
PLUS0000 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000$")


def parse(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S%z")


async def test_listing_holds_future_and_live_events(api: Api) -> None:
    r = await api.events()
    assert r.status == 200
    events = r.json()
    now = api.emu.clock.now()
    assert len(events) > 100
    for e in events:
        assert set(e) == {"id", "title", "tournament", "updatedAt", "startDate", "endDate"}
        assert set(e["tournament"]["property"]["sport"]) == {"id", "name"}
        assert all(PLUS0000.match(e[k]) for k in ("updatedAt", "startDate", "endDate"))
        assert parse(e["endDate"]) > now
    live = [e for e in events if parse(e["startDate"]) <= now]
    assert live and len(live) < len(events)
    only_live = (await api.events({"live": "true"})).json()
    assert only_live == live


async def test_vendor_data_ids_point_at_fixtures(api: Api) -> None:
    events = (await api.events({"vendorDataID": "true"})).json()
    linked = [e for e in events if "vendorDataID" in e]
    assert linked and len(linked) < len(events)
    sports = {
        "Basketball": "/basketball",
        "Soccer": "/soccer",
        "Ice Hockey": "/ice-hockey",
        "American Football": "/american-football",
        "Volleyball": "/v2/volleyball",
    }
    for e in linked[:8]:
        path = sports[e["tournament"]["property"]["sport"]["name"]]
        fixture = await api.json(f"{path}/fixtures/{e['vendorDataID']}")
        assert fixture["name"] == e["title"]


@pytest.mark.parametrize("mode", ["whitelist", "blacklist"])
async def test_restrictions_add_countries_and_page(api: Api, mode: str) -> None:
    full = (await api.events()).json()
    restricted = (await api.events({"restrictions": mode})).json()
    assert [e["id"] for e in restricted] == [e["id"] for e in full]
    for e in restricted:
        assert e["restrictionRequest"] == mode and "subDivisionList" not in e
        assert all(re.match(r"^[A-Z]{2}$", c) for c in e["countryList"])
    sub = (await api.events({"subRestrictions": mode})).json()
    assert all(re.match(r"^US-[A-Z]{2}$", s) for e in sub for s in e["subDivisionList"])
    assert any(e["subDivisionList"] for e in sub)
    pages = []
    page = 0
    while True:
        got = (
            await api.events({"restrictions": mode, "page.size": "40", "page.page": str(page)})
        ).json()
        pages.append(got)
        if len(got) < 40:
            break
        page += 1
    assert [e for p in pages for e in p] == restricted


async def test_page_size_above_500_is_400_never_403(api: Api) -> None:
    for params in ({"page.size": "501"}, {"page.size": "501", "restrictions": "whitelist"}):
        r = await api.events(params)
        assert r.status == 400 and r.json()["status"] == 400
    assert (await api.events({"page.size": "500"})).status == 200
    for params in ({"page.size": "0"}, {"restrictions": "greylist"}, {"format": "csv"}):
        assert (await api.events(params)).status == 400


async def test_xml_format(api: Api) -> None:
    r = await api.events({"format": "xml", "live": "true"})
    assert r.status == 200 and r.headers["Content-Type"].startswith("application/xml")
    assert r.body.startswith(b"<events><event><id>") and r.body.endswith(b"</event></events>")


async def test_credentials(api: Api) -> None:
    emu = api.emu
    assert (await api.events(static=True)).status == 200
    now_ms = emu.clock.time_ms()
    good = stream_token(emu.stream_secret, "127.0.0.1", now_ms)
    cases = {
        "missing": [("operatorId", "1")],
        "operator": [("operatorId", "2"), ("auth", good), ("timestamp", str(now_ms))],
        "token": [("operatorId", "1"), ("auth", "0" * 32), ("timestamp", str(now_ms))],
        "ip": [
            ("operatorId", "1"),
            ("timestamp", str(now_ms)),
            ("auth", stream_token(emu.stream_secret, "10.0.0.1", now_ms)),
        ],
        "old": [
            ("operatorId", "1"),
            ("timestamp", str(now_ms - 31_000)),
            ("auth", stream_token(emu.stream_secret, "127.0.0.1", now_ms - 31_000)),
        ],
    }
    for name, params in cases.items():
        r = await api.get(EVENTS, params)
        assert r.status == 401, name
        assert r.json()["status"] == 401
    then = now_ms - 29_000
    auth = stream_token(emu.stream_secret, "127.0.0.1", then)
    fresh = [("operatorId", "1"), ("auth", auth), ("timestamp", str(then))]
    assert (await api.get(EVENTS, fresh)).status == 200
    fixed = StreamingCredentials(1, auth="emulator-static-auth", timestamp=1385554442935)
    assert (await api.get(EVENTS, fixed.params())).status == 200


async def test_playback_of_live_events(api: Api) -> None:
    events = (await api.events()).json()
    now = api.emu.clock.now()
    live = next(e for e in events if parse(e["startDate"]) <= now)
    later = next(e for e in events if parse(e["startDate"]) > now)
    creds = api.emu.streaming_credentials.params()
    r = await api.get(f"{EVENTS}/{live['id']}/stream", creds)
    assert r.status == 200
    body = r.json()
    assert body["eventId"] == live["id"] and body["hlsUrl"].endswith(".m3u8")
    assert (await api.get(f"{EVENTS}/{later['id']}/stream", creds)).status == 400
    assert (await api.get(f"{EVENTS}/12/stream", creds)).status == 404
    assert (await api.get(f"{EVENTS}/{live['id']}/stream")).status == 401
