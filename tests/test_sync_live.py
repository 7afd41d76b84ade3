"""The mirror over the live websockets (client.live): the emulator's clock steered."""

from __future__ import annotations

import asyncio
import urllib.parse
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from test_sync import FAST, as_sent, caught_up, rows, settled

from asyncsports import Client, RequestInfo
from asyncsports.emulator import Emulator
from asyncsports.sync import Mirror, Store


@pytest.fixture
async def emu() -> AsyncIterator[Emulator]:
    async with Emulator(seed=3, fixtures_per_season=16, actions_per_fixture=40) as e:
        yield e


def live_ids(mirror: Mirror) -> list[str]:
    return [t.args[1] for t in mirror.plan.tasks.values() if t.kind == "live"]


async def same_as_rest(client: Client, db: Path, fids: list[str], limit: float = 20) -> None:
    """Wait until the live fixtures' stored actions are REST's timeline (as the socket
    sends it), each in its place (the ``seq`` column is REST's ``fixtureSeqNum``)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while True:
        stored = {(r[0], r[1]): r for r in rows(db, "actions") if r[0] in fids}
        want = {}
        for fid in fids:
            for a, raw in await client.actions.list("basketball", fid, raw=True).collect():
                want[(fid, str(a.fixture_action.action_id))] = (a.fixture_action.fixture_seq_num,
                                                                as_sent(raw))  # fmt: skip
        got = {k: (r[3], as_sent(r[-1])) for k, r in stored.items()}
        if got == want:
            return
        if loop.time() > deadline:
            assert got == want
        await asyncio.sleep(0.05)


def rest_actions(urls: list[str], fids: list[str]) -> int:
    """The mirror's REST actions requests for these fixtures."""
    return sum(1 for u in urls if u.startswith("http") and u.endswith("/actions")
               and any(f in u for f in fids))  # fmt: skip


async def test_live_fixtures_come_over_the_websockets_and_end_as_rest(
    emu: Emulator, tmp_path: Path
) -> None:
    db = tmp_path / "m.sqlite"
    sent: list[str] = []  # by the mirror; the test reads REST with a client of its own

    def seen(info: RequestInfo) -> None:
        sent.append(info.url)

    async with emu.client(on_request=seen) as mine, emu.client() as client:
        mirror = Mirror(mine, db, sports=["basketball"], every=FAST, clock=emu.clock.time)
        assert mirror.live.actions is not None  # the client has a live_url: websockets
        running = asyncio.create_task(mirror.run())
        try:
            await caught_up(mirror)
            live = live_ids(mirror)
            assert live and mirror.live.open() == 2 * len(live)
            await same_as_rest(client, db, live)
            # The clock runs at an hour a second for a moment: records come as they happen.
            emu.clock.speed = 600
            await asyncio.sleep(0.1)
            emu.clock.speed = 0
            await caught_up(mirror)
            await same_as_rest(client, db, live)
            assert rest_actions(sent, live) == 0  # never polled while live
            assert set(live) <= {r[0] for r in rows(db, "statistics")}  # live statistics
        finally:
            mirror.stop()
            await running
        # Restarted: each feed resumes at the records it committed, no earlier, no later.
        store = Store(db)
        held = {fid: store.position(f"live:{fid}") for fid in live}
        store.close()
        sent.clear()
        emu.clock.advance(300)  # records the mirror was not there for
        mirror = Mirror(mine, db, sports=["basketball"], every=FAST, clock=emu.clock.time)
        running = asyncio.create_task(mirror.run())
        try:
            await caught_up(mirror)
            starts = {}
            for url in sent:
                parts = urllib.parse.urlsplit(url)
                if parts.scheme == "ws" and parts.path.endswith("/actions"):
                    fid = parts.path.split("/")[-2]
                    starts[fid] = int(urllib.parse.parse_qs(parts.query)["startPosition"][0])
            assert {f: starts[f] for f in live if f in starts} == {
                f: held[f] for f in live if f in starts
            }
            assert all(held[f] for f in live)  # each had records committed before the stop
            await same_as_rest(client, db, live_ids(mirror))
            assert rest_actions(sent, live) == 0
            # The fixtures end: their feeds end with them, then one REST read of each
            # (timeline and statistics), and the database is what REST answers.
            emu.clock.advance(6 * 3600)
            await caught_up(mirror)
            assert await settled(client, emu, db, ["basketball"], sockets=True)
            for fid in live:
                assert f"live:{fid}" not in mirror.feeds and f"live:{fid}" not in mirror.plan.tasks
                assert rest_actions(sent, [fid]) == 1
        finally:
            mirror.stop()
            await running
        assert mirror.live.open() == 0
