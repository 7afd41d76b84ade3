"""The publisher against a hostile Redis (issue 41): entries it did not write, a second
database publishing at the same moment, Redis out of memory, a user without the right to
``XADD``, and a bus that takes connections but fails every batch.

Each is a real ``redis-server`` of the test's own (tests/support/servers.py), changed
with redis-py as another client of the user's would change it. docs/wire.md's table "Bus
faults" names these tests row for row.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from support import ainvoke, until
from support.bus import consume, once_in_order, seqs
from support.servers import Bus, bus_server, free_port

from asyncsports import RetryPolicy
from asyncsports._wire.bus import origin
from asyncsports.emulator import Emulator
from asyncsports.errors import BusError
from asyncsports.store import MIRROR_COLUMNS, open_mirror
from asyncsports.sync import Mirror, Publisher

pytestmark = pytest.mark.slow  # a redis-server each, the emulator's mirrors

WITHIN = 30  # seconds any one condition may take on a loaded machine


@pytest.fixture
def redis_bus() -> Iterator[Bus]:
    server = bus_server("redis")
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
async def r(redis_bus: Bus) -> AsyncIterator[Any]:
    """A redis-py client of the bus, as another program of the user's."""
    client = aioredis.Redis.from_url(redis_bus.url)
    try:
        yield client
    finally:
        await client.aclose()


async def mirrors(emulator: Emulator, tmp_path: Path, n: int) -> list[str]:
    """``n`` SQLite mirrors of basketball, each a database of its own (its own origin)."""
    dbs = [str(tmp_path / f"m{i}.sqlite") for i in range(n)]
    async with emulator.client() as client:
        for db in dbs:
            await Mirror(client, db, sports=["basketball"], clock=emulator.clock.time).once()
    return dbs


async def origin_of(db: str) -> str:
    store = await open_mirror(db)
    try:
        return origin((await store.changes(0, 1))[0].committed_at)
    finally:
        await store.close()


async def held(
    client: Any, prefix: str = "asyncsports"
) -> dict[str, list[tuple[bytes, dict[bytes, bytes]]]]:
    """Every entry of every table's stream under ``prefix``."""
    return {t: await client.xrange(f"{prefix}:{t}") for t in MIRROR_COLUMNS}


# ----------------------------------------------------------- entries of someone else


@pytest.mark.parametrize("case", ["no-claim", "no-origin-field", "another-origin", "foreign-id"])
async def test_an_entry_this_database_did_not_write_is_refused_naming_it(
    sports_emulator: Emulator, tmp_path: Path, redis_bus: Bus, r: Any, case: str
) -> None:
    """Before the fix a foreign ``100-0`` with no origin key made the publisher resume
    after change 100: changes 1-100 never published, exit 0."""
    (db,) = await mirrors(sports_emulator, tmp_path, 1)
    ours = await origin_of(db)
    if case == "no-claim":
        await r.xadd("asyncsports:actions", {"x": "1"}, id="100-0")
    else:
        await r.set("asyncsports:origin", ours)
        fields = {
            "no-origin-field": {"change": "{}"},
            "another-origin": {"change": "{}", "origin": "0123456789abcdef"},
            "foreign-id": {"change": "{}", "origin": ours},
        }[case]
        await r.xadd("asyncsports:actions", fields, id="7-1" if case == "foreign-id" else "100-0")
    before = await held(r)
    result = await ainvoke("changes", "--db", db, "--to", redis_bus.url)
    assert result.exit_code == 22, result.output
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("asyncsports: error: ")]
    assert "asyncsports:actions" in line and ("7-1" if case == "foreign-id" else "100-0") in line, (
        line
    )
    assert "Traceback" not in result.stderr
    assert await held(r) == before  # nothing written
    if case == "no-claim":
        assert await r.get("asyncsports:origin") is None


async def test_two_databases_published_at_once_never_interleave(
    sports_emulator: Emulator, tmp_path: Path, redis_bus: Bus, r: Any
) -> None:
    """Two mirrors started together onto one Redis, many times: one publishes all its
    changes, the other is refused; no stream ever holds entries of both."""
    a, b = await mirrors(sports_emulator, tmp_path, 2)
    origins = {a: await origin_of(a), b: await origin_of(b)}
    assert origins[a] != origins[b]
    want = {a: await seqs(a), b: await seqs(b)}
    for n in range(12):
        prefix = f"p{n}"
        url = f"{redis_bus.url}?prefix={prefix}"
        pa, pb = Publisher(a, url, batch=40), Publisher(b, url, batch=40)
        got = await asyncio.gather(pa.once(), pb.once(), return_exceptions=True)
        refused = [db for db, g in zip((a, b), got, strict=True) if isinstance(g, BusError)]
        assert len(refused) == 1 and all(g is None or isinstance(g, BusError) for g in got), got
        (winner,) = {a, b} - set(refused)
        entries = [e for stream in (await held(r, prefix)).values() for e in stream]
        assert {fields[b"origin"].decode() for _, fields in entries} == {origins[winner]}, n
        assert (await r.get(f"{prefix}:origin")).decode() == origins[winner]
        once_in_order(await consume(url), want[winner])


