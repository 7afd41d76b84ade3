"""The live feeds (websockets) of the emulator, with plain aiohttp ``ws_connect``."""

from __future__ import annotations

import asyncio
import datetime as dt
import subprocess
from typing import Any

import aiohttp
import msgspec
import pytest
from support import Standalone, until
from support.api import QUOTED, WAIT, Api, Feed, connect, fixture_id, rest_actions

from asyncsports.emulator import Emulator

INVALID = "{The supplied authentication is invalid}"


# The emulator of the ``sports_emulator`` fixture (asyncsports.testing.plugin).
pytestmark = pytest.mark.emulator(live_heartbeat=0.3)


def seqs(packets: list[Any]) -> list[int]:
    return [p["fixtureAction"]["fixtureSeqNum"] for p in packets]


def strip_seq(packets: list[Any]) -> list[Any]:
    out = msgspec.json.decode(msgspec.json.encode(packets))
    for p in out:
        p["fixtureAction"].pop("fixtureSeqNum")
    return out


# ---------------------------------------------------------------------- auth


async def test_bad_token_gets_the_text_and_a_close(sports_emulator: Emulator, api: Api) -> None:
    fid = await fixture_id(api, "live")
    feed = await connect(
        sports_emulator,
        api.session,
        f"/basketball/fixtures/{fid}/actions",
        token="wrong",
        ack=False,
    )
    msg = await feed.ws.receive(timeout=WAIT)
    assert msg.type is aiohttp.WSMsgType.TEXT and msg.data == INVALID
    assert (await feed.ws.receive(timeout=WAIT)).type is aiohttp.WSMsgType.CLOSE
    assert feed.ws.close_code == 1008


async def test_a_first_message_that_is_not_json_is_a_bad_token(
    sports_emulator: Emulator, api: Api
) -> None:
    fid = await fixture_id(api, "live")
    async with api.session.ws_connect(
        f"{sports_emulator.live_url}/basketball/fixtures/{fid}/actions"
    ) as ws:
        await ws.send_str("hello")
        assert (await ws.receive(timeout=WAIT)).data == INVALID


async def test_good_token_is_acknowledged_and_later_messages_ignored(
    sports_emulator: Emulator, api: Api
) -> None:
    fid = await fixture_id(api, "live")
    feed = await connect(sports_emulator, api.session, f"/basketball/fixtures/{fid}/actions")
    await feed.ws.send_json({"authToken": "wrong now, but ignored"})
    await feed.ws.send_str("not json either")
    assert len(await feed.packets(3)) == 3
    assert (
        sports_emulator.requests["live.actions"] == 1
        and sports_emulator.requests["live.statistics"] == 0
    )
    await feed.ws.close()


async def test_no_acknowledgement_when_switched_off(api: Api) -> None:
    async with Emulator(live_ack=False) as emu, aiohttp.ClientSession() as session:
        fid = await fixture_id(Api(emu, session), "live")
        feed = await connect(emu, session, f"/basketball/fixtures/{fid}/actions", ack=False)
        first = await feed.next()
        assert "fixtureAction" in first
        await feed.ws.close()


async def test_unknown_fixture_sport_and_bad_query_are_http_errors(
    sports_emulator: Emulator, api: Api
) -> None:
    fid = await fixture_id(api, "live")
    for path, query, status in [
        ("/basketball/fixtures/nope/actions", {}, 404),
        ("/curling/fixtures/x/actions", {}, 404),
        ("/volleyball/fixtures/x/actions", {}, 404),  # volleyball is under /v2
        (f"/basketball/fixtures/{fid}/actions", {"startPosition": "-1"}, 400),
        (f"/basketball/fixtures/{fid}/actions", {"speed": "warp"}, 400),
    ]:
        with pytest.raises(aiohttp.WSServerHandshakeError) as info:
            await api.session.ws_connect(sports_emulator.live_url + path, params=query)
        assert info.value.status == status, path


# ---------------------------------------------------------------------- actions


