"""A deposed writer steps down within a bound even when its mirror will not stop: asked to
stop, cancelled after GRACE, then left behind after another GRACE (it is fenced off), so
the process stands by again and can still exit. The standby end to end, in processes:
tests/storage/test_sync_standby.py."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import time
from pathlib import Path
from typing import Any, cast

import pytest
from support.lease import StandIn
from support.wait import until

from asyncsports.store import Lease
from asyncsports.store._sqlite import HOST
from asyncsports.sync import _standby
from asyncsports.sync._standby import Standby


class Stubborn(StandIn):
    """A mirror's stand-in that neither stops when asked nor ends when cancelled (a writer
    stuck in a call that swallows the cancel), until :meth:`let_go`."""

    def __init__(self, db: Path) -> None:
        self.name = self.db = str(db)
        self.connect_timeout = 5.0
        self.label = "mirror"
        self.fence: Lease | None = None
        self.started = asyncio.Event()
        self.cancels = 0
        self._free = asyncio.Event()

    def stop(self) -> None:
        pass  # not heard

    def let_go(self) -> None:
        self._free.set()

    async def run(self) -> None:
        self.started.set()
        while not self._free.is_set():
            try:
                await self._free.wait()
            except asyncio.CancelledError:
                self.cancels += 1  # swallowed: the bug a bound must survive

    once = run


def steal(db: Path) -> None:
    """Take the lease from under its holder (a live "thief", for a minute)."""
    with contextlib.closing(sqlite3.connect(db, timeout=10, isolation_level=None)) as file:
        file.execute(
            "UPDATE sync_lease SET term = term + 1, holder = 'thief', pid = ?, host = ?, "
            "expires = ? WHERE name = 'sync'",
            (os.getpid(), HOST, time.time() + 60),
        )


def release(db: Path) -> None:
    """The thief's lease given up."""
    with contextlib.closing(sqlite3.connect(db, timeout=10, isolation_level=None)) as file:
        file.execute("UPDATE sync_lease SET expires = 0 WHERE holder = 'thief'")


class Looks:
    """Counts a standby's looks at the lease from now on."""

    def __init__(self, standby: Standby) -> None:
        self.n = 0
        holder = standby.election.holder

        async def counted() -> tuple[int, str, bool] | None:
            self.n += 1
            return await holder()

        standby.election.holder = counted  # type: ignore[method-assign]


async def test_a_deposed_writer_whose_mirror_will_not_stop_stands_by_within_a_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(_standby, "GRACE", 0.2)
    caplog.set_level(logging.INFO, "asyncsports.sync")
    mirror = Stubborn(tmp_path / "m.sqlite")
    standby = Standby(cast(Any, mirror), ttl=1.0, poll=0.05)
    running = asyncio.create_task(standby.run())
    try:
        await asyncio.wait_for(mirror.started.wait(), 10)
        assert standby.role == "writer"
        await asyncio.to_thread(steal, tmp_path / "m.sqlite")
        # Deposed at its next renewal (a quarter of the TTL), then two graces at most.
        await until(lambda: "lost the lease" in caplog.text, within=10)
        await until(lambda: standby.role == "standby" and standby.holder == "thief", within=10)
        assert mirror.cancels >= 1  # it was cancelled, and ignored it
        assert "did not stop" in caplog.text
        assert mirror.fence is None  # what it might still write is unfenced: refused
        # The thief gone, no new term while the old mirror still runs; once it ends, one.
        looks = Looks(standby)
        await asyncio.to_thread(release, tmp_path / "m.sqlite")
        await until(lambda: looks.n >= 3, within=10)
        assert standby.role == "standby" and standby.takeovers == 1
        mirror.let_go()
        await until(lambda: standby.takeovers >= 2, within=10)  # (its runs now end at once)
    finally:
        standby.stop()
        mirror.let_go()
        await asyncio.wait_for(running, 10)
