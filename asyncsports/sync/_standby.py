"""A mirror (or a publisher) that works only while it holds its lease; a standby else.

Any number of ``asyncsports sync`` processes may follow one database (a PostgreSQL one
from any machines, a SQLite file from one machine): :class:`Standby` elects one writer
through the database's lease (:class:`~asyncsports.store.Election`, the same protocol on
both engines). The others poll every :data:`POLL` seconds and take over when the
writer's lease lapses (:data:`TTL` after its last renewal: its machine cut off, or
stuck) or its holder is gone (killed: at once; PostgreSQL sees its connection close,
SQLite its pid gone), resuming from the positions committed.
Every write transaction of the writer is fenced by its term, so a writer cut off and
coming back cannot write: its next renewal or write finds the term moved on, and it
stands by again. A :class:`~asyncsports.sync.Publisher` of the change feed to a bus stands
by the same way, under a lease of its own per bus stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from pathlib import Path
from typing import Any, Protocol

from asyncsports._http.serve import Served
from asyncsports.errors import AsyncSportsError
from asyncsports.store import Deposed, Election, Lease

__all__ = ["GRACE", "POLL", "TTL", "Held", "Standby"]

log = logging.getLogger("asyncsports.sync")

TTL = 8.0
"""Seconds a lease lasts after its last renewal (renewed every quarter of it)."""

POLL = 1.0
"""Seconds between a standby's looks at the lease."""

GRACE = 5.0
"""Seconds a deposed writer's mirror has to stop before it is cancelled."""


class Held(Served, Protocol):
    """What a :class:`Standby` runs, one protocol for any job (a
    :class:`~asyncsports.sync.Mirror`, a :class:`~asyncsports.bus.Publisher`): it works
    (:meth:`run`, :meth:`once`) under the lease it is given (:meth:`hold`) until
    :meth:`stop`; it says how the log names it and what its lease stands for; its
    ``/healthz`` and metrics (:meth:`health`, :meth:`collector`) are served with the
    standby's role (:func:`~asyncsports._http.serve.serve_job`)."""

    label: str
    """How log lines name it (``mirror``, ``publisher``)."""
    does: str
    """What another process holding its lease does, as the log says it (``writes it``)."""
    name: str
    """Its database as messages name it (no password)."""
    db: str | Path
    connect_timeout: float

    def held(self, lease: str) -> str:
        """What the lease named ``lease`` stands for, as the log says it."""
        ...

    def doing(self, lease: str) -> str:
        """What this process does while it holds ``lease``, as the log says it."""
        ...

    def hold(self, lease: Lease | None) -> None:
        """Work under ``lease`` from now on (None: no more). A job that writes the
        database fences each write by it (the mirror); one whose output refuses a second
        copy itself need not (the publisher)."""

    async def run(self) -> None:
        """Work until stopped."""

    async def once(self) -> None:
        """One pass."""

    def stop(self) -> None:
        """Finish what is under way and return from :meth:`run`."""


