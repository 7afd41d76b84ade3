"""The mirror's live feeds: a task per feed, committing each record as it comes.

A live fixture has an actions feed and a statistics feed (``client.with_json.live``
by default, or any :class:`~asyncsports.sync.ActionFeed`); each record is
committed with the feed's position, in one transaction, so that a restart resumes the
feed at the records committed, no fewer (no duplicates) and no more (nothing lost).
Records of every feed go to one committer, which commits whatever came while the last
transaction ran in the next one: one transaction per record when they trickle in, a few
for the thousands a feed sends at once when it opens on a match under way. A feed
that breaks off is reopened at the live cadence, with one REST poll of the actions in
between, as is one that ends without the fixture's finishing record (unless the service
said the fixture is over); one that ends after it calls for the fixture's final read.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any

from asyncsports.client import Client
from asyncsports.errors import AsyncSportsError
from asyncsports.store import Write, action_row, statistics_row

from ._jobs import ActionFeed, Done, Next, StatisticsFeed
from ._keys import FeedKey, Final, Live, Stats

__all__ = ["LiveFeeds", "sockets"]

log = logging.getLogger("asyncsports.sync")
_BATCH = 2000  # records pending at most: the feeds wait (their sockets are not read) beyond


def sockets(client: Client) -> tuple[ActionFeed, StatisticsFeed]:
    """The live websockets of ``client`` (``client.live``) as the mirror's feeds."""
    live = client.with_json.live

    def actions(sport: str, fixture_id: str, start_position: int) -> Any:
        return live.actions(sport, fixture_id, start_position=start_position)

    def statistics(sport: str, fixture_id: str, start_position: int) -> Any:
        return live.statistics(sport, fixture_id, start_position=start_position)

    return actions, statistics