async def test_live_feed_is_the_rest_list_then_follows_the_clock(
    sports_emulator: Emulator, api: Api
) -> None:
    fid = await fixture_id(api, "live")
    rest = await rest_actions(api, "basketball", fid)
    feed = await connect(sports_emulator, api.session, f"/basketball/fixtures/{fid}/actions")
    first = await feed.packets(len(rest))
    assert first == rest  # same records, same order; fixtureSeqNum 1.. equals the timeline's
    assert seqs(first) == list(range(1, len(rest) + 1))
    sports_emulator.clock.advance(600)
    more = await feed.packets(1)
    assert more
    rest = await rest_actions(api, "basketball", fid)
    assert first + more == rest[: len(first) + 1]
    await feed.ws.close()


async def test_live_feed_runs_to_the_end_and_closes_normally(
    sports_emulator: Emulator, api: Api
) -> None:
    fid = await fixture_id(api, "live", "volleyball")
    feed = await connect(sports_emulator, api.session, f"/v2/volleyball/fixtures/{fid}/actions")
    got = await feed.packets(1)
    sports_emulator.clock.advance(6 * 3600)  # past the end: everything left is due now
    got += await feed.packets()
    assert feed.ws.close_code == 1000
    rest = await rest_actions(api, "volleyball", fid)
    assert got == rest and got[-1]["finished"] is True


async def test_start_position_skips_and_fixture_seq_restarts_at_one(
    sports_emulator: Emulator, api: Api
) -> None:
    fid = await fixture_id(api, "live")
    rest = await rest_actions(api, "basketball", fid)
    feed = await connect(
        sports_emulator, api.session, f"/basketball/fixtures/{fid}/actions", startPosition=5
    )
    got = await feed.packets(len(rest) - 5)
    assert strip_seq(got) == strip_seq(rest[5:])
    assert seqs(got) == list(range(1, len(rest) - 4))
    await feed.ws.close()


async def test_fixture_seq_continues_from_start_position_when_asked(api: Api) -> None:
    async with Emulator(live_seq="fixture") as emu, aiohttp.ClientSession() as session:
        a = Api(emu, session)
        fid = await fixture_id(a, "live")
        rest = await rest_actions(a, "basketball", fid)
        feed = await connect(emu, session, f"/basketball/fixtures/{fid}/actions", startPosition=5)
        assert await feed.packets(len(rest) - 5) == rest[5:]
        await feed.ws.close()


async def test_replay_fast_sends_a_finished_fixture_and_closes(
    sports_emulator: Emulator, api: Api
) -> None:
    fid = await fixture_id(api, "completed")
    rest = await rest_actions(api, "basketball", fid)
    feed = await connect(
        sports_emulator,
        api.session,
        f"/media/basketball/fixtures/{fid}/actions",
        speed="fast",
        startPosition=2,
    )
    got = await feed.packets()
    assert feed.ws.close_code == 1000
    assert strip_seq(got) == strip_seq(rest[2:])


async def test_replay_normal_keeps_the_gaps_from_the_connection(
    sports_emulator: Emulator, api: Api
) -> None:
    fid = await fixture_id(api, "completed")
    rest = await rest_actions(api, "basketball", fid)
    feed = await connect(
        sports_emulator, api.session, f"/basketball/fixtures/{fid}/actions", speed="normal"
    )
    first = await feed.packets(1)
    assert first == rest[:1]
    assert await feed.next(0.5) == {"type": "heartbeat", "timestamp": "2026-06-01T12:00:00.000Z"}
    sports_emulator.clock.advance(3600 * 6)
    assert first + await feed.packets() == rest
    assert feed.ws.close_code == 1000


def floats_in(x: Any) -> list[float]:
    if isinstance(x, float):
        return [x]
    if isinstance(x, dict):
        x = list(x.values())
    if isinstance(x, list):
        return [f for v in x for f in floats_in(v)]
    return []


async def test_decimals_are_quoted(sports_emulator: Emulator, api: Api) -> None:
    for f in await api.fixtures("basketball", {"status": "completed"}):
        r = await api.get(f"/basketball/fixtures/{f['id']}/actions")
        if b"1.0E-16" in r.body:
            break
    else:
        pytest.fail("no fixture with the tiny timelineSequence quirk")
    assert floats_in(msgspec.json.decode(r.body))  # REST: a bare number
    for name in ("actions", "statistics"):
        path = f"/basketball/fixtures/{f['id']}/{name}"
        feed = await connect(sports_emulator, api.session, path, speed="fast")
        await feed.packets()
        assert floats_in([msgspec.json.decode(m) for m in feed.raw]) == []
    actions = await connect(
        sports_emulator, api.session, f"/basketball/fixtures/{f['id']}/actions", speed="fast"
    )
    await actions.packets()
    assert any('"timelineSequence":"1.0E-16"' in m for m in actions.raw)


