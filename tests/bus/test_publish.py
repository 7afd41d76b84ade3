"""The change feed published to a bus (issue 34): every change once, in commit order, on
Redis Streams and on NATS JetStream, from a SQLite file and from PostgreSQL; the tests of
what a webhook endpoint shares with them (issue 44) on one too (``KINDS``). Not there:
two publishers without a lease (an endpoint cannot refuse a second copy: at least once),
another database's or an older copy's changes (an endpoint's cursor is the database's
own).

Each test fills a mirror database from the emulator (one pass), publishes it with a
:class:`~asyncsports.sync.Publisher` in the test's process, and reads the bus back as a
consumer of the guide does (tests/support/bus.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest
from support import ENGINES, until
from support.bus import KINDS, consume, once_in_order, seqs
from support.servers import Bus
from support.sqlite import sqlite

from asyncsports.emulator import Emulator
from asyncsports.errors import BusError
from asyncsports.store import open_mirror, redact_url
from asyncsports.sync import Mirror, Publisher, Standby


@pytest.fixture(params=ENGINES)
async def filled(request: pytest.FixtureRequest, tmp_path: Path, sports_emulator: Emulator) -> str:
    """A mirror database of each engine after one pass over basketball."""
    if request.param == "sqlite":
        db = str(tmp_path / "m.sqlite")
    else:
        db = str(request.getfixturevalue("postgres_url"))
    async with sports_emulator.client() as client:
        await Mirror(client, db, sports=["basketball"], clock=sports_emulator.clock.time).once()
    return db


@pytest.mark.parametrize("bus", KINDS, indirect=True)
async def test_every_change_is_published_once_in_commit_order(filled: str, bus: Bus) -> None:
    publisher = Publisher(filled, bus.url)
    await publisher.once()
    want = await seqs(filled)
    assert len(want) > 100 and publisher.published == len(want) and publisher.position == want[-1]
    got = await consume(bus.url)
    once_in_order(got, want)
    # The body is the line `asyncsports changes` prints: the record as stored.
    store = await open_mirror(filled)
    try:
        first = (await store.changes(0, 1))[0]
    finally:
        await store.close()
    body = next(g.body for g in got if g.seq == first.seq)
    assert body == first.as_dict()
    assert next(g.raw for g in got if g.seq == first.seq) == first.as_json()


@pytest.mark.parametrize("bus", KINDS, indirect=True)
async def test_a_second_publisher_publishes_nothing_again(filled: str, bus: Bus) -> None:
    await Publisher(filled, bus.url).once()
    again = Publisher(filled, bus.url)
    await again.once()
    assert again.published == 0 and again.position == (await seqs(filled))[-1]
    once_in_order(await consume(bus.url), await seqs(filled))


async def test_two_publishers_at_once_leave_each_change_once(filled: str, bus: Bus) -> None:
    """No lease between them: the bus itself refuses the second copy of each change."""
    a, b = Publisher(filled, bus.url, batch=50), Publisher(filled, bus.url, batch=70)
    await asyncio.gather(a.once(), b.once())
    once_in_order(await consume(bus.url), await seqs(filled))


@pytest.mark.parametrize("bus", KINDS, indirect=True)
async def test_follow_publishes_what_is_committed_later(
    tmp_path: Path, sports_emulator: Emulator, bus: Bus
) -> None:
    db = str(tmp_path / "m.sqlite")
    async with sports_emulator.client() as client:
        mirror = Mirror(client, db, sports=["basketball"], clock=sports_emulator.clock.time)
        await mirror.once()
        publisher = Publisher(db, bus.url)
        running = asyncio.create_task(publisher.run())
        first = await seqs(db)
        await until(lambda: publisher.position == first[-1], within=20)
        sports_emulator.clock.advance(3600)  # live fixtures move on: more actions
        await mirror.once()
        later = await seqs(db)
        assert len(later) > len(first)
        await until(lambda: publisher.position == later[-1], within=20)
        publisher.stop()
        await asyncio.wait_for(running, 20)
    once_in_order(await consume(bus.url), later)


@pytest.mark.parametrize("bus", KINDS, indirect=True)
async def test_a_run_after_a_stop_follows_again(
    tmp_path: Path, sports_emulator: Emulator, bus: Bus
) -> None:
    """A stop ends the run it was asked of (or the next, if asked before it), not every
    run after: a standby's next term runs the publisher again (issue 41: each new term's
    run returned at once, the stop of the lost term still set)."""
    db = str(tmp_path / "m.sqlite")
    async with sports_emulator.client() as client:
        mirror = Mirror(client, db, sports=["basketball"], clock=sports_emulator.clock.time)
        await mirror.once()
        publisher = Publisher(db, bus.url)
        publisher.stop()  # asked before the run: it publishes what is committed, then ends
        await asyncio.wait_for(publisher.run(), 20)
        first = await seqs(db)
        assert publisher.position == first[-1]
        running = asyncio.create_task(publisher.run())
        sports_emulator.clock.advance(3600)
        await mirror.once()
        later = await seqs(db)
        assert len(later) > len(first)
        await until(lambda: publisher.position == later[-1] or running.done(), within=20)
        assert not running.done() and publisher.position == later[-1]
        publisher.stop()
        await asyncio.wait_for(running, 20)
    once_in_order(await consume(bus.url), later)


async def test_a_bus_holding_another_databases_changes_is_refused(
    tmp_path: Path, sports_emulator: Emulator, bus: Bus
) -> None:
    dbs = [str(tmp_path / f"{n}.sqlite") for n in "ab"]
    async with sports_emulator.client() as client:
        for db in dbs:
            await Mirror(client, db, sports=["basketball"], clock=sports_emulator.clock.time).once()
    await Publisher(dbs[0], bus.url).once()
    with pytest.raises(BusError, match="another database"):
        await Publisher(dbs[1], bus.url).once()
    # Under a prefix (Redis) or stream (NATS) of its own, it is welcome.
    own = bus.url + ("?prefix=b" if bus.kind == "redis" else "?stream=B&prefix=b")
    await Publisher(dbs[1], own).once()
    once_in_order(await consume(own), await seqs(dbs[1]))


async def test_a_bus_ahead_of_the_database_is_refused(
    filled: str, bus: Bus, tmp_path: Path
) -> None:
    """A database restored from an older copy: the bus holds changes it has not."""
    if not filled.endswith(".sqlite"):
        pytest.skip("the older copy is a SQLite file's")
    older = tmp_path / "older.sqlite"
    with sqlite(filled) as src, sqlite(older) as dst:
        src.backup(dst)
    await Publisher(filled, bus.url).once()
    with sqlite(older) as conn:
        conn.execute("DELETE FROM changes WHERE seq > 10")
    with pytest.raises(BusError, match="is at change"):
        await Publisher(str(older), bus.url).once()


@pytest.mark.parametrize("bus", KINDS, indirect=True)
async def test_an_unreachable_bus_fails_a_single_pass_at_once(filled: str, bus: Bus) -> None:
    bus.stop()
    with pytest.raises(BusError, match="cannot publish to"):
        await asyncio.wait_for(Publisher(filled, bus.url, connect_timeout=2).once(), 15)


@pytest.mark.parametrize("bus", KINDS, indirect=True)
async def test_a_record_is_embedded_as_stored(filled: str, bus: Bus) -> None:
    """The message carries the record's JSON text, not a re-encoding of it."""
    await Publisher(filled, bus.url).once()
    store = await open_mirror(filled)
    try:
        lines = await store.change_rows(0, 5)
    finally:
        await store.close()
    got = {g.seq: g for g in await consume(bus.url)}
    for seq, *_, row, _at in lines:
        stored = json.loads(row)["json"]
        assert got[seq].body["record"] == json.loads(stored)


