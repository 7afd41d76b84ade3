"""The mirror over the live websockets (client.live): the emulator's clock steered."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import signal
import sqlite3
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import asyncpg
import pytest
from support import CLI, Standalone, clean_env
from support.mirror import FAST, as_sent, caught_up, rows, settled

from asyncsports import Client, RequestInfo
from asyncsports.emulator import Emulator
from asyncsports.store import is_postgres
from asyncsports.sync import Mirror, open_mirror
from asyncsports.sync._keys import Live

# The emulator of the ``sports_emulator`` fixture (asyncsports.testing.plugin).
pytestmark = [
    pytest.mark.slow,
    pytest.mark.emulator(seed=3, fixtures_per_season=16, actions_per_fixture=40),
]  # slow: mirrors over the websockets, the command in subprocesses


def live_ids(mirror: Mirror) -> list[str]:
    return [t.args[1] for t in mirror.plan.tasks.values() if t.kind == "live"]


async def same_as_rest(client: Client, db: Path | str, fids: list[str], limit: float = 20) -> None:
    """Wait until the live fixtures' stored actions are REST's timeline (as the socket
    sends it), each in its place (the ``seq`` column is REST's ``fixtureSeqNum``)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while True:
        stored = {(r[0], r[1]): r for r in rows(db, "actions") if r[0] in fids}
        want = {}
        for fid in fids:
            for a, raw in await client.with_json.actions.list("basketball", fid).collect():
                want[(fid, str(a.fixture_action.action_id))] = (
                    a.fixture_action.fixture_seq_num,
                    as_sent(raw),
                )
        got = {k: (r[3], as_sent(r[-1])) for k, r in stored.items()}
        if got == want:
            return
        if loop.time() > deadline:
            assert got == want
        await asyncio.sleep(0.05)


def rest_actions(urls: list[str], fids: list[str]) -> int:
    """The mirror's REST actions requests for these fixtures."""
    return sum(
        1
        for u in urls
        if u.startswith("http") and u.endswith("/actions") and any(f in u for f in fids)
    )


async def test_live_fixtures_come_over_the_websockets_and_end_as_rest(
    sports_emulator: Emulator, db: Path | str
) -> None:
    sent: list[str] = []  # by the mirror; the test reads REST with a client of its own

    def seen(info: RequestInfo) -> None:
        sent.append(info.url)

    async with sports_emulator.client(on_request=seen) as mine, sports_emulator.client() as client:
        mirror = Mirror(
            mine, db, sports=["basketball"], every=FAST, clock=sports_emulator.clock.time
        )
        assert mirror.live.actions is not None  # the client has a live_url: websockets
        running = asyncio.create_task(mirror.run())
        try:
            await caught_up(mirror)
            live = live_ids(mirror)
            assert live and mirror.live.open() == 2 * len(live)
            await same_as_rest(client, db, live)
            # The clock runs at an hour a second for a moment: records come as they happen.
            sports_emulator.clock.speed = 600
            await asyncio.sleep(0.1)
            sports_emulator.clock.speed = 0
            await caught_up(mirror)
            await same_as_rest(client, db, live)
            assert rest_actions(sent, live) == 0  # never polled while live
            assert set(live) <= {r[0] for r in rows(db, "statistics")}  # live statistics
        finally:
            mirror.stop()
            await running
        # Restarted: each feed resumes at the records it committed, no earlier, no later.
        store = await open_mirror(db)
        held = {fid: await store.position(f"live:{fid}") for fid in live}
        await store.close()
        sent.clear()
        sports_emulator.clock.advance(300)  # records the mirror was not there for
        mirror = Mirror(
            mine, db, sports=["basketball"], every=FAST, clock=sports_emulator.clock.time
        )
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
            sports_emulator.clock.advance(6 * 3600)
            await caught_up(mirror)
            assert await settled(client, sports_emulator, db, ["basketball"], sockets=True)
            for fid in live:
                assert Live(fid) not in mirror.feeds and Live(fid) not in mirror.plan.tasks
                assert rest_actions(sent, [fid]) == 1
        finally:
            mirror.stop()
            await running
        assert mirror.live.open() == 0


# ---------------------------------------------------------------------- kill -9


@pytest.fixture
def standalone() -> Iterator[tuple[str, str]]:
    """A standalone emulator frozen at the real now (the mirror's own clock): base and live URLs."""
    now = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
    with Standalone(
        "--frozen", "--now", now, "--fixtures-per-season", "12", "--actions-per-fixture", "60"
    ) as emu:
        yield emu.base_url, emu.info["live URL"]


def advance(base_url: str, seconds: float) -> None:
    body = json.dumps({"advance": seconds}).encode()
    req = urllib.request.Request(f"{base_url}/_emulator/clock", body, method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 200


_FED = (
    "SELECT p.name, p.position, (SELECT count(*) FROM changes c WHERE c.tbl = 'actions' "
    "AND c.key LIKE '[\"' || substr(p.name, 6) || '\",%') FROM positions p "
    "WHERE p.name LIKE 'live:%'"
)


async def _pg_fed(url: str) -> dict[str, tuple[int, int]]:
    conn = await asyncpg.connect(url)
    try:
        return {r[0].removeprefix("live:"): (r[1], r[2]) for r in await conn.fetch(_FED)}
    except asyncpg.UndefinedTableError:
        return {}  # not there yet
    finally:
        await conn.close()


def fed(db: Path | str) -> dict[str, tuple[int, int]]:
    """Per fixture followed over the socket: (records committed, action changes logged)."""
    if is_postgres(db):
        return asyncio.run(_pg_fed(str(db)))
    with contextlib.closing(sqlite3.connect(db, timeout=5)) as c:
        try:
            pos = c.execute("SELECT name, position FROM positions WHERE name LIKE 'live:%'")
            out = {}
            for name, n in pos.fetchall():
                fid = name.removeprefix("live:")
                logged = c.execute(
                    "SELECT count(*) FROM changes WHERE tbl = 'actions' AND key LIKE ?",
                    (f'["{fid}",%',),
                ).fetchone()[0]
                out[fid] = (n, logged)
            return out
        except sqlite3.OperationalError:
            return {}  # not there yet


async def timelines(base_url: str, fids: Iterable[str]) -> dict[str, int]:
    async with Client(base_url, token="emulator-token") as client:
        return {f: len(await client.actions.list("basketball", f).collect()) for f in fids}


def test_kill_9_then_a_restart_resumes_each_feed_without_repeats(
    standalone: tuple[str, str], new_db: Callable[[str], str]
) -> None:
    base_url, live_url = standalone
    db = new_db("m")
    args = [
        *CLI,
        "sync",
        "--base-url",
        base_url,
        "--live-url",
        live_url,
        "--token",
        "emulator-token",
        "--rate-limit",
        "0",
        "-s",
        "basketball",
        "--db",
        str(db),
        "--every",
        "live=0.2,fixtures=0.2,window=0.5",
    ]

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=clean_env()
        )

    def wait_for(done: Callable[[], bool]) -> None:
        deadline = time.monotonic() + 60
        while not done():
            assert time.monotonic() < deadline
            time.sleep(0.02)

    proc = start()
    try:
        wait_for(lambda: bool(fed(db)) and all(n for n, _ in fed(db).values()))
        advance(base_url, 240)  # records flow while it is killed mid-way
        time.sleep(0.05)
        proc.kill()
        proc.wait(10)
        before = fed(db)
        assert before
        advance(base_url, 240)  # and more while it is down
        proc = start()
        want = asyncio.run(timelines(base_url, before))
        # Each feed resumed where it stopped: every record of the timeline committed
        # once (one change each), none twice, none missing.
        wait_for(lambda: {f: fed(db).get(f, (0, 0))[0] for f in want} == want)
        after = fed(db)
        assert {f: after[f] for f in want} == {f: (n, n) for f, n in want.items()}
        assert any(before[f][0] < want[f] for f in want)  # records came after the kill
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            assert proc.wait(30) == 0
        finally:
            if proc.poll() is None:  # it follows for ever: never left behind
                proc.kill()
                proc.wait()