# ------------------------------------------------------------ outages and refusals


class Counted(RetryPolicy):
    """The publisher's backoff, with each retry number it was asked for kept."""

    asked: list[int]

    def backoff(self, retry: int, rng: Any = None) -> float:
        self.asked.append(retry)
        return super().backoff(retry, rng)


def counted(base: float, cap: float) -> Counted:
    policy = Counted(max_retries=2**31, base=base, cap=cap)
    object.__setattr__(policy, "asked", [])
    return policy


async def fill(r: Any) -> int:
    """Redis at its ``maxmemory`` (1 MB, noeviction): every write refused with OOM; the
    number of ``filler<n>`` keys it took."""
    await r.config_set("maxmemory-policy", "noeviction")
    await r.config_set("maxmemory", "1mb")
    n = 0
    while True:
        try:
            await r.set(f"filler{n}", b"x" * 100_000)
        except Exception as exc:  # the OOM refusal, whatever class redis-py gives it
            assert "OOM" in repr(exc) or "memory" in str(exc), exc
            return n
        n += 1


@pytest.mark.parametrize("fault", ["oom", "replica"])
async def test_redis_taking_no_write_for_now_is_waited_for_then_caught_up(
    sports_emulator: Emulator, tmp_path: Path, redis_bus: Bus, r: Any, fault: str
) -> None:
    """Redis at its ``maxmemory`` (OOM), or made a replica of a master that is not there
    (READONLY): waited for, said once, counted, caught up once it takes writes again.
    Before the fix the OOM error (its code stripped by redis-py) ended ``run()`` with a
    BusError, where docs/wire.md promises a wait."""
    db = str(tmp_path / "m.sqlite")
    backoff = counted(0.05, 0.5)
    async with sports_emulator.client() as client:
        mirror = Mirror(client, db, sports=["basketball"], clock=sports_emulator.clock.time)
        await mirror.once()
        publisher = Publisher(db, redis_bus.url, backoff=backoff)
        running = asyncio.create_task(publisher.run())
        first = await seqs(db)
        await until(lambda: publisher.position == first[-1], within=WITHIN)
        if fault == "oom":
            fillers = await fill(r)
        else:
            await r.replicaof("127.0.0.1", str(free_port()))
        sports_emulator.clock.advance(3600)
        await mirror.once()
        later = await seqs(db)
        await until(lambda: len(backoff.asked) >= 4 or running.done(), within=WITHIN)
        assert not running.done(), running
        assert publisher.outages == 1 and publisher.position == first[-1]
        if fault == "replica":
            await r.replicaof("NO", "ONE")
        elif fillers:  # memory freed (the feed alone may have been over 1 MB)
            await r.delete(*(f"filler{n}" for n in range(fillers)))
        await r.config_set("maxmemory", "0")
        await until(lambda: publisher.position == later[-1], within=WITHIN)
        publisher.stop()
        await asyncio.wait_for(running, WITHIN)
    assert publisher.outages == 1
    once_in_order(await consume(redis_bus.url), later)


async def test_a_bus_failing_every_batch_is_tried_with_growing_backoff(
    sports_emulator: Emulator, tmp_path: Path, redis_bus: Bus, r: Any
) -> None:
    """Redis takes the connection, reads the position, refuses each batch (OOM): the
    publisher's tries are spaced ever more, not reset at each connect (before the fix:
    retry 0 each time, about 5 tries a second for ever)."""
    (db,) = await mirrors(sports_emulator, tmp_path, 1)
    await fill(r)
    backoff = counted(0.01, 60.0)
    publisher = Publisher(db, redis_bus.url, backoff=backoff)
    running = asyncio.create_task(publisher.run())
    t0 = time.monotonic()
    try:
        await until(lambda: len(backoff.asked) >= 7 or running.done(), within=WITHIN)
        assert not running.done(), running
        tries = list(backoff.asked)
        assert tries[:7] == list(range(7)), tries  # each failed batch a further retry
        assert publisher.outages == 1
        # Counted, not slept: the ceiling of the 7th wait alone is 0.64 s; at most as many
        # tries as the doubling allows in the time taken.
        assert len(tries) <= 7 + (time.monotonic() - t0) / 0.01
    finally:
        publisher.stop()
        await asyncio.wait_for(running, WITHIN)


@pytest.mark.parametrize("case", ["no-xadd", "wrong-password"])
async def test_a_user_refused_is_exit_22_even_when_following(
    sports_emulator: Emulator, tmp_path: Path, redis_bus: Bus, r: Any, case: str
) -> None:
    """An ACL user without ``XADD``: exit 22 naming the first change and its stream
    (before the fix: no change named); a wrong password: exit 22 at once, no wait."""
    (db,) = await mirrors(sports_emulator, tmp_path, 1)
    await r.execute_command(
        "ACL", "SETUSER", "pub", "on", ">s3cretpw", "~*", "&*", "+@all", "-xadd"
    )
    password = "s3cretpw" if case == "no-xadd" else "s3cretpwX"
    url = f"redis://pub:{password}@127.0.0.1:{redis_bus.port}/0"
    result = await ainvoke("changes", "--db", db, "--to", url, "--follow")
    assert result.exit_code == 22, result.output
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("asyncsports: error: ")]
    first = (await seqs(db))[0]
    if case == "no-xadd":
        assert f"change {first} (asyncsports:" in line and "xadd" in line, line
    assert "cannot reach" not in result.stderr
    assert "s3cretpw" not in result.output + result.stderr
    assert "Traceback" not in result.stderr