async def test_scheduled_fixture_waits_with_heartbeats(sports_emulator: Emulator, api: Api) -> None:
    fid = await fixture_id(api, "scheduled")
    feed = await connect(sports_emulator, api.session, f"/basketball/fixtures/{fid}/actions")
    beats = [await feed.next(1.0) for _ in range(2)]
    assert all(b["type"] == "heartbeat" for b in beats)
    sports_emulator.clock.advance(30 * 24 * 3600)
    assert len(await feed.packets()) > 10
    assert feed.ws.close_code == 1000


async def test_a_running_clock_delivers_without_advances(api: Api) -> None:
    async with Emulator(running_clock=True) as emu, aiohttp.ClientSession() as session:
        a = Api(emu, session)
        fid = await fixture_id(a, "completed")
        # A paced replay on a running clock: the first gap is real time; shrink it by moving on.
        feed = await connect(emu, session, f"/basketball/fixtures/{fid}/actions", speed="normal")
        assert len(await feed.packets(1)) == 1
        rest = await rest_actions(a, "basketball", fid)
        t0, t1 = (dt.datetime.fromisoformat(r["fixtureAction"]["timestamp"]) for r in rest[:2])
        emu.clock.advance(max(0.0, (t1 - t0).total_seconds() - 0.3))  # 0.3 s of real time left
        assert len(await feed.packets(1, wait=2.0)) == 1
        await feed.ws.close()


# ---------------------------------------------------------------------- statistics


async def test_statistics_feed_ends_with_the_rest_packet(
    sports_emulator: Emulator, api: Api
) -> None:
    fid = await fixture_id(api, "completed")
    feed = await connect(
        sports_emulator, api.session, f"/basketball/fixtures/{fid}/statistics", speed="fast"
    )
    got = await feed.packets()
    assert feed.ws.close_code == 1000
    assert len(got) > 5
    assert [p["fixtureSeqNum"] for p in got] == list(range(1, len(got) + 1))
    assert [p["finished"] for p in got] == [False] * (len(got) - 1) + [True]
    r = await api.get(f"/basketball/fixtures/{fid}/statistics")
    rest = QUOTED.decode(r.body)
    last = dict(got[-1])
    del last["fixtureSeqNum"]
    assert last == rest


async def test_statistics_feed_of_a_live_fixture_follows_the_clock(
    sports_emulator: Emulator, api: Api
) -> None:
    fid = await fixture_id(api, "live")
    feed = await connect(
        sports_emulator, api.session, f"/media/basketball/fixtures/{fid}/statistics"
    )
    now = await feed.packets(1)
    assert now and now[0]["finished"] is False and "teamActionAggregates" in now[0]
    sports_emulator.clock.advance(6 * 3600)
    rest = await feed.packets()
    assert rest[-1]["finished"] is True
    assert feed.ws.close_code == 1000


# ---------------------------------------------------------------------- faults


async def fault_feed(emu: Emulator, api: Api, kind: str, after: int = 3) -> tuple[Feed, list[Any]]:
    """A fast replay of a finished fixture with one ``kind`` fault after ``after`` packets."""
    fid = await fixture_id(api, "completed")
    emu.faults.live(kind, after=after)
    rest = await rest_actions(api, "basketball", fid)
    path = f"/basketball/fixtures/{fid}/actions"
    feed = await connect(
        emu, api.session, path, speed="fast", ack=kind not in ("bad_auth", "close")
    )
    assert emu.faults.injected["live." + kind] == 1
    return feed, rest


async def test_fault_drop_after_n(sports_emulator: Emulator, api: Api) -> None:
    feed, rest = await fault_feed(sports_emulator, api, "drop")
    assert await feed.packets() == rest[:3]
    assert feed.ws.close_code != 1000
    # The rule took one connection: the next gets the whole feed.
    fid = rest[0]["fixtureAction"]["fixtureId"]
    again = await connect(
        sports_emulator, api.session, f"/basketball/fixtures/{fid}/actions", speed="fast"
    )
    assert await again.packets() == rest


