"""The mirror's change feed published to a bus, exactly once, in commit order: :class:`Publisher`.

Where the feed stands is read back from the bus itself whenever the publisher
(re)connects: the last change there (:meth:`~asyncsports.bus.Bus.position`). It then
publishes every change after it, a batch at a time, each batch stored on the bus
before the next is sent (Redis: one transaction; JetStream: each message acked). So a
publisher killed at any point and started again publishes each change once: what
reached the bus is not sent again, what did not is. Should two publish at once, the bus
refuses the second copy (Redis: an entry id not above its stream's top; JetStream: the
message id within its duplicate window); a :class:`~asyncsports.sync.Standby` makes one
of them wait.

A bus that cannot be reached, or a connection lost, is waited for with backoff (said
once, and once when it is back); a bus that refuses (another database's changes on it,
a stream ahead of the database) is a :class:`~asyncsports.errors.BusError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from asyncsports._wire.bus import Lags, Message, Target, message, origin, parse_target
from asyncsports._wire.retry import RetryPolicy
from asyncsports.errors import AsyncSportsError, BusError
from asyncsports.store import (
    CONNECT_TIMEOUT,
    ChangeLine,
    ChangeLog,
    Lease,
    change_batches,
    is_postgres,
    open_changes,
    redact_url,
)

from ._bus import Bus, classify, connect, pause

if TYPE_CHECKING:
    from ._metrics import PublisherMetrics

__all__ = ["BACKOFF", "BATCH", "IDLE", "Publisher"]

log = logging.getLogger("asyncsports.sync")

BATCH = 2000
"""Changes read and published at a time (fewer when fewer are there)."""

IDLE = 1.0
"""Seconds between looks at the bus while there is nothing to publish (so that a bus
gone is seen, said and told by ``/healthz`` within about this, not at the next commit)."""

BACKOFF = RetryPolicy(max_retries=2**31, base=0.25, cap=10.0)
"""How long a publisher waits before it tries an unreachable bus again."""


class Publisher:
    """Publishes the change feed of the mirror database ``db`` (a SQLite file or a
    ``postgresql://`` URL) to the bus ``to`` (``redis://...`` or ``nats://...``, see
    :func:`~asyncsports._wire.bus.parse_target`), in commit order, each change once; or
    to a webhook endpoint (``https://...``), each change at least once, in commit order,
    where it stands kept in ``db`` (:mod:`asyncsports.bus._webhook`).

    :meth:`run` follows the feed until :meth:`stop`; :meth:`once` publishes what is
    committed and returns. Its figures (``position``, ``published``, ``duplicates``,
    ``lags``, ``connected``) are what ``/metrics`` reports. ValueError for a ``to``
    that is no bus URL.
    """

    label = "publisher"
    """How the log names it."""
    title = "publisher"
    """What ``/healthz`` and the role metric call the process publishing the feed."""
    duty = "publishes the change feed"
    """What that process does, as the role metric's help says it."""
    does = "is the publisher"
    """What another process holding its lease does, as a standby's log says it."""
    metrics = "asyncsports_bus"
    """The prefix of its metrics' names."""

    def __init__(
        self,
        db: str | Path,
        to: str,
        *,
        batch: int = BATCH,
        connect_timeout: float = CONNECT_TIMEOUT,
        backoff: RetryPolicy = BACKOFF,
    ) -> None:
        if batch < 1:
            raise ValueError(f"batch: must be >= 1, got {batch}")
        self.db = db
        self.target: Target = parse_target(to)
        self.name = redact_url(str(db)) if is_postgres(db) else str(db)
        self.batch = batch
        self.connect_timeout = connect_timeout
        self.backoff = backoff
        self.position: int | None = None
        """The last change acked on the bus (None: not yet read from it)."""
        self.head = 0
        """The last change committed to the database, as last read."""
        self.published = 0
        """Changes this process stored on the bus."""
        self.duplicates = 0
        """Changes the bus already held (refused or dropped as published before)."""
        self.lags = Lags()
        """Seconds from each change's commit to its ack on the bus."""
        self.connected = False
        self.outages = 0
        """Times the bus (or the connection to it) was lost and waited for."""
        self.origin: str | None = None
        self._stop = asyncio.Event()
        self._tries = 0  # failed connections in a row: the backoff's count
        self._times: dict[str, float] = {}

    def stop(self) -> None:
        """Publish what is committed so far, then return from :meth:`run` (asked before
        a run starts: that run publishes what is committed and returns)."""
        self._stop.set()

    async def run(self) -> None:
        """Follow the change feed onto the bus until :meth:`stop`."""
        try:
            await self._publish(follow=True)
        finally:
            # A stop ends one run: a standby's next term (after a lost lease) runs anew.
            self._stop.clear()

    async def once(self) -> None:
        """Publish every change committed so far, then return. A bus that cannot be
        reached is a :class:`~asyncsports.errors.BusError` at once."""
        try:
            await self._publish(follow=False)
        finally:
            self._stop.clear()

    # ------------------------------------------------------------------ as a job

    def held(self, lease: str) -> str:
        """What the lease ``lease`` stands for, as a standby's log says it: the lease
        itself (one per bus stream) of the database."""
        return f"{lease!r} of {self.name}"

    def doing(self, lease: str) -> str:
        """What this process does while it holds ``lease``, as the log says it."""
        return f"holding the lease {self.held(lease)}"

    def hold(self, lease: Lease | None) -> None:
        """Work under ``lease``: nothing to fence, the bus refuses a second copy itself
        (a standby only keeps a second publisher waiting). A webhook endpoint cannot: a
        deposed sender stopped while a request is out may have that change sent twice,
        which at least once allows (the same webhook-id)."""

    def health(self) -> tuple[bool, dict[str, object]]:
        """Whether it reaches the bus, and what ``/healthz`` answers."""
        from ._metrics import publisher_healthy

        return publisher_healthy(self)

    def collector(self, core: ModuleType) -> PublisherMetrics:
        """Its metrics, made with ``core`` (``prometheus_client.core``)."""
        from ._metrics import PublisherMetrics

        return PublisherMetrics(self, core)

    # ------------------------------------------------------------------ the loop

    async def _publish(self, follow: bool) -> None:
        while True:
            asked = 0.0  # seconds the bus asked to be left alone (Retry-After)
            try:
                await self._pass(follow)
                return
            except AsyncSportsError:
                raise  # the bus or the database refuses, for good
            except Exception as exc:
                trouble = classify(exc)
                if trouble is None:
                    raise  # not the bus's: a bug is no outage
                self.connected = False
                asked = min(pause(exc), self.backoff.max_retry_after)
                why = " ".join(str(exc).split()) or type(exc).__name__
                if trouble == "refused":
                    raise BusError(f"{self.target.shown} refuses: {why}") from exc
                if not follow:
                    raise BusError(f"cannot publish to {self.target.shown}: {why}") from exc
                if not self._tries:  # the first failure of an outage: said once
                    log.warning(
                        "%s: cannot reach %s (%s); waiting for it, nothing is lost",
                        self.label,
                        self.target.shown,
                        why,
                    )
                    self.outages += 1
            if self._stop.is_set():
                return
            delay = max(self.backoff.backoff(self._tries), asked)
            self._tries += 1
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._stop.wait()
            if self._stop.is_set():
                return
            if self._tries % 16 == 0:
                log.info("%s: still waiting for %s", self.label, self.target.shown)

    async def _pass(self, follow: bool) -> None:
        """Connect, read where the bus stands, publish from there (until stopped)."""
        reader = await open_changes(self.db, connect_timeout=self.connect_timeout)
        try:
            # Read first, so that while the bus is away each try tells what waits for it.
            self.head = max(self.head, await reader.head())
            bus = await connect(self.target, self.connect_timeout, reader)
            try:
                _cancel_kept()
                await self._resume(bus, reader)
                _cancel_kept()
                assert self.position is not None

                async def idle() -> None:  # nothing to publish: is the bus still there?
                    async with asyncio.timeout(self.connect_timeout):
                        await bus.ping()
                    _cancel_kept()
                    self._back()

                walk = change_batches(
                    reader,
                    self.position,
                    follow=follow,
                    until=self._stop,
                    limit=self.batch,
                    idle=idle,
                    recheck=IDLE,
                )
                async for batch in _ahead(walk):
                    if self.origin is None:  # the first change ever: it names the database
                        self.origin = origin(batch[0].committed_at)
                    await self._send(bus, batch)
            finally:
                await bus.close()
        finally:
            await reader.close()

    async def _resume(self, bus: Bus, store: ChangeLog) -> None:
        """Where the feed stands on the bus, checked against the database."""
        await self._read_head(store)
        try:
            seq = await bus.position(self.origin)  # a BusError if a stream holds another's
        except BusError:
            if self.origin is not None:
                raise
            # Read before the database's first change: another publisher of it (a copy,
            # a standby's race) may have published that since. Read it again.
            await self._read_head(store)
            if self.origin is None:
                raise
            seq = await bus.position(self.origin)
        if seq > self.head:
            # Another publisher of it may have published changes committed since the head
            # was read: read it again, after the bus (what the bus held then was committed
            # before), so that only a bus truly ahead of the database is refused.
            await self._read_head(store)
        if seq > self.head:
            raise BusError(
                f"{self.target.shown} is at change {seq}, but {self.name} has only "
                f"{self.head}: another database published there, or this one was restored "
                "from an older copy"
            )
        was, self.position, self.connected = self.position, seq, True
        if was is not None and seq > was:
            # The bus took part of the batch that failed (an endpoint each change up to
            # the one refused): it is there, and the backoff starts over.
            self._back()
        if was is None:
            log.info(
                "%s: publishing the changes of %s to %s after change %d (of %d)",
                self.label,
                self.name,
                self.target.shown,
                seq,
                self.head,
            )

    async def _read_head(self, store: ChangeLog) -> None:
        """The database's last change, and its origin once it has a change."""
        self.head = await store.head()
        if self.origin is None and self.head:
            first = await store.change_rows(0, 1)
            self.origin = origin(first[0].committed_at) if first else None

    def _back(self) -> None:
        """The bus took a batch or answered an idle look: an outage, if any, is over.
        Not at each connect: a bus that takes connections but fails every batch is tried
        with the backoff growing, not every quarter second."""
        if self._tries:
            log.warning(
                "%s: %s is back; published up to change %d",
                self.label,
                self.target.shown,
                self.position,
            )
            self._tries = 0

    async def _send(self, bus: Bus, batch: list[Message]) -> None:
        assert self.origin is not None and self.position is not None
        duplicates = await bus.publish(batch, self.origin, self.position)
        _cancel_kept()
        now = time.time()
        self.position = batch[-1].seq
        self._back()
        self.head = max(self.head, self.position)
        self.duplicates += duplicates
        self.published += len(batch) - duplicates
        times = self._times
        for m in batch:  # a transaction's changes share one commit time: one parse each
            at = times.get(m.committed_at)
            if at is None:
                if len(times) > 64:
                    times.clear()
                at = times[m.committed_at] = _epoch(m.committed_at)
            self.lags.add(max(0.0, now - at))


async def _ahead(
    walk: AsyncGenerator[list[ChangeLine], None],
) -> AsyncGenerator[list[Message], None]:
    """The messages of each batch of ``walk``, the next one read and made while the
    caller publishes this one (the bus's round trip overlaps the database's read). Only
    reading runs ahead: nothing is sent before the batch before it is acked."""

    async def read() -> list[Message]:
        return [message(*line) for line in await anext(walk)]

    ahead = asyncio.ensure_future(read())
    try:
        while True:
            try:
                batch = await ahead
            except StopAsyncIteration:
                return
            ahead = asyncio.ensure_future(read())
            yield batch
    finally:
        ahead.cancel()
        await asyncio.wait([ahead])  # its end: a cancel of this task's own is not swallowed
        if ahead.done() and not ahead.cancelled():
            ahead.exception()  # a read nobody will take: its error is the reader's, closed
        await walk.aclose()


def _cancel_kept() -> None:
    """CancelledError if this task was cancelled and the bus's library swallowed it: on
    Python 3.11, asyncio.wait_for (redis-py and nats-py use it) loses a cancel that arrives
    as its awaitable completes (CPython gh-86296), leaving a killed publisher running on.
    Called after each call to the bus: the task stays asked (``cancelling()``) until it
    ends, so nothing else can mistake it."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


def _epoch(text: str) -> float:
    """``changes.committed_at`` (ISO 8601 UTC) in seconds since the epoch."""
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
