"""One batching writer over an engine: SQLite (in a thread of its own) or PostgreSQL.

:class:`Writer` gathers what its producers :meth:`~Writer.put` into batches (for up to
:data:`LINGER` seconds after the first item, or ``pending`` items), hands each batch to its
:class:`~asyncsports.store._types.Engine` as one transaction, and holds the producers back while ``pending`` items
wait (back pressure). The engines (:class:`~asyncsports.store._types.Engine`):
the backfill's :class:`~asyncsports.store._backfill.BackfillEngine` (SQLite on its
thread, PostgreSQL reconnecting through :class:`~asyncsports.store._pg.PgLink`), and the
sharded workers'
:class:`~asyncsports.store._jobs.ShardEngine`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import anyio
from anyio.abc import TaskStatus

from asyncsports.store._types import JOIN_TIMEOUT, LINGER, Engine, JobState

__all__ = ["Writer"]

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