@pytest.mark.slow
async def test_fault_stall_stops_even_heartbeats(sports_emulator: Emulator, api: Api) -> None:
    feed, rest = await fault_feed(sports_emulator, api, "stall")
    assert await feed.packets(3) == rest[:3]
    with pytest.raises(TimeoutError):
        await feed.ws.receive(timeout=1.0)  # three heartbeat intervals of silence
    await feed.ws.close()


async def test_fault_duplicate(sports_emulator: Emulator, api: Api) -> None:
    feed, rest = await fault_feed(sports_emulator, api, "duplicate")
    got = await feed.packets()
    assert got == rest[:4] + rest[3:]


async def test_fault_reorder(sports_emulator: Emulator, api: Api) -> None:
    feed, rest = await fault_feed(sports_emulator, api, "reorder")
    got = await feed.packets()
    assert got == [*rest[:3], rest[4], rest[3], *rest[5:]]
    assert seqs(got)[3:5] == [5, 4]


async def test_fault_malformed_packet(sports_emulator: Emulator, api: Api) -> None:
    feed, rest = await fault_feed(sports_emulator, api, "malformed")
    got = await feed.packets(3)
    msg = await feed.ws.receive(timeout=WAIT)
    with pytest.raises(msgspec.DecodeError):
        msgspec.json.decode(msg.data)
    assert got + await feed.packets() == rest[:3] + rest[4:]


async def test_fault_bad_auth(sports_emulator: Emulator, api: Api) -> None:
    feed, _ = await fault_feed(sports_emulator, api, "bad_auth")
    assert (await feed.ws.receive(timeout=WAIT)).data == INVALID
    await feed.ws.receive(timeout=WAIT)
    assert feed.ws.close_code == 1008


async def test_fault_close_right_after_accepting(sports_emulator: Emulator, api: Api) -> None:
    feed, _ = await fault_feed(sports_emulator, api, "close")
    assert (await feed.ws.receive(timeout=WAIT)).type is aiohttp.WSMsgType.CLOSE
    assert feed.ws.close_code == 1011


async def test_fault_rules_pick_feed_skip_and_times(sports_emulator: Emulator, api: Api) -> None:
    rule = sports_emulator.faults.live("close", feed="statistics", skip=1, times=2)
    fid = await fixture_id(api, "completed")
    path = f"/basketball/fixtures/{fid}/"
    codes = []
    for feed_name in ("actions", "statistics", "statistics", "statistics", "statistics"):
        f = await connect(sports_emulator, api.session, path + feed_name, speed="fast", ack=False)
        first = await f.next()
        codes.append(None if first is None else first.get("type"))
        await f.ws.close()
    assert codes == ["authorised", "authorised", None, None, "authorised"]
    assert (rule.seen, rule.hits) == (4, 2)
    with pytest.raises(ValueError):
        sports_emulator.faults.live("explode")
    for kind in ("delay", "lag"):  # a delay or a lag of no length is no fault
        with pytest.raises(ValueError, match="seconds"):
            sports_emulator.faults.live(kind)
    with pytest.raises(ValueError, match="count"):
        sports_emulator.faults.live("coverage", count=0)


async def test_live_storm_is_seeded_and_resuming_by_position_gets_every_record(
    sports_emulator: Emulator, api: Api
) -> None:
    """A plain resume loop (skip what was kept, drop what repeats) under a storm."""
    storm = sports_emulator.faults.live_storm(
        1.0, seed=6, kinds=("drop", "stall", "duplicate", "reorder"), max_after=15
    )
    fid = await fixture_id(api, "completed")
    rest = await rest_actions(api, "basketball", fid)
    path = f"/basketball/fixtures/{fid}/actions"
    kept: list[Any] = []
    for _ in range(60):
        base = len(kept)  # this connection's fixtureSeqNum n is record base + n - 1
        feed = await connect(sports_emulator, api.session, path, speed="fast", startPosition=base)
        early: dict[int, Any] = {}
        try:
            while (m := await feed.next(0.5)) is not None:
                if "fixtureAction" in m:
                    early[base + m["fixtureAction"]["fixtureSeqNum"] - 1] = m
                while len(kept) in early:
                    kept.append(early.pop(len(kept)))
        except TimeoutError:
            pass  # a stall: reconnect
        await feed.ws.close()
        if len(kept) == len(rest):
            break
    assert strip_seq(kept) == strip_seq(rest)
    assert sum(sports_emulator.faults.injected[f"live.{k}"] for k in storm.kinds) >= 3


