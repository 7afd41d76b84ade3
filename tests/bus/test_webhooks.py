"""The change feed as webhooks (issue 44, point 3): every change POSTed in commit order to
a receiver over loopback HTTP, signed per Standard Webhooks (checked with the
``standardwebhooks`` package: tests/support/webhooks.py), across a receiver down, 500s,
answers slower than the sender waits, a 429's Retry-After; a 400 holds the feed.

The publisher runs in the test's process here; as a process (killed -9, its exit codes):
tests/bus/test_webhooks_processes.py.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from support import ENGINES, until
from support.webhooks import SECRET, Receiver, feed, slow

from asyncsports._wire.retry import RetryPolicy
from asyncsports._wire.webhooks import SECRET_ENV, cursor_name
from asyncsports.emulator import Emulator
from asyncsports.errors import BusError
from asyncsports.store import open_mirror
from asyncsports.sync import Mirror, Publisher

# Slow: each test makes a mirror from the emulator, and most wait out answers, retries and
# a receiver down by design (3 to 11 s each, 30 s of the quick loop's CPU).
pytestmark = pytest.mark.slow

STOPPED = 60
"""Seconds a stopped publisher may take to publish what is committed and return: it posts
the rest of the feed first, which on CI's saturated cores took over 10 s."""

FAST = RetryPolicy(max_retries=2**31, base=0.01, cap=0.2)
"""A backoff that keeps the tests short (the publisher's own grows to 10 s)."""


@pytest.fixture(autouse=True)
def secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SECRET_ENV, SECRET)


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    got = Receiver()
    await got.start()
    try:
        yield got
    finally:
        await got.stop()


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


@pytest.fixture
async def small(tmp_path: Path, sports_emulator: Emulator) -> str:
    """A SQLite mirror database after one pass over basketball."""
    db = str(tmp_path / "m.sqlite")
    async with sports_emulator.client() as client:
        await Mirror(client, db, sports=["basketball"], clock=sports_emulator.clock.time).once()
    return db


async def cursor(db: str, url: str) -> int:
    store = await open_mirror(db)
    try:
        return await store.cursor(cursor_name(url.partition("?")[0]))
    finally:
        await store.close()


async def test_every_change_is_delivered_once_in_commit_order_signed(
    filled: str, receiver: Receiver
) -> None:
    want = await feed(filled)
    publisher = Publisher(filled, receiver.url)
    await publisher.once()
    assert len(want) > 100
    assert receiver.taken == want  # each once, in order, the body the bus carries
    assert not receiver.bad  # standardwebhooks verified every signature
    first = receiver.tries[0].headers
    assert first["Content-Type"] == "application/json"
    assert abs(int(first["webhook-timestamp"]) - time.time()) < 60
    assert publisher.published == len(want) and publisher.position == int(want[-1][0].split(":")[1])
    assert await cursor(filled, receiver.url) == publisher.position
    # Started again: the cursor says the endpoint has them all.
    again = Publisher(filled, receiver.url)
    await again.once()
    assert again.published == 0 and len(receiver.tries) == len(want)


async def test_500s_slow_answers_and_a_receiver_down_lose_nothing(
    small: str, receiver: Receiver
) -> None:
    """Every 50th try a 500 (some asking, by Retry-After, for no wait), two answers
    slower than the request's timeout, and the receiver down for two seconds: each
    change is taken, in order; copies only of what failed, each with the same id."""
    want = await feed(small)
    half = len(want) // 2

    async def answer(n: int, hid: str, body: bytes) -> web.StreamResponse | None:
        if n % 50 == 0:
            headers = {"Retry-After": "0"} if n % 100 == 0 else {}
            return web.Response(status=500, text="try later", headers=headers)
        if n in (7, 31):
            return await slow(1.0)  # the sender gave up at 0.3 s: sent again
        return None

    receiver.answer = answer
    publisher = Publisher(small, f"{receiver.url}?timeout=0.3", backoff=FAST)
    running = asyncio.create_task(publisher.run())
    try:
        await until(lambda: len(receiver.first()) >= half, within=60)
        await receiver.stop()
        down = time.monotonic()
        await until(lambda: not publisher.connected, within=10)
        await until(lambda: time.monotonic() - down >= 2, within=5)  # the outage's length
        await receiver.start()
        await until(lambda: len(receiver.first()) == len(want), within=60)
    finally:
        publisher.stop()
        await asyncio.wait_for(running, STOPPED)
    assert receiver.first() == [hid for hid, _ in want]
    assert not receiver.bad
    tried = [t.id for t in receiver.tries]
    assert len(tried) > len(want)  # the faults were met
    # Each change was tried until taken, and none after: the sender moved on only then.
    for hid, _ in want:
        at = [i for i, t in enumerate(tried) if t == hid]
        assert at == list(range(at[0], at[0] + len(at))), f"{hid} tried out of turn"
    assert await cursor(small, receiver.url) == int(want[-1][0].split(":")[1])


