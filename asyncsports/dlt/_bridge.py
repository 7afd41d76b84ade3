"""Plain generators that drive an asyncio client: its coroutines run on one event loop,
the caller's or one of the bridge's own in a thread (the dlt source uses it).

Each call goes through ``asyncio.run_coroutine_threadsafe`` and blocks the calling thread,
never the loop's: a call from the loop's own thread is refused rather than deadlocked.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from asyncsports.client import Client

__all__ = ["Bridge", "running_loop"]

T = TypeVar("T")


class Bridge:
    """Runs the client's coroutines for the source's generators, on one event loop."""

    def __init__(self, client: Client, loop: asyncio.AbstractEventLoop | None) -> None:
        self.client = client
        self._given = loop
        self._own: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._users = 0
        self._lock = threading.Lock()

    @contextmanager
    def using(self) -> Iterator[None]:
        """While a generator runs: the first opens the loop and client, the last closes them."""
        with self._lock:
            if self._users == 0 and self._given is None:
                self._start()
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0 and self._given is None:
                    self._stop()

    def _start(self) -> None:
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="asyncsports-dlt", daemon=True)
        thread.start()
        self._own = loop
        self._thread = thread
        asyncio.run_coroutine_threadsafe(self.client.open(), loop).result()

    def _stop(self) -> None:
        loop, thread = self._own, self._thread
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self.client.aclose(), loop).result()
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()
            self._own = self._thread = None

    def call(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """``await fn(*args)`` on the client's loop, from a thread that is not its own."""
        loop = self._given or self._own
        assert loop is not None, "call() outside using()"
        if running_loop() is loop:
            raise RuntimeError(
                "asyncsports: the pipeline runs on the client's event loop and would block "
                "it: run it in a thread (await asyncio.to_thread(pipeline.run, source))"
            )

        async def job() -> T:
            return await fn(*args)

        return asyncio.run_coroutine_threadsafe(job(), loop).result()

    def iterate(
        self, produce: Callable[[Callable[[T], Awaitable[None]]], Awaitable[None]]
    ) -> Iterator[T]:
        """What ``produce(put)`` puts, as it comes: it runs as one task on the client's loop
        (it may start tasks of its own), handing items over through a bounded queue."""
        queue: asyncio.Queue[tuple[bool, Any]] = self.call(_queue)
        task = self.call(_spawn, _feed(produce, queue))
        try:
            while True:
                done, item = self.call(queue.get)
                if done:
                    if item is not None:
                        raise item
                    return
                yield item
        finally:
            self.call(_cancel, task)


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, if one is."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


async def _queue() -> asyncio.Queue[tuple[bool, Any]]:
    return asyncio.Queue(4)


async def _spawn(coro: Awaitable[None]) -> asyncio.Future[None]:
    return asyncio.ensure_future(coro)


async def _cancel(task: asyncio.Future[None]) -> None:
    task.cancel()


async def _feed(
    produce: Callable[[Callable[[Any], Awaitable[None]]], Awaitable[None]],
    queue: asyncio.Queue[tuple[bool, Any]],
) -> None:
    async def put(item: Any) -> None:
        await queue.put((False, item))

    try:
        await produce(put)
    except Exception as exc:
        await queue.put((True, exc))
    except BaseExceptionGroup as group:  # a task group's: the first error in it
        leaf: BaseException = group
        while isinstance(leaf, BaseExceptionGroup):
            leaf = leaf.exceptions[0]
        await queue.put((True, leaf))
    else:
        await queue.put((True, None))