@pytest.mark.parametrize("bus", KINDS, indirect=True)
async def test_two_publishers_of_one_stream_elect_one_and_the_other_takes_over(
    filled: str, bus: Bus, caplog: pytest.LogCaptureFixture
) -> None:
    """Under the database's lease (one per bus stream): one publishes, the other stands
    by until the first stops, then takes over where the bus says the feed stands."""
    caplog.set_level(logging.INFO, logger="asyncsports.sync")
    first, second = Publisher(filled, bus.url), Publisher(filled, bus.url)
    name = f"bus {first.target.shown}"
    a, b = Standby(first, name=name, poll=0.1), Standby(second, name=name, poll=0.1)
    running_a = asyncio.create_task(a.run())
    await until(lambda: a.role == "writer", within=20)
    running_b = asyncio.create_task(b.run())
    await until(lambda: b.holder is not None, within=20)
    assert b.role == "standby" and b.holder == a.who
    want = await seqs(filled)
    await until(lambda: first.position == want[-1], within=20)
    a.stop()
    await asyncio.wait_for(running_a, 20)
    await until(lambda: b.role == "writer" and second.position == want[-1], within=20)
    b.stop()
    await asyncio.wait_for(running_b, 20)
    assert second.published == 0 and first.published == len(want)
    said = caplog.text
    db = redact_url(filled)  # a user without a password too is userinfo, hidden (issue 41)
    assert f"holding the lease {name!r} of {db}" in said
    assert f"standby for {name!r} of {db}: {a.who} is the publisher" in said
    once_in_order(await consume(bus.url), want)
