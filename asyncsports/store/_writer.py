"""One batching writer over an engine: SQLite (in a thread of its own) or PostgreSQL.

:class:`Writer` gathers what its producers :meth:`~Writer.put` into batches (for up to
:data:`LINGER` seconds after the first item, or ``pending`` items), hands each batch to its
:class:`Engine` as one transaction, and holds the producers back while ``pending`` items
wait (back pressure). The engines: :class:`SqliteEngine` (the blocking
:class:`~asyncsports.store._sqlite.Sink` in its own thread), :class:`asyncsports.store._pg.PgEngine`
(asyncpg, reconnecting through :class:`~asyncsports.store._pg.PgLink`), and the sharded
workers' :class:`asyncsports.store._jobs.ShardEngine`.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

import anyio
from anyio.abc import TaskStatus

from asyncsports.store._sqlite import Sink
from asyncsports.store._types import JOIN_TIMEOUT, LINGER, Engine, JobState, Unit

__all__ = ["SqliteEngine", "Writer"]

B = TypeVar("B")
T = TypeVar("T")


class Writer(Generic[B]):
    """Batches what producers :meth:`put` and writes each batch through ``engine``.

    At most ``pending`` items wait or are being written (back pressure: :meth:`put`
    waits). ``wrote(batch, written)`` is called after each batch's transaction. Run
    :meth:`run` as a task; :meth:`close` ends it once what is queued is written. A
    cancelled run writes nothing more: it aborts the engine (the transaction under way
    is rolled back) and waits up to :data:`JOIN_TIMEOUT` for it to let go.
    """

    def __init__(
        self,
        engine: Engine[B],
        *,
        pending: int,
        wrote: Callable[[Sequence[B], Sequence[B]], None] | None = None,
        linger: float = LINGER,
    ) -> None:
        if pending < 1:
            raise ValueError(f"pending: must be >= 1, got {pending}")
        self.engine = engine
        self.pending = pending
        self.linger = linger
        self.rows: dict[str, int] = {}
        """Rows per table at the end of a run that ended well."""
        self._wrote = wrote
        self._items: deque[B] = deque()
        self._wake = anyio.Event()
        self._slots = anyio.Semaphore(pending)
        self._closed = self._finished = False

    async def run(self, *, task_status: TaskStatus[JobState] = anyio.TASK_STATUS_IGNORED) -> None:
        """Open the engine, report the job's state, write until :meth:`close`; raise
        what made it fail."""
        engine = self.engine
        try:
            task_status.started(await engine.open())
            closing = False
            while not closing:
                batch, closing = await self._batch()
                if batch:
                    written = await engine.write(batch)
                    if self._wrote is not None:
                        self._wrote(batch, written)
                    for _ in batch:
                        self._slots.release()
            if self._finished:
                await engine.finish()
            self.rows = await engine.counts()
        except BaseException:
            engine.abort()
            with anyio.move_on_after(JOIN_TIMEOUT, shield=True):
                await engine.close()
            raise
        await engine.close()

    async def put(self, item: B) -> None:
        """Queue an item for writing (waits while ``pending`` items wait already)."""
        await self._slots.acquire()
        self._items.append(item)
        if len(self._items) == 1 or len(self._items) >= self.pending:
            self._wake.set()  # the first of a batch, or a full one

    def close(self, *, finished: bool) -> None:
        """Write what is queued, mark the job finished if ``finished``, and stop."""
        self._finished = finished
        self._closed = True
        self._wake.set()

    async def _batch(self) -> tuple[list[B], bool]:
        """The items of the next transaction, and whether the queue has ended.

        Waits for the first item, then for more for up to ``linger`` seconds (or until
        every slot is taken): a transaction per unit would write the tables' last pages
        and their indexes' pages again at every commit, which costs more than the rows
        (SQLite), or a dozen round trips (PostgreSQL). One wait per batch, not per item:
        the items are many and small.
        """
        items = self._items
        while not items and not self._closed:
            self._wake = anyio.Event()
            await self._wake.wait()
        if not self._closed and len(items) < self.pending:
            self._wake = anyio.Event()
            with anyio.move_on_after(self.linger):
                await self._wake.wait()
        batch = [items.popleft() for _ in range(min(len(items), self.pending))]
        return batch, self._closed and not items


class SqliteEngine:
    """The SQLite engine: one thread owns the database (a :class:`Sink`) and runs the
    calls sent to it, so the event loop never waits on SQLite.

    The thread never waits on the event loop: it takes calls from a queue and reports
    their results with ``call_soon_threadsafe``, so it ends whatever the loop is doing.
    :meth:`abort` drops the calls queued and interrupts the statement running (its
    transaction rolls back); the thread closes the database itself, last. It is a
    daemon thread: should a cancelled run give up waiting for it, the process can still
    exit, and SQLite keeps only committed transactions.
    """

    def __init__(self, path: Path, job: str, *, restart: bool = False) -> None:
        self.path = Path(path)
        self.job = job
        self.restart = restart
        self._calls: queue.SimpleQueue[tuple[Callable[[Sink], Any], asyncio.Future[Any]] | None]
        self._calls = queue.SimpleQueue()
        self._abandoned = threading.Event()
        self._sink: Sink | None = None
        self._thread: threading.Thread | None = None

    async def open(self) -> JobState:
        self._loop = asyncio.get_running_loop()
        self._ended = anyio.Event()
        self._thread = threading.Thread(target=self._serve, name="asyncsports-writer", daemon=True)
        self._thread.start()
        return await self._call(lambda sink: sink.start(self.job, restart=self.restart))

    async def write(self, batch: Sequence[Unit]) -> Sequence[Unit]:
        await self._call(lambda sink: sink.write(self.job, batch))
        return batch

    async def finish(self) -> None:
        await self._call(lambda sink: sink.finish(self.job))

    async def counts(self) -> dict[str, int]:
        return await self._call(Sink.counts)

    async def close(self) -> None:
        thread = self._thread
        if thread is None:
            return
        self._calls.put(None)
        await self._ended.wait()
        # Telling the loop it ended is the thread's last act: it is gone within
        # microseconds, and a run that returns leaves no writer thread behind.
        thread.join(timeout=1.0)

    def abort(self) -> None:
        self._abandoned.set()
        self._calls.put(None)
        sink = self._sink
        if sink is not None:
            sink.interrupt()

    async def _call(self, fn: Callable[[Sink], T]) -> T:
        future: asyncio.Future[T] = self._loop.create_future()
        self._calls.put((fn, future))
        return await future

    def _tell(self, callback: Callable[..., object], *args: object) -> None:
        """Run ``callback`` on the loop, without waiting for it (from the thread)."""
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
            self._loop.call_soon_threadsafe(callback, *args)

    def _serve(self) -> None:
        try:
            try:
                self._sink = Sink(self.path)
            except BaseException as exc:
                self._fail_all(exc)
                return
            while (call := self._calls.get()) is not None and not self._abandoned.is_set():
                fn, future = call
                try:
                    result = fn(self._sink)
                except BaseException as exc:
                    self._tell(_settle, future, None, exc)
                else:
                    self._tell(_settle, future, result, None)
        finally:
            sink, self._sink = self._sink, None
            if sink is not None:
                sink.close()
            self._tell(self._ended.set)

    def _fail_all(self, exc: BaseException) -> None:
        """The database did not open: every call waiting fails with why."""
        while (call := self._calls.get()) is not None:
            self._tell(_settle, call[1], None, exc)


def _settle(future: asyncio.Future[Any], result: object, exc: BaseException | None) -> None:
    if future.done():  # its caller was cancelled
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)
