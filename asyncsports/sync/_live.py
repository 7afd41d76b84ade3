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

Each feed of a fixture followed has a :class:`FeedHealth`: when its last record came and
its health state. A feed with ``health()`` (``client.live``'s) says its state in events,
read by a task of their own beside the records; any other source's state is what the
mirror sees (live once records come, reconnecting after it broke off, over after the
fixture's end). The metrics and ``/healthz`` read them (:attr:`LiveFeeds.health`).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
import types
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from typing import Any

from asyncsports.client import Client
from asyncsports.errors import AsyncSportsError
from asyncsports.live import (
    Connected,
    Delayed,
    HealthEvents,
    HealthState,
    Lost,
    Reconnecting,
    Recovered,
    Resumed,
)
from asyncsports.store import Write, action_row, feed_health_row, statistics_row

from ._jobs import ActionFeed, Done, Next, StatisticsFeed
from ._keys import FeedKey, Final, Live, Stats

__all__ = ["FeedHealth", "LiveFeeds", "sockets"]

log = logging.getLogger("asyncsports.sync")
_BATCH = 2000  # records pending at most: the feeds wait (their sockets are not read) beyond
HEALTH = "feed_health"  # the table of the feeds' health rows


def sockets(client: Client) -> tuple[ActionFeed, StatisticsFeed]:
    """The live websockets of ``client`` (``client.live``) as the mirror's feeds."""
    live = client.with_json.live

    def actions(sport: str, fixture_id: str, start_position: int) -> Any:
        return live.actions(sport, fixture_id, start_position=start_position)

    def statistics(sport: str, fixture_id: str, start_position: int) -> Any:
        return live.statistics(sport, fixture_id, start_position=start_position)

    return actions, statistics


class FeedHealth:
    """Where one live feed of a fixture the mirror follows stands: ``state`` (as
    :data:`~asyncsports.live.HealthState`: connecting, live, delayed, reconnecting,
    over) since ``since`` (the loop's time) for ``cause`` ('' when none said), its last
    record at ``last_record`` (the loop's time; None: none yet), opened at ``opened``,
    ``position`` records delivered. Kept by :class:`LiveFeeds`; read-only to others."""

    __slots__ = (
        "at",
        "cause",
        "feed",
        "fixture_id",
        "last_record",
        "opened",
        "position",
        "since",
        "sport",
        "state",
    )

    def __init__(self, fixture_id: str, feed: str, sport: str, now: float) -> None:
        self.fixture_id = fixture_id
        self.feed = feed
        """``actions`` or ``statistics``."""
        self.sport = sport
        self.state: HealthState = "connecting"
        self.cause = ""
        self.since = now
        self.at = time.time()
        """``since`` in epoch seconds, as its row says it."""
        self.opened = now
        self.last_record: float | None = None
        self.position = 0

    def age(self, now: float) -> float:
        """Seconds since its last record (since it opened, when none came yet)."""
        last = self.last_record
        return now - (self.opened if last is None else last)

    def __repr__(self) -> str:
        return f"<FeedHealth {self.feed} {self.fixture_id} {self.state} {self.cause!r}>"


class LiveFeeds:
    """The live feeds of a running mirror.

    ``commit`` commits a :class:`Done`; ``position(name, fixture_id)`` is where a feed
    resumes; ``ended(next)`` plans the final read of a fixture whose actions feed ended.
    ``tasks`` (by :class:`~asyncsports.sync._keys.Live` and ``Stats`` of the fixture) are
    the feeds running; :attr:`health` where each feed of a fixture followed stands.
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
        self._health: dict[tuple[str, str], FeedHealth] = {}  # by (fixture, feed)
        self._unsaid: set[tuple[str, str]] = set()  # feeds whose state may not be committed
        self.health: Mapping[tuple[str, str], FeedHealth] = types.MappingProxyType(self._health)
        """Each feed of the fixtures followed, by (fixture id, ``actions``/``statistics``):
        from when it first opens until the fixture is no longer followed."""

    def open(self) -> int:
        """Feeds open now."""
        return sum(1 for t in self.tasks.values() if not t.done())

    def follow(self, sport: str, fid: str, season: str) -> bool:
        """Open the fixture's feeds that are not open; True when its actions are to be
        polled this time (no actions feed, or one reopened after it broke off)."""
        if self.statistics is not None:
            self._start(Stats(fid), self._statistics(sport, fid), sport)
        if self.actions is None:
            return True
        if not self._start(Live(fid), self._actions(sport, fid, season), sport):
            return False
        if fid in self._broken:
            self._broken.discard(fid)
            return True  # what came while it was down, in case it does not come back
        return False

    def close(self, fid: str) -> None:
        """Stop following the fixture's feeds; what they sent and is not committed is
        dropped (the fixture's final read, which follows, has it all)."""
        # Their records only: the feeds' health rows stand (a fixture may be closed twice,
        # and the second time must not drop the first one's last rows).
        self._pending = [(f, w) for f, w in self._pending if f != fid or w.table == HEALTH]
        for key in (Live(fid), Stats(fid)):
            task = self.tasks.pop(key, None)
            if task is not None:
                task.cancel()
            self._positions.pop(str(key), None)
            watch = self._health.get((fid, _kind(key)))
            if watch is not None:
                # Its last row must not say live for a fixture no longer followed.
                self._set_state(watch, "over", "no longer followed")
                del self._health[(fid, _kind(key))]
                self._unsaid.discard((fid, _kind(key)))

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
        self._health.clear()
        self._unsaid.clear()
        self._pending = []
        self._positions = {}

    # ------------------------------------------------------------------ committing

    async def _put(self, fid: str, key: FeedKey, write: Write, n: int) -> int:
        """Hand a record to the committer (waiting while a full batch is pending)."""
        while len(self._pending) >= _BATCH:
            self._room.clear()
            await self._room.wait()
        self._positions[str(key)] = n
        return self._note(fid, write)

    def _note(self, fid: str, write: Write) -> int:
        """Hand a write to the committer now (a feed's record, or its health: a few a
        feed, never waiting for room); its number, for :meth:`_flush`."""
        if self._committer is None or self._committer.done():
            self._committer = asyncio.create_task(self._commit_loop(), name="mirror-feeds")
        self._pending.append((fid, write))
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
                # Their health rows may have been in it: each feed says its state again
                # when it reopens.
                self._unsaid |= set(self._health)
            else:
                if positions:  # records, not only health rows: a good read
                    self.fresh["live"] = loop.time()
            self._done = upto
            self._progress.set()

    async def _flush(self, upto: int) -> None:
        """Wait until the records handed over up to number ``upto`` are committed."""
        while self._done < upto:
            self._progress.clear()
            await self._progress.wait()

    def _start(self, key: FeedKey, follow: Coroutine[Any, Any, None], sport: str) -> bool:
        """Run ``follow`` as the feed ``key`` unless that one is open; True if started."""
        task = self.tasks.get(key)
        if task is not None and not task.done():
            follow.close()
            return False
        fid, name = key.fixture, (key.fixture, _kind(key))
        watch = self._health.get(name)
        if watch is None:  # its first opening while the fixture is followed
            now = asyncio.get_running_loop().time()
            watch = self._health[name] = FeedHealth(fid, name[1], sport, now)
            self._note(fid, self._row(watch))
        elif name in self._unsaid:  # its last row was not committed
            self._unsaid.discard(name)
            self._note(fid, self._row(watch))
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
        watch = self._health.get((fid, _kind(key)))
        if watch is None:  # closed before it started
            return False
        listener = self._listener(key, watch, records)
        derive = listener is None
        loop = asyncio.get_running_loop()
        end: tuple[HealthState, str] | None = None
        try:
            async for record, json in records:
                n += 1
                finished = finished or getattr(record, "finished", False) is True
                watch.last_record, watch.position = loop.time(), n
                if derive and watch.state != "live":
                    self._set_state(watch, "live", "")
                await self._put(fid, key, write(record, json, n), n)
            if not finished and getattr(records, "ended", None) is None:
                raise _Unfinished("it ended without the fixture's finishing record")
            end = ("over", "finished" if finished else str(getattr(records, "ended", "")))
        except (AsyncSportsError, _Unfinished) as exc:
            log.warning(
                "mirror: %s feed of %s broke off (%s): polling until it reopens", kind, fid, exc
            )
            if isinstance(key, Live):
                self._broken.add(fid)
            end = ("reconnecting", _cause(exc))
            return False
        except Exception as exc:  # a bug: logged by _said(), tried again next turn
            end = ("reconnecting", _cause(exc))
            raise
        finally:
            self.connections[kind] += getattr(records, "connections", 1)
            if listener is not None:
                listener.cancel()  # its events end with the feed; the mirror says the end
            aclose = getattr(records, "aclose", None)
            if aclose is not None:
                await aclose()
            if end is not None:
                self._set_state(watch, *end)
        return True

    def _listener(
        self, key: FeedKey, watch: FeedHealth, records: AsyncIterator[Any]
    ) -> asyncio.Task[None] | None:
        """The task keeping ``watch``'s state from the feed's health events, when the feed
        says its health (client.live's), else None (the state is derived from the records).

        Listened to before it is read (its docstring: to miss nothing), by a task of its
        own: the records' path only notes each record's time."""
        health = getattr(records, "health", None)
        if not callable(health):
            return None
        events = health()
        return asyncio.create_task(self._listen(watch, events), name=f"{key}-health")

    async def _listen(self, watch: FeedHealth, events: HealthEvents) -> None:
        """Keep ``watch``'s state as the feed's health events say (its end aside: the
        feed's reader says that, a broken-off feed being reopened by the mirror)."""
        try:
            async for event in events:
                match event:
                    case Connected() | Resumed() | Recovered():
                        self._set_state(watch, "live", "")
                    case Lost(cause=cause):
                        self._set_state(watch, "reconnecting", cause)
                    case Reconnecting(attempt=attempt, wait=wait):
                        cause = f"attempt {attempt} in {wait:.1f} s"
                        self._set_state(watch, "reconnecting", cause)
                    case Delayed(cause=cause):
                        self._set_state(watch, "delayed", cause)
        finally:
            await events.aclose()

    def _set_state(self, watch: FeedHealth, state: HealthState, cause: str) -> None:
        """A feed's state is ``state`` (``cause``): kept when it changed."""
        if watch.state == state or self._health.get((watch.fixture_id, watch.feed)) is not watch:
            return  # the same, or a fixture no longer followed
        watch.state, watch.cause = state, cause
        watch.since = asyncio.get_running_loop().time()
        watch.at = time.time()
        log.debug("mirror: %s feed of %s: %s %s", watch.feed, watch.fixture_id, state, cause)
        self._note(watch.fixture_id, self._row(watch))

    @staticmethod
    def _row(watch: FeedHealth) -> Write:
        """The feed's ``feed_health`` row as it stands."""
        return Write(
            HEALTH,
            [
                feed_health_row(
                    watch.fixture_id,
                    watch.feed,
                    watch.sport,
                    watch.state,
                    watch.cause,
                    watch.at,
                    watch.position,
                )
            ],
        )


def _kind(key: FeedKey) -> str:
    """A feed's kind: ``actions`` or ``statistics``."""
    return "actions" if isinstance(key, Live) else "statistics"


def _cause(exc: BaseException) -> str:
    """An error as a feed's cause: its text on one line."""
    return " ".join(str(exc).split()) or type(exc).__name__


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