async def test_streams_deleted_under_a_running_publisher_are_exit_22_not_a_skip(
    sports_emulator: Emulator, tmp_path: Path, redis_bus: Bus, r: Any
) -> None:
    """``FLUSHDB`` while a publisher follows: its next batch would go on after changes no
    longer there (before the fix it did, the earlier ones never published again); it
    stops with a BusError instead, and a restart publishes the whole feed."""
    db = str(tmp_path / "m.sqlite")
    async with sports_emulator.client() as client:
        mirror = Mirror(client, db, sports=["basketball"], clock=sports_emulator.clock.time)
        await mirror.once()
        publisher = Publisher(db, redis_bus.url)
        running = asyncio.create_task(publisher.run())
        try:
            first = await seqs(db)
            await until(lambda: publisher.position == first[-1], within=WITHIN)
            await r.flushdb()
            sports_emulator.clock.advance(3600)
            await mirror.once()
            with pytest.raises(BusError, match="went back"):
                await asyncio.wait_for(running, WITHIN)
        finally:
            publisher.stop()
            with contextlib.suppress(BusError):
                await asyncio.wait_for(running, WITHIN)
    await Publisher(db, redis_bus.url).once()
    once_in_order(await consume(redis_bus.url), await seqs(db))


# ------------------------------------------------------------ a cancel is never lost


async def test_redis_py_is_given_no_socket_timeout_so_a_cancel_is_never_swallowed(
    redis_bus: Bus,
) -> None:
    """With a socket_timeout, redis-py writes under asyncio.wait_for, which on Python 3.11
    swallows a cancel arriving as the write drains (CPython gh-86296): CI's lowest leg saw
    a publisher killed there publish on. The bound is the bus's own instead."""
    from asyncsports._wire.bus import parse_target
    from asyncsports.bus import connect

    bus = await connect(parse_target(redis_bus.url), 2.0)
    try:
        assert bus.client.connection_pool.connection_kwargs.get("socket_timeout") is None  # type: ignore[attr-defined]
        await bus.ping()
    finally:
        await bus.close()


async def test_a_redis_that_stops_answering_is_a_timeout_within_the_bound(
    redis_bus: Bus, monkeypatch: pytest.MonkeyPatch
) -> None:
    from support.proxy import Proxy

    from asyncsports._wire.bus import parse_target
    from asyncsports.bus import classify, connect

    monkeypatch.setattr("asyncsports.bus._redis.ACK_TIMEOUT", 0.5)
    async with Proxy(redis_bus.port) as proxy:
        target = parse_target(f"redis://127.0.0.1:{proxy.port}/0")
        bus = await connect(target, 2.0)
        try:
            proxy.hold()
            started = time.monotonic()
            with pytest.raises(TimeoutError, match=r"no answer from redis://.* within 0.5 s") as e:
                await bus.ping()  # on the connection open, held
            assert time.monotonic() - started < 0.5 + WITHIN / 10
            assert classify(e.value) == "away"  # an outage, waited for
            started = time.monotonic()
            with pytest.raises(Exception) as e:  # a new connection: its handshake times out
                await bus.position(None)
            assert time.monotonic() - started < 2.0 + 0.5 + WITHIN / 10
            assert classify(e.value) == "away", repr(e.value)
        finally:
            proxy.release()
            await bus.close()


@pytest.mark.parametrize("follow", [[], ["--follow"]], ids=["once", "follow"])
async def test_a_redis_url_at_a_nats_servers_port_is_refused_naming_who_answered(
    tmp_path: Path, follow: list[str]
) -> None:
    """Issue 43, item 7, the other way round: redis-py read the NATS server's INFO as a
    reply to its PING and the line quoted all of it ("refuses: Protocol Error:
    b'INFO {"server_id":...'"). Now one line says who answered: exit 22, at once."""
    db = str(tmp_path / "m.sqlite")
    await (await open_mirror(db)).close()  # a mirror with nothing yet: it publishes
    nats = bus_server("nats")
    try:
        to = f"redis://127.0.0.1:{nats.port}/0"
        result = await ainvoke("changes", "--db", db, "--to", to, *follow)
    finally:
        nats.close()
    assert result.exit_code == 22, result.output
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("asyncsports: error: ")]
    said = f"asyncsports: error: {to} asyncsports:*: no Redis server there: "
    assert line.startswith(said + "a NATS server answered (INFO, version 2."), line
    assert "server_id" not in line