class Standby:
    """Runs ``job`` (a mirror, a publisher: any :class:`Held`) while this process holds
    the lease ``name`` of the job's database (either engine), and stands by while another
    process does.

    ``role`` is ``"standby"`` or ``"writer"``; ``holder`` names the writer (as its
    process told it: host and pid); ``takeovers`` counts the terms this process won.
    """

    def __init__(
        self,
        job: Held,
        *,
        name: str = "sync",
        ttl: float = TTL,
        poll: float = POLL,
    ) -> None:
        self.job = job
        self.label = job.label
        self.url = job.name  # as messages name it: no password
        self.lease = name
        self.ttl = ttl
        self.poll = poll
        self.who = f"{socket.gethostname()} pid {os.getpid()} ({secrets.token_hex(3)})"
        self.election = Election(job.db, name, self.who, job.connect_timeout)
        self.role = "standby"
        self.holder: str | None = None
        self.reachable = False  # whether the last look at the lease got an answer
        self.takeovers = 0
        self._valid = 0.0  # the loop's time until which the lease is surely ours
        self._stopping = asyncio.Event()
        self._left: set[asyncio.Task[None]] = set()  # jobs that would not stop

    def stop(self) -> None:
        """Stop standing by, or stop the mirror (which then gives the lease up)."""
        self._stopping.set()
        self.job.stop()

    async def run(self, *, once: bool = False) -> None:
        """Stand by, write while the lease is ours, until :meth:`stop` (``once``: one
        pass of the mirror, once the lease is ours). A mirror that ends of itself, unasked,
        ends this too: run again, it would only end again, a term after term."""
        try:
            while not self._stopping.is_set():
                lease = await self._wait()
                if lease is None:
                    return
                if await self._write(lease, once):
                    if not once and not self._stopping.is_set():
                        why = "%s: ended unasked; gave up the lease %r of %s"
                        log.warning(why, self.label, self.lease, self.url)
                    return
        finally:
            self.role = "standby"
            await self.election.close()

    async def _wait(self) -> Lease | None:
        """Poll until the lease is ours (None: stopped first)."""
        loop = asyncio.get_running_loop()
        said: str | None = None
        while not self._stopping.is_set():
            t0 = loop.time()
            try:
                # A mirror left behind still running: no new term until it has ended.
                lease = None if self._left else await self.election.take(self.ttl)
                if lease is not None:
                    self._valid = t0 + self.ttl
                    return lease
                held = await self.election.holder()
                self.holder = held[1] if held else None
                self.reachable = True
            except AsyncSportsError:
                raise  # not the mirror's database, refused, ...: nothing to wait for
            except Exception as exc:  # unreachable for now: look again
                if self.reachable or said is None:
                    log.warning(
                        "%s: standby: cannot reach %s (%s); trying again",
                        self.label,
                        self.url,
                        " ".join(str(exc).split()),
                    )
                self.reachable = False
                said = "unreachable"
            else:
                if said != self.holder:
                    log.info(
                        "%s: standby for %s: %s %s; taking over when it stops",
                        self.label,
                        self.job.held(self.lease),
                        self.holder,
                        self.job.does,
                    )
                    said = self.holder
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.poll):
                    await self._stopping.wait()
        return None

    async def _write(self, lease: Lease, once: bool) -> bool:
        """Run the mirror under ``lease`` until it ends or the lease is lost; True: the
        mirror ended of itself (a stop, or ``once``'s pass)."""
        self.role, self.holder, self.reachable = "writer", self.who, True
        self.takeovers += 1
        log.info("%s: %s (lease term %d)", self.label, self.job.doing(self.lease), lease.term)
        self.job.hold(lease)
        running = asyncio.create_task(self.job.once() if once else self.job.run())
        lost = False
        try:
            lost = await self._renew(lease, running)
        finally:
            await self._halt(running)
            self.job.hold(None)
            self.role = "standby"
        error = None
        if running.done() and not running.cancelled():
            error = running.exception()
        if _deposed(error):
            lost = True
        elif error is not None and not lost:
            raise error
        # else a writer cut off failed as it stopped: what it did is fenced off anyway.
        if not lost:
            with contextlib.suppress(Exception):
                await self.election.release(lease)
        if lost:
            log.warning(
                "%s: lost the lease of %s (term %d): not renewed in time, or "
                "another process took it; standing by",
                self.label,
                self.url,
                lease.term,
            )
        return not lost

    async def _halt(self, running: asyncio.Task[None]) -> None:
        """Stop the mirror: asked, cancelled after :data:`GRACE` (at once when this
        standby's own task is cancelled), and left behind after another (a writer that
        cannot stop must not hold the process: what it might still write is fenced off)."""
        if running.done():
            return
        task = asyncio.current_task()
        if task is None or not task.cancelling():
            self.job.stop()
            await asyncio.wait([running], timeout=GRACE)
            if running.done():
                return
        # Stuck on a database that does not answer; or this standby is cancelled, and a
        # cancel is not a stop: the job is cancelled with it, without a stop's grace.
        running.cancel()
        await asyncio.wait([running], timeout=GRACE)
        if not running.done():
            self._left.add(running)  # a reference: a pending task is not collected
            running.add_done_callback(self._ended)
            log.error(
                "%s: the writer of %s did not stop within %g s of its cancel; "
                "standing by without it",
                self.label,
                self.url,
                GRACE,
            )

    def _ended(self, running: asyncio.Task[None]) -> None:
        """A mirror left behind has ended at last: its error is of no use now."""
        self._left.discard(running)
        if not running.cancelled():
            running.exception()  # retrieved: asyncio would log it as never retrieved

    async def _renew(self, lease: Lease, running: asyncio.Task[None]) -> bool:
        """Renew every quarter of the lease until the mirror ends or a stop is asked
        (False), or the lease is lost (True): its term over, or no renewal before it
        lapses by this machine's clock (which the database's cannot be behind: each
        renewal counts from before it was sent)."""
        loop = asyncio.get_running_loop()
        # A stop ends the wait too: the job then has GRACE to stop (_halt), not as long
        # as its work under way takes (a mirror's requests to a service that does not
        # answer, each retried: sync --once took two minutes to end at SIGTERM).
        stopping = asyncio.ensure_future(self._stopping.wait())
        waits: list[asyncio.Future[Any]] = [running, stopping]
        try:
            while True:
                await asyncio.wait(waits, timeout=self.ttl / 4, return_when=asyncio.FIRST_COMPLETED)
                if running.done() or stopping.done():
                    return False
                t0 = loop.time()
                try:
                    async with asyncio.timeout(max(0.1, self._valid - t0)):
                        if not await self.election.renew(lease, self.ttl):
                            return True
                    self._valid = t0 + self.ttl
                except Exception as exc:
                    log.warning(
                        "%s: cannot renew the lease of %s (%s)",
                        self.label,
                        self.url,
                        " ".join(str(exc).split()) or "no answer",
                    )
                if loop.time() >= self._valid:
                    return True
        finally:
            stopping.cancel()


def _deposed(error: BaseException | None) -> bool:
    """Whether the mirror ended because its lease is gone: a fenced write refused, raised
    by a job or from the workers' task group (a commit's error is not a job's)."""
    if isinstance(error, BaseExceptionGroup):
        return error.subgroup(Deposed) is not None
    return isinstance(error, Deposed)
