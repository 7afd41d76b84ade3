"""The backfill's writer: one thread that owns the database, fed through a queue.

Units are committed in batches, each batch one transaction, so the event loop never waits
on SQLite; the thread never waits on the loop (see :class:`Writer`).
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import anyio
from anyio.abc import TaskStatus

from asyncsports.store._sqlite import JobState, Sink, Unit

__all__ = ["JOIN_TIMEOUT", "LINGER", "Writer"]

LINGER = 0.05
"""Seconds the writer gathers units into one transaction after the first arrives: a
stopped run loses at most this much fetched work (refetched when it resumes)."""

JOIN_TIMEOUT = 5.0
"""Seconds a cancelled run waits for the writer thread to abandon its work (it takes
milliseconds; only SQLite waiting on another process's lock takes longer)."""


class Writer:
    """The one thread that owns the database: units come in through a queue and are
    committed in batches, each batch one transaction, so the event loop never waits on
    SQLite. At most ``pending`` units wait in the queue (back pressure on the fetchers).

    The thread never waits on the event loop: it reports to it with
    ``call_soon_threadsafe`` (the database is open, units are written, it has ended),
    and blocks only on its queue and on SQLite. So it ends whatever the loop is doing,
    as soon as :meth:`close` (write what is queued, then stop) or a cancellation (drop
    what is queued, abort the statement running) tells it to; and the loop always waits
    for its end before going on, so the database is never closed under it (the thread
    closes it itself, last). It is a daemon thread: should a cancelled run give up
    waiting for it (after JOIN_TIMEOUT), the process can still exit, and SQLite keeps
    only committed transactions.
    """

    def __init__(self, path: Path, job: str, *, restart: bool, pending: int) -> None:
        self.path = path
        self.job = job
        self.restart = restart
        self.pending = pending
        self.written: Counter[str] = Counter()
        self.rows: dict[str, int] = {}
        self._queue: queue.SimpleQueue[Unit | None] = queue.SimpleQueue()
        self._finished = False
        self._abandoned = threading.Event()
        self._sink: Sink | None = None
        self._state = JobState(resumed=False)
        self._error: BaseException | None = None

    async def run(self, *, task_status: TaskStatus[JobState]) -> None:
        """Run the writer thread; reports the job's state once the database is open.

        Returns when the thread has ended (after :meth:`close`); raises what made it
        fail. Cancelled, it makes the thread abandon its work and waits for it to end.
        """
        self._loop = asyncio.get_running_loop()
        self._slots = anyio.Semaphore(self.pending)
        self._ready = anyio.Event()
        self._ended = anyio.Event()
        thread = threading.Thread(target=self._thread, name="asyncsports-writer", daemon=True)
        thread.start()
        try:
            await self._ready.wait()
            if self._error is None:
                task_status.started(self._state)
            await self._ended.wait()
        except BaseException:
            self._abandon()
            with anyio.move_on_after(JOIN_TIMEOUT, shield=True):
                await self._ended.wait()
            _join(thread, self._ended)
            raise
        _join(thread, self._ended)
        if self._error is not None:
            raise self._error

    async def put(self, unit: Unit) -> None:
        """Queue a unit for writing (waits while the queue is full)."""
        await self._slots.acquire()
        self._queue.put(unit)

    def close(self, *, finished: bool) -> None:
        """Write what is queued, mark the job finished if ``finished``, and stop."""
        self._finished = finished
        self._queue.put(None)

    def _abandon(self) -> None:
        """Stop at once: drop what is queued, abort the statement running."""
        self._abandoned.set()
        self._queue.put(None)
        sink = self._sink
        if sink is not None:
            sink.interrupt()

    def _release(self, n: int) -> None:
        for _ in range(n):
            self._slots.release()

    def _tell(self, callback: Callable[..., object], *args: object) -> None:
        """Run ``callback`` on the loop, without waiting for it (from the thread)."""
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
            self._loop.call_soon_threadsafe(callback, *args)

    def _thread(self) -> None:
        try:
            sink = self._sink = Sink(self.path)
            try:
                if self._abandoned.is_set():
                    return
                self._state = sink.start(self.job, restart=self.restart)
                self._tell(self._ready.set)
                self._write(sink)
            finally:
                self._sink = None
                sink.close()
        except BaseException as exc:
            self._error = exc
        finally:
            self._tell(self._ready.set)
            self._tell(self._ended.set)

    def _batch(self) -> tuple[list[Unit], bool]:
        """The units of the next transaction, and whether the queue has ended.

        Waits for the first unit, then gathers more for up to LINGER seconds (or until
        every slot is taken): a transaction per unit would write the tables' last pages
        and their indexes' pages again at every commit, which costs more than the rows.
        """
        units: list[Unit] = []
        item = self._queue.get()
        deadline = time.monotonic() + LINGER
        while item is not None:
            units.append(item)
            wait = deadline - time.monotonic()
            if len(units) >= self.pending or wait <= 0:
                break
            try:
                item = self._queue.get(timeout=wait)
            except queue.Empty:
                break
        return units, item is None

    def _write(self, sink: Sink) -> None:
        closing = False
        while not closing:
            units, closing = self._batch()
            if self._abandoned.is_set():
                return
            if units:
                sink.write(self.job, units)
                for unit in units:
                    self.written[unit.table] += len(unit.rows)
                self._tell(self._release, len(units))
        if self._finished:
            sink.finish(self.job)
        self.rows = sink.counts()


def _join(thread: threading.Thread, ended: anyio.Event) -> None:
    # Telling the loop it ended is the thread's last act: it is gone within microseconds,
    # and a run that returns leaves no writer thread behind.
    if ended.is_set():
        thread.join(timeout=1.0)
