"""What one run of the dlt source shares: the client's bridge, the listings, the state as
the run began, and fetching ``concurrency`` at a time (see :mod:`asyncsports.dlt`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from asyncsports._optional import need
from asyncsports.backfill import Progress
from asyncsports.dlt._bridge import Bridge
from asyncsports.dlt._state import copy
from asyncsports.errors import NotFoundError
from asyncsports.store._rows import Row, fixture_row

__all__ = ["Listed", "Run"]

T = TypeVar("T")


@dataclass
class Listed:
    """One sport's fixtures as listed this run: rows, and the day the listing began."""

    rows: list[Row]
    since: str | None


class Run:
    """What the resources of a run share: the client's bridge, the options, the listings,
    the state as the run began."""

    def __init__(
        self,
        bridge: Bridge,
        sports: Sequence[str],
        concurrency: int,
        page_size: int,
        progress: Progress | None,
    ) -> None:
        self.bridge = bridge
        self.client = bridge.client
        self.sports = list(dict.fromkeys(sports))
        self.concurrency = concurrency
        self.page_size = page_size
        self.progress = progress
        self._memo: dict[Any, Any] = {}

    @property
    def memo(self) -> dict[Any, Any]:
        """What the resources of one run share (the listings, the state as it began):
        kept by dlt's load id, so that it holds for the whole run whatever order dlt
        runs the resources in, one after another included."""
        current = need("dlt", "a dlt source").current
        # load_package_state since dlt 1.13 or so, load_package before.
        package = getattr(current, "load_package_state", None) or current.load_package
        run = package()["load_id"]
        if self._memo.get("run") != run:
            self._memo = {"run": run}
        return self._memo

    def state(self) -> dict[str, Any]:
        dlt = need("dlt", "a dlt source")
        state: dict[str, Any] = dlt.current.source_state()
        return state

    def since(self, sport: str) -> str | None:
        """The day this run lists ``sport`` from (the state as the run began)."""
        start = self.memo.setdefault("start", copy(self.state().get("since", {})))
        value: str | None = start.get(sport)
        return value

    def listed(self, sport: str) -> Listed:
        """``sport``'s fixtures, listed once per run whichever resource asks first."""
        since = self.since(sport)
        return Listed(self.once(("listed", sport), self._list, sport, since), since)

    def once(self, key: Any, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """``await fn(*args)`` once per run, whichever resource asks first."""
        memo = self.memo
        if key not in memo:
            memo[key] = self.bridge.call(fn, *args)
        found: T = memo[key]
        return found

    async def _list(self, sport: str, since: str | None) -> list[Row]:
        listing = self.client.with_json.fixtures.list(
            sport, date_from=since, page_size=self.page_size, concurrency=2
        )
        rows: list[Row] = []
        try:
            async with listing:
                async for page in listing.pages():
                    rows += [fixture_row(sport, f, json) for f, json in page]
                    self._tell("advance", "fixtures", len(page))
        except NotFoundError:
            return []  # a sport the service does not have
        return rows

    def _tell(self, what: str, phase: str, n: int = 1) -> None:
        if self.progress is not None:
            if what == "settle":
                self.progress.settle(phase)
            else:
                getattr(self.progress, what)(phase, n)

    def fetched(
        self, kind: str, jobs: list[tuple[str, str]], fetch: Callable[[str, str], Awaitable[T]]
    ) -> Iterator[tuple[str, T]]:
        """``(fid, await fetch(sport, fid))`` for each job, ``concurrency`` at a time."""
        self._tell("add", kind, len(jobs))

        async def produce(put: Callable[[tuple[str, T]], Awaitable[None]]) -> None:
            slots = asyncio.Semaphore(self.concurrency)

            async def one(sport: str, fid: str) -> None:
                try:
                    await put((fid, await fetch(sport, fid)))
                finally:
                    slots.release()

            async with asyncio.TaskGroup() as tg:
                for sport, fid in jobs:
                    await slots.acquire()
                    tg.create_task(one(sport, fid))

        for item in self.bridge.iterate(produce):
            self._tell("advance", kind)
            yield item
        self._tell("settle", kind)
