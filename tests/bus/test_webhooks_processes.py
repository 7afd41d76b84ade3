"""``asyncsports changes --to http://...`` as a process (issue 44, point 3): killed -9 and
started again, it resumes from the database's cursor, sending again only what was in
flight (with the same webhook-id); a 400 ends it with exit 22 naming the change; the
secret is in none of its output, with -v. The receiver (tests/support/webhooks.py) runs
in the test's event loop, so every wait here is a condition looked at (:func:`until`),
never a blocking read."""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from aiohttp import web
from support import until
from support.cli import CLI
from support.procs import Command
from support.webhooks import SECRET, Receiver, feed

from asyncsports._wire.webhooks import SECRET_ENV
from asyncsports.emulator import Emulator
from asyncsports.sync import Mirror

pytestmark = pytest.mark.slow  # the command in subprocesses

ENV = {SECRET_ENV: SECRET}


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    got = Receiver()
    await got.start()
    try:
        yield got
    finally:
        await got.stop()


@pytest.fixture
async def small(tmp_path: Path, sports_emulator: Emulator) -> str:
    db = str(tmp_path / "m.sqlite")
    async with sports_emulator.client() as client:
        await Mirror(client, db, sports=["basketball"], clock=sports_emulator.clock.time).once()
    return db


@pytest.fixture
def started() -> Iterator[list[Command]]:
    """Every process a test starts, killed -9 as it ends."""
    commands: list[Command] = []
    try:
        yield commands
    finally:
        for command in commands:
            command.kill()


def no_secret(lines: list[str]) -> None:
    said = "".join(lines)
    assert SECRET not in said and SECRET.partition("_")[2] not in said, said


async def test_killed_and_started_again_it_resends_only_what_was_in_flight(
    small: str, receiver: Receiver, started: list[Command]
) -> None:
    want = [hid for hid, _ in await feed(small)]
    args = [*CLI, "-v", "changes", "--db", small, "--follow", "--to", receiver.url]
    first = Command(args, env=ENV)
    started.append(first)
    await until(lambda: len(receiver.taken) >= 300 or first.proc.poll() is not None, within=60)
    assert first.proc.poll() is None, first.drain()
    first.kill()
    await until(lambda: receiver.in_flight == 0, within=10)
    before = len(receiver.first())
    second = Command(args, env=ENV)
    started.append(second)
    await until(lambda: len(receiver.first()) == len(want) or second.proc.poll() is not None, 60)
    assert receiver.first() == want, second.drain()
    assert not receiver.bad
    # It resumed from the cursor, which lags what the receiver took by the one change in
    # flight at most; that one alone came twice, with the same webhook-id (and body).
    resumed = [line for line in second.drain() if "publishing the changes" in line]
    found = re.search(r"after change (\d+) ", resumed[0] if resumed else "")
    assert found, second.seen
    at = int(found[1])
    assert before - 1 <= at, (before, at)
    counted = Counter(hid for hid, _ in receiver.taken)
    doubled = [hid for hid, n in counted.items() if n > 1]
    assert doubled in ([], [want[at]]), (doubled, want[at])
    assert second.stop() == 0
    no_secret(first.drain() + second.drain())


async def test_a_400_exits_22_naming_the_change_without_the_secret(
    small: str, receiver: Receiver, started: list[Command]
) -> None:
    want = await feed(small)
    held = want[5][0]

    async def answer(n: int, hid: str, body: bytes) -> web.StreamResponse | None:
        if hid == held:
            return web.Response(status=400, text=f"bad payload; secret {SECRET}")
        return None

    receiver.answer = answer
    args = [*CLI, "-v", "changes", "--db", small, "--follow", "--to", receiver.url]
    sender = Command(args, env=ENV)
    started.append(sender)
    t0 = time.monotonic()
    await until(lambda: sender.proc.poll() is not None, within=60)
    lines = sender.drain()
    assert sender.proc.returncode == 22, lines
    said = "".join(lines)
    assert f"change {held.split(':')[1]} (" in said and "HTTP 400" in said, said
    assert "bad payload" in said
    no_secret(lines)
    assert receiver.taken == want[:5]
    assert time.monotonic() - t0 < 60


async def test_the_receiver_down_30_s_loses_nothing(
    small: str, receiver: Receiver, started: list[Command]
) -> None:
    """The issue's outage: the receiver down 30 s under a following sender (the command's
    own backoff, up to 10 s); every change taken once back, in order."""
    want = [hid for hid, _ in await feed(small)]
    args = [*CLI, "changes", "--db", small, "--follow", "--to", receiver.url]
    sender = Command(args, env=ENV)
    started.append(sender)
    await until(lambda: len(receiver.taken) >= 200 or sender.proc.poll() is not None, within=60)
    await receiver.stop()
    down = time.monotonic()
    await until(lambda: time.monotonic() - down >= 30, within=40)  # the outage's length
    assert sender.proc.poll() is None, sender.drain()
    await receiver.start()
    await until(lambda: len(receiver.first()) == len(want), within=60)
    assert receiver.first() == want
    assert not receiver.bad
    assert sender.stop() == 0