async def test_retry_after_is_honoured(small: str, receiver: Receiver) -> None:
    async def answer(n: int, hid: str, body: bytes) -> web.StreamResponse | None:
        if n == 3:
            return web.Response(status=429, headers={"Retry-After": "1"})
        return None

    receiver.answer = answer
    publisher = Publisher(small, receiver.url, backoff=FAST)
    running = asyncio.create_task(publisher.run())
    try:
        await until(lambda: len(receiver.tries) >= 5, within=30)
    finally:
        publisher.stop()
        await asyncio.wait_for(running, STOPPED)
    third, fourth = receiver.tries[2], receiver.tries[3]
    assert third.id == fourth.id
    assert fourth.at - third.at >= 0.95  # the backoff alone waits at most 0.01 s here


@pytest.mark.parametrize("status", [400, 404, 410, 301])
async def test_a_refusal_holds_the_feed_at_that_change(
    small: str, receiver: Receiver, status: int
) -> None:
    want = await feed(small)
    held = want[10][0]

    async def answer(n: int, hid: str, body: bytes) -> web.StreamResponse | None:
        if hid == held:
            text = f"no such fixture here\n(the secret was {SECRET})"
            return web.Response(status=status, text=text, headers={"Location": "/x"})
        return None

    receiver.answer = answer
    publisher = Publisher(small, receiver.url, backoff=FAST)
    with pytest.raises(BusError) as caught:
        await publisher.run()
    said = str(caught.value)
    seq = int(held.split(":")[1])
    assert f"change {seq} (" in said and f"webhook-id {held}" in said
    assert f"HTTP {status}" in said and "no such fixture here" in said
    assert SECRET not in said and SECRET.partition("_")[2] not in said
    assert receiver.taken == want[:10]
    assert [t.id for t in receiver.tries].count(held) == 1  # not tried again
    assert await cursor(small, receiver.url) == seq - 1


async def test_concurrency_keeps_each_tables_order(small: str, receiver: Receiver) -> None:
    want = await feed(small)

    async def answer(n: int, hid: str, body: bytes) -> web.StreamResponse | None:
        if n % 10 == 0:
            await asyncio.sleep(0.01)  # long enough for others to overlap it
        if n % 50 == 0:
            return web.Response(status=503)
        return None

    receiver.answer = answer
    publisher = Publisher(small, f"{receiver.url}?concurrency=4", backoff=FAST)
    running = asyncio.create_task(publisher.run())
    try:
        await until(lambda: len(set(receiver.first())) == len(want), within=120)
    finally:
        publisher.stop()
        await asyncio.wait_for(running, STOPPED)
    assert 1 < receiver.most <= 4
    assert not receiver.bad
    tables: dict[str, list[int]] = {}
    for hid in receiver.first():
        body = dict(want)[hid]
        tables.setdefault(json.loads(body)["table"], []).append(int(hid.split(":")[1]))
    for table, seqs in tables.items():
        assert seqs == sorted(seqs), f"{table} out of order"
    assert sorted(receiver.first()) == sorted(hid for hid, _ in want)
    assert await cursor(small, receiver.url) == int(want[-1][0].split(":")[1])


async def test_no_secret_is_a_bus_error(
    small: str, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SECRET_ENV)
    with pytest.raises(BusError, match=SECRET_ENV):
        await Publisher(small, receiver.url).once()
    assert not receiver.tries


async def test_an_endpoint_taking_changes_between_failures_is_not_backed_off_ever_longer(
    small: str, receiver: Receiver
) -> None:
    """The publisher's own backoff (up to 10 s): a 500 every fourth try, the changes
    between taken. Each failure waits the first retry's backoff (at most 0.25 s), as the
    endpoint took a change since the last (before, the backoff grew to 10 s over a
    batch, which an endpoint fails a change at a time)."""

    async def answer(n: int, hid: str, body: bytes) -> web.StreamResponse | None:
        return web.Response(status=500) if n % 4 == 0 else None

    receiver.answer = answer
    publisher = Publisher(small, receiver.url)
    running = asyncio.create_task(publisher.run())
    try:
        await until(lambda: len(receiver.tries) >= 48, within=30)
    finally:
        publisher.stop()
        await asyncio.wait_for(running, 15)
    gaps = [b.at - a.at for a, b in zip(receiver.tries[:47], receiver.tries[1:48], strict=True)]
    assert max(gaps) < 1.0, gaps


async def test_one_connection_carries_the_changes_whatever_the_answers_body(
    small: str, receiver: Receiver
) -> None:
    """A 200 with a body (75 kB): the connection is kept for the next change (else a
    TLS handshake a change); aiohttp reads the rest of an answer as it is released."""

    async def answer(n: int, hid: str, body: bytes) -> web.StreamResponse | None:
        receiver.taken.append((hid, body))
        return web.Response(status=200, text="thanks, got it " * 5000)

    receiver.answer = answer
    await Publisher(small, receiver.url).once()
    assert receiver.first() == [hid for hid, _ in await feed(small)]
    assert len({t.peer for t in receiver.tries}) == 1