class LiveFeeds:
    """The live feeds of a running mirror.

    ``commit`` commits a :class:`Done`; ``position(name, fixture_id)`` is where a feed
    resumes; ``ended(next)`` plans the final read of a fixture whose actions feed ended.
    ``tasks`` (by :class:`~asyncsports.sync._keys.Live` and ``Stats`` of the fixture) are
    the feeds running.
    """

    def __init__(
        self,
        actions: ActionFeed | None,
        statistics: StatisticsFeed | None,
        *,
        commit: Callable[[Done], Awaitable[None]],
        position: Callable[[str, str], Awaitable[int]],
        ended: Callable[[Next], None],
        fresh: dict[str, float],
    ) -> None:
        self.actions = actions
        self.statistics = statistics
        self.commit = commit
        self.position = position
        self.ended = ended
        self.fresh = fresh
        self.tasks: dict[FeedKey, asyncio.Task[None]] = {}
        self.connections: collections.Counter[str] = collections.Counter()
        self._broken: set[str] = set()
        self._pending: list[tuple[str, Write]] = []  # (fixture, write) not committed yet
        self._positions: dict[str, int] = {}  # by the feed's name, as committed
        self._kick = asyncio.Event()  # something is pending
        self._room = asyncio.Event()  # the committer took the pending batch
        self._given = self._done = 0  # records handed to the committer / committed
        self._progress = asyncio.Event()
        self._committer: asyncio.Task[None] | None = None

    def open(self) -> int:
        """Feeds open now."""
        return sum(1 for t in self.tasks.values() if not t.done())

    def follow(self, sport: str, fid: str, season: str) -> bool:
        """Open the fixture's feeds that are not open; True when its actions are to be
        polled this time (no actions feed, or one reopened after it broke off)."""
        if self.statistics is not None:
            self._start(Stats(fid), self._statistics(sport, fid))
        if self.actions is None:
            return True
        if not self._start(Live(fid), self._actions(sport, fid, season)):
            return False
        if fid in self._broken:
            self._broken.discard(fid)
            return True  # what came while it was down, in case it does not come back
        return False

    def close(self, fid: str) -> None:
        """Stop following the fixture's feeds; what they sent and is not committed is
        dropped (the fixture's final read, which follows, has it all)."""
        for key in (Live(fid), Stats(fid)):
            task = self.tasks.pop(key, None)
            if task is not None:
                task.cancel()
            self._positions.pop(str(key), None)
        self._pending = [(f, w) for f, w in self._pending if f != fid]

    async def aclose(self) -> None:
        """Stop every feed (records not committed yet are not: the positions say so)."""
        tasks = list(self.tasks.values())
        if self._committer is not None:
            tasks.append(self._committer)
            self._committer = None
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.tasks.clear()
        self._pending = []
        self._positions = {}

    # ------------------------------------------------------------------ committing

    async def _put(self, fid: str, key: FeedKey, write: Write, n: int) -> int:
        """Hand a record to the committer (waiting while a full batch is pending)."""
        while len(self._pending) >= _BATCH:
            self._room.clear()
            await self._room.wait()
        if self._committer is None or self._committer.done():
            self._committer = asyncio.create_task(self._commit_loop(), name="mirror-feeds")
        self._pending.append((fid, write))
        self._positions[str(key)] = n
        self._given += 1
        self._kick.set()
        return self._given

    async def _commit_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._kick.wait()
            self._kick.clear()
            batch, positions, upto = self._pending, self._positions, self._given
            self._pending = []
            self._positions = {}
            self._room.set()
            try:
                await self.commit(Done("live", writes=_last_packets(batch), positions=positions))
            except Exception as exc:  # any failure: the feeds start over
                # Nothing of the batch is committed, positions included: the feeds are
                # closed and reopen at the next live turn where the database says.
                log.error("mirror: live records not committed (%s): reopening the feeds", exc)
                for key, task in list(self.tasks.items()):
                    if task is not asyncio.current_task():
                        task.cancel()
                        del self.tasks[key]
                self._pending = []
                self._positions = {}
            else:
                self.fresh["live"] = loop.time()
            self._done = upto
            self._progress.set()

    async def _flush(self, upto: int) -> None:
        """Wait until the records handed over up to number ``upto`` are committed."""
        while self._done < upto:
            self._progress.clear()
            await self._progress.wait()

    def _start(self, key: FeedKey, follow: Coroutine[Any, Any, None]) -> bool:
        """Run ``follow`` as the feed ``key`` unless that one is open; True if started."""
        task = self.tasks.get(key)
        if task is not None and not task.done():
            follow.close()
            return False
        task = self.tasks[key] = asyncio.create_task(follow, name=str(key))
        task.add_done_callback(_said)
        return True

    async def _actions(self, sport: str, fid: str, season: str) -> None:
        key = Live(fid)
        # What an earlier connection handed over is committed first: read before, the
        # position could be the one before it (or, for a feed never committed, the
        # actions a poll stored), and the feed would reopen behind or ahead of it.
        await self._flush(self._given)
        n = await self.position(str(key), fid)
        feed = self.actions
        assert feed is not None
        ok = await self._drain(
            key,
            fid,
            feed(sport, fid, n),
            n,
            lambda a, j, n: Write("actions", [action_row(sport, fid, a, j, seq=n)]),
        )
        if ok:
            await self._flush(self._given)  # before the final read, which replaces them
            # The feed ended after the finishing record (or the service said the fixture is
            # over): the final read.
            if self.tasks.get(key) is asyncio.current_task():
                del self.tasks[key]
            self.ended(Next(Final(fid), "final", (sport, fid, season)))

    async def _statistics(self, sport: str, fid: str) -> None:
        key = Stats(fid)
        await self._flush(self._given)  # as _actions: the position of what was handed over
        n = await self.position(str(key), "")
        feed = self.statistics
        assert feed is not None
        await self._drain(
            key,
            fid,
            feed(sport, fid, n),
            n,
            lambda p, j, n: Write("statistics", [statistics_row(sport, fid, p, j)]),
        )

    async def _drain(
        self,
        key: FeedKey,
        fid: str,
        records: AsyncIterator[Any],
        n: int,
        write: Callable[[Any, bytes, int], Write],
    ) -> bool:
        """Commit each record with the feed's position; True when the fixture is over.

        Over: the feed sent the finishing record, or it ended with the service's word that
        the fixture is over (``feed.ended``, see docs/wire.md). A feed that ends any other
        way (a source that just stops) broke off, as one that raises: the fixture is still
        followed, and polled until the feed reopens.
        """
        kind = key.resource
        finished = False
        try:
            async for record, json in records:
                n += 1
                finished = finished or getattr(record, "finished", False) is True
                await self._put(fid, key, write(record, json, n), n)
            if not finished and getattr(records, "ended", None) is None:
                raise _Unfinished("it ended without the fixture's finishing record")
        except (AsyncSportsError, _Unfinished) as exc:
            log.warning(
                "mirror: %s feed of %s broke off (%s): polling until it reopens", kind, fid, exc
            )
            if isinstance(key, Live):
                self._broken.add(fid)
            return False
        finally:
            self.connections[kind] += getattr(records, "connections", 1)
            aclose = getattr(records, "aclose", None)
            if aclose is not None:
                await aclose()
        return True


class _Unfinished(Exception):
    """A feed that ended without the fixture's end (see :meth:`LiveFeeds._drain`)."""


def _said(task: asyncio.Task[None]) -> None:
    """Log a feed that failed other than by breaking off (it is tried again next turn)."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        log.error("mirror: feed %s failed: %r", task.get_name(), exc, exc_info=exc)


def _last_packets(batch: list[tuple[str, Write]]) -> list[Write]:
    """The batch's writes, of each fixture's statistics packets only the last: each one
    replaces the row (a feed opened on a match under way sends every packet so far)."""
    last = {fid: i for i, (fid, w) in enumerate(batch) if w.table == "statistics"}
    return [w for i, (fid, w) in enumerate(batch) if w.table != "statistics" or last[fid] == i]