async def test_per_packet_storm_puts_many_faults_on_one_connection(
    sports_emulator: Emulator, api: Api
) -> None:
    storm = sports_emulator.faults.live_storm(
        0.3, seed=2, kinds=("duplicate", "reorder"), per_packet=True
    )
    fid = await fixture_id(api, "completed")
    rest = await rest_actions(api, "basketball", fid)
    feed = await connect(
        sports_emulator, api.session, f"/basketball/fixtures/{fid}/actions", speed="fast"
    )
    got = await feed.packets()
    assert feed.ws.close_code == 1000 and sports_emulator.requests["live.actions"] == 1
    assert (
        sports_emulator.faults.injected["live.duplicate"] >= 2
        and sports_emulator.faults.injected["live.reorder"] >= 2
    )
    assert len(got) == len(rest) + sports_emulator.faults.injected["live.duplicate"] and got != rest
    by_seq = {p["fixtureAction"]["fixtureSeqNum"]: p for p in got}
    assert [by_seq[n] for n in sorted(by_seq)] == rest  # every packet, its seq unchanged
    with pytest.raises(ValueError, match="per-packet"):
        sports_emulator.faults.live_storm(0.1, kinds=("bad_auth",), per_packet=True)
    assert storm.per_packet


@pytest.mark.parametrize("kind", ["delay", "lag"])
async def test_a_storm_refuses_a_kind_that_needs_a_length(
    sports_emulator: Emulator, kind: str
) -> None:
    # A storm draws only where and what: a delay or a lag of no length would do nothing.
    with pytest.raises(ValueError, match=f"{kind!r} needs seconds"):
        sports_emulator.faults.live_storm(0.5, kinds=("drop", kind))


# ---------------------------------------------------------------------- lifecycle


async def test_a_peer_vanishing_mid_feed_is_quiet(
    sports_emulator: Emulator, api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    fid = await fixture_id(api, "completed")
    for _ in range(3):
        feed = await connect(
            sports_emulator, api.session, f"/basketball/fixtures/{fid}/statistics", speed="fast"
        )
        assert await feed.packets(2)
        transport = feed.ws._response.connection.transport  # type: ignore[attr-defined]
        transport.abort()
    await until(lambda: not sports_emulator._live.sockets, within=5)  # each seen gone
    assert [r for r in caplog.records if r.levelname == "ERROR"] == []


async def test_closing_the_emulator_closes_feeds_going_away(api: Api) -> None:
    async with aiohttp.ClientSession() as session:
        emu = Emulator(live_heartbeat=5)
        await emu.start()
        fid = await fixture_id(Api(emu, session), "scheduled")
        feed = await connect(emu, session, f"/basketball/fixtures/{fid}/actions")
        reading = asyncio.create_task(feed.ws.receive(timeout=WAIT))
        await emu.close()
        msg = await reading
        assert (msg.type, msg.data) == (aiohttp.WSMsgType.CLOSE, 1001)


@pytest.mark.slow
async def test_live_url_and_standalone_prints_it() -> None:
    emu = Emulator()
    with pytest.raises(RuntimeError):
        _ = emu.live_url
    server = Standalone("--frozen", "--live-heartbeat", "0.2")
    try:
        url = server.info["live URL"]
        assert url.startswith("ws://127.0.0.1:")
        async with aiohttp.ClientSession() as session:
            base = server.info["base URL"]
            h = {
                "Accept": "application/vnd.imggaming.dde.api+json;version=1",
                "Authorization": f"Bearer {server.info['token']}",
            }
            async with session.get(base + "/basketball/fixtures?status=completed", headers=h) as r:
                fid = (await r.json(content_type=None))[0]["id"]
            async with session.ws_connect(
                f"{url}/basketball/fixtures/{fid}/actions?speed=fast"
            ) as ws:
                await ws.send_json({"authToken": server.info["token"]})
                n = 0
                async for _ in ws:
                    n += 1
                assert n > 10 and ws.close_code == 1000
    finally:
        server.proc.terminate()
        try:
            server.proc.wait(5)
        except subprocess.TimeoutExpired:  # stuck: killed, so the run is not held up
            server.proc.kill()
            server.proc.wait()
    await asyncio.sleep(0)
