"""The mirror: workers take the plan's due tasks, run their reads, commit, plan what follows."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import math
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from asyncsports._http.sports import Sport
from asyncsports.client import Client
from asyncsports.errors import (
    AsyncSportsError,
    AuthenticationError,
    BadRequestError,
    RecordingWriteError,
    SinkError,
)
from asyncsports.store import (
    CONNECT_TIMEOUT,
    Lease,
    MirrorStore,
    RowChange,
    is_postgres,
    open_mirror,
    redact_url,
)

from ._changes import feed
from ._clock import ServiceClock
from ._jobs import ActionFeed, Done, Jobs, Next, StatisticsFeed
from ._keys import Events, Final, Fixtures, Key, Live, Owed, Snooker, Standings, Window
from ._live import FeedHealth, LiveFeeds, sockets
from ._plan import PRIORITY, Plan, Task, wanted, window
from ._report import report

if TYPE_CHECKING:
    from ._metrics import MirrorMetrics

__all__ = ["ALL_SPORTS", "Mirror"]

log = logging.getLogger("asyncsports.sync")

ALL_SPORTS: tuple[str, ...] = tuple(s.value for s in Sport)
"""Every sport the mirror follows unless told otherwise (the values of ``Sport``)."""
# These stop the mirror: every later request would fail the same way.
FATAL = (AuthenticationError, BadRequestError)
_LONG = 3600.0  # cadences above this are not waited for by caught_up()


class Mirror:
    """Keeps a database current for ``sports``, within the client's rate budget.

    ``db``: a SQLite file or a ``postgresql://`` URL (see
    :func:`~asyncsports.store.open_mirror`).

    ``every`` overrides cadences (seconds, keys of :data:`~asyncsports.sync.DEFAULT_EVERY`);
    ``days_back``/``days_ahead`` bound the fixtures followed; ``concurrency`` is how many
    reads may wait for the budget at once; ``clock`` is the service's time in epoch
    seconds (by default the ``Date`` of its responses,
    :meth:`~asyncsports.Client.server_time`, falling back to this machine's clock; an
    explicit one such as the emulator's ``emu.clock.time`` wins); ``events``: follow the live
    stream events (default: when the client has a streaming address and credentials);
    ``snooker``: snooker tournaments (default: when ``snooker`` is among the sports);
    ``live``: live fixtures' actions and statistics over the live websockets
    (``client.live``; default: when the client has a ``live_url``), else actions polled;
    ``live_feed``/``statistics_feed``: other sources of them (see
    :class:`~asyncsports.sync.ActionFeed`, :class:`~asyncsports.sync.StatisticsFeed`);
    ``connect_timeout``: seconds to reach a PostgreSQL ``db`` never reached before.
    Use :meth:`run` (until :meth:`stop`) or :meth:`once` (which polls: a pass is a
    snapshot), and :meth:`changes` for what changed.
    """

    label = "mirror"
    """How the log names it."""
    title = "writer"
    """What ``/healthz`` and the role metric call the process writing its database."""
    duty = "writes the database"
    """What that process does, as the role metric's help says it."""
    does = "writes it"
    """What another process holding its lease does, as a standby's log says it."""
    metrics = "asyncsports_sync"
    """The prefix of its metrics' names."""

    def __init__(
        self,
        client: Client,
        db: str | Path,
        *,
        sports: Iterable[str] = ALL_SPORTS,
        every: Mapping[str, float] | None = None,
        days_back: int = 2,
        days_ahead: int = 2,
        concurrency: int = 4,
        clock: Callable[[], float] | None = None,
        events: bool | None = None,
        snooker: bool | None = None,
        live: bool | None = None,
        live_feed: ActionFeed | None = None,
        statistics_feed: StatisticsFeed | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> None:
        self.client = client
        self.connect_timeout = connect_timeout
        """Seconds a PostgreSQL database never reached is waited for (then SinkError)."""
        self.db: str | Path = db if is_postgres(db) else Path(db)
        self.name = redact_url(str(db)) if is_postgres(db) else str(db)
        """The database, as messages name it (no password)."""
        self.sports = tuple(dict.fromkeys(sports))
        self.plan = Plan(every)
        self.every = self.plan.every
        self.concurrency = concurrency
        self.clock = clock or ServiceClock(client.server_time, lambda: bool(self.fresh))
        s = client.settings
        self.follow_events = (
            events if events is not None else bool(s.streaming_url and s.streaming_credentials)
        )
        self.follow_snooker = snooker if snooker is not None else "snooker" in self.sports
        if live if live is not None else bool(s.live_url):
            ws_actions, ws_statistics = sockets(client)
            live_feed = live_feed or ws_actions
            statistics_feed = statistics_feed or ws_statistics
        self.requests: collections.Counter[tuple[str, int]] = collections.Counter()
        self.committed: collections.Counter[str] = collections.Counter()
        self.fresh: dict[str, float] = {}  # resource -> loop time of its last good read
        self.found: dict[str, int] = {}  # sport -> fixtures in its window, last listed
        self.live = LiveFeeds(
            live_feed,
            statistics_feed,
            commit=self._commit,
            position=self._position,
            ended=self._ended,
            fresh=self.fresh,
        )
        self.feeds = self.live.tasks  # the feeds running, by Live and Stats of the fixture
        self.started = math.nan
        self._marks: dict[str, float] = {}
        self._store: MirrorStore | None = None
        self.fence: Lease | None = None  # set by hold() (a Standby): each write checks it is ours
        self._stopping = asyncio.Event()  # asked to stop
        self._wake = asyncio.Event()  # a task is due: wake the loop
        self._finished = asyncio.Event()  # the run is over
        self._ready = asyncio.Event()  # started
        self._changed = asyncio.Event()  # a commit made
        self._once = False
        self._error: BaseException | None = None
        self.failing: dict[str, tuple[float, AsyncSportsError]] = {}
        """Tasks whose last turn failed: the key's text (as the log and ``/healthz`` name
        it) -> (loop time of the first failure in a row, the last error). A pass of :meth:`once` that leaves any could not complete."""
        self.jobs = Jobs(
            client,
            clock=self.clock,
            back=days_back,
            ahead=days_ahead,
            every=self.every,
            marks=lambda: self._marks,
        )

    # ------------------------------------------------------------------ public

    async def run(self) -> None:
        """Follow the service until :meth:`stop`; what is in flight is finished first."""
        await self._main(once=False)

    async def once(self) -> None:
        """One full pass: everything due now and everything it leads to, once each."""
        await self._main(once=True)

    def stop(self) -> None:
        """Ask :meth:`run` to finish what is in flight and return."""
        self._stopping.set()
        self._wake.set()

    async def caught_up(self) -> None:
        """Wait until every task of the plan has run since this call (those of cadences
        over an hour only if due): with the service's clock still, the database then
        equals what the service answers."""
        await self._ready.wait()
        t0 = asyncio.get_running_loop().time()
        while self._behind(t0):
            if self._error is not None:
                raise self._error
            if self._store is None:
                raise RuntimeError("the mirror is not running")
            self._finished.clear()
            await self._finished.wait()

    def _behind(self, t0: float) -> bool:
        now = asyncio.get_running_loop().time()
        for t in self.plan.tasks.values():
            if t.started >= t0 and not t.running:
                continue
            if t.every is not None and t.every > _LONG and t.due > now:
                continue
            return True
        return False

    async def changes(
        self,
        after: int = 0,
        *,
        consumer: str | None = None,
        follow: bool = True,
        until: asyncio.Event | None = None,
    ) -> AsyncIterator[RowChange]:
        """Each committed change after ``after`` (or ``consumer``'s saved cursor), in
        commit order, at least once; ``follow=False`` ends at the last one committed,
        ``until`` once it is set and every change committed before has been given.

        A named ``consumer``'s cursor moves past a change when the next one is asked
        for (the consumer is done with it): one that restarts resumes from there.
        """
        # The mirror's own database: made now if the mirror has not yet (a reader of
        # the change feed never makes one).
        store = await open_mirror(self.db, connect_timeout=self.connect_timeout)
        await store.close()
        async for change in feed(
            self.db,
            after,
            consumer=consumer,
            follow=follow,
            until=until,
            wake=self._changed,
            connect_timeout=self.connect_timeout,
        ):
            yield change

    # ------------------------------------------------------------------ as a job

    def held(self, lease: str) -> str:
        """What the lease ``lease`` stands for, as a standby's log says it: the database."""
        return self.name

    def doing(self, lease: str) -> str:
        """What this process does while it holds ``lease``, as the log says it."""
        return f"writing {self.name}"

    def hold(self, lease: Lease | None) -> None:
        """Work under ``lease`` (None: none): each write checks that it is still ours."""
        self.fence = lease

    def health(self) -> tuple[bool, dict[str, object]]:
        """Whether it does its work, and what ``/healthz`` answers (see
        :func:`~asyncsports.sync._metrics.healthy`)."""
        from ._metrics import healthy

        return healthy(self, asyncio.get_running_loop().time())

    def collector(self, core: ModuleType) -> MirrorMetrics:
        """Its metrics, made with ``core`` (``prometheus_client.core``)."""
        from ._metrics import MirrorMetrics

        return MirrorMetrics(self, core)

    # ------------------------------------------------------------------ its figures

    @property
    def planned(self) -> int:
        """Tasks in the plan."""
        return len(self.plan.tasks)

    def due(self, now: float) -> int:
        """Tasks due at ``now`` (the loop's time) and waiting for a worker."""
        return self.plan.depth(now)

    def behind(self, now: float) -> int:
        """Tasks later than their own cadence at ``now``: the budget is too small."""
        return len(self.plan.late(now))

    @property
    def feeds_open(self) -> int:
        """Live feeds open now."""
        return self.live.open()

    @property
    def feed_health(self) -> Mapping[tuple[str, str], FeedHealth]:
        """Where each live feed of the fixtures followed stands, by (fixture id, feed)."""
        return self.live.health

    @property
    def connections(self) -> Mapping[str, int]:
        """Websocket connections of the live feeds that ended, by kind."""
        return self.live.connections

    @property
    def requests_sent(self) -> int:
        """Requests its client sent so far."""
        return self.client.requests_sent

    @property
    def rate_limit(self) -> float | None:
        """Its client's requests a second (None: no limit)."""
        return self.client.settings.rate_limit

    # ------------------------------------------------------------------ the loop

    async def _main(self, once: bool) -> None:
        loop = asyncio.get_running_loop()
        self._once, self.started = once, loop.time()
        self.plan = Plan(self.every)
        self._error = None  # a run after a standby's lost term starts afresh
        self.failing = {}
        self._store = await open_mirror(
            self.db, fence=self.fence, connect_timeout=self.connect_timeout
        )
        try:
            await self._restore(loop.time())
            self._say_start(once)
            self._ready.set()
            async with asyncio.TaskGroup() as tg:
                for i in range(self.concurrency):
                    tg.create_task(self._worker(), name=f"mirror-worker-{i}")
                tg.create_task(
                    report(self.plan, self.committed, self._stopping), name="mirror-watch"
                )
        finally:
            await self.live.aclose()
            self._finished.set()
            self._ready.clear()
            self._stopping.clear()  # a stop asked before the run starts is kept
            store, self._store = self._store, None
            await store.close()
        if self._error is not None:
            raise self._error

    async def _restore(self, now: float) -> None:
        """Plan the listings, and carry on with what the database says is under way."""
        self._marks = await self._db().marks()
        plan = self.plan
        for sport in self.sports:
            plan.add(Fixtures(sport), "fixtures", (sport, "near"), at=now)
            plan.add(Window(sport), "window", (sport, "window"), at=now)
        if self.follow_events:
            plan.add(Events(), "events", at=now)
        if self.follow_snooker:
            plan.add(Snooker(), "snooker", at=self._due_after(Snooker(), "snooker", now))
        for mark in self._marks:
            owed = Owed.parse(mark)
            if owed is not None and owed.sport in self.sports:
                # Owed by a fixture that ended before a stop.
                args = (owed.sport, owed.season)
                plan.add(Standings(owed.season), "standings", args, at=now)
        for fid, sport, season, status, deleted in await self._db().fixtures():
            if sport not in self.sports:
                continue
            need = wanted(status, deleted, str(Final(fid)) in self._marks)
            if need == "live":
                plan.add(Live(fid), "live", (sport, fid, season or ""), at=now)
            elif need == "final":
                plan.add(Final(fid), "backlog", (sport, fid, season or ""), at=now)

    def _say_start(self, once: bool) -> None:
        rate = self.client.settings.rate_limit
        # The plan holds no listing's finds yet: these are the fixtures the database
        # says were under way when the last run stopped (the report's count, later, is
        # of every live fixture followed, the listings' finds too).
        kinds = collections.Counter(t.kind for t in self.plan.tasks.values())
        if kinds["live"] or kinds["backlog"]:
            carried = (
                f"carrying on from the database with {kinds['live']} live fixtures to "
                f"follow and {kinds['backlog']} ended ones to read in full"
            )
        else:
            carried = "no fixture under way in the database to carry on with"
        log.info(
            "mirror: %s %s into %s within %s; %s",
            "one pass over" if once else "following",
            ", ".join(self.sports),
            self.name,
            f"{rate:g} requests a second" if rate else "no rate limit",
            carried,
        )

    def _due_after(self, mark: Key, kind: str, now: float) -> float:
        """When work marked ``mark`` is due again: its cadence after it was last done."""
        done = self._marks.get(str(mark))
        if done is None:
            return now
        return now + max(0.0, done + self.every[kind] - time.time())

    async def _worker(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._stopping.is_set():
            task = self.plan.take(loop.time())
            if task is None:
                if self._once and self.plan.running() == 0 and self.plan.wait(loop.time()) != 0:
                    self.stop()  # the pass is over: nothing due, nothing running
                    return
                await self._idle(self.plan.wait(loop.time()))
                continue
            try:
                await self._turn(task)
            finally:
                self._finished.set()
                self._wake.set()

    async def _idle(self, wait: float | None) -> None:
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(wait if wait is not None else 1.0):
                await self._wake.wait()

    async def _turn(self, task: Task) -> None:
        loop = asyncio.get_running_loop()
        again: float | None = None
        try:
            done = await self._job(task)
        except (*FATAL, SinkError, RecordingWriteError) as exc:
            # A recording that cannot be written (--record) fails every request alike.
            if task.kind == "events" and not isinstance(exc, SinkError | RecordingWriteError):
                # The events listing is another host with its own credentials: its
                # refusal must not stop the data service's mirror.
                log.warning("mirror: live stream events refused (%s); trying again later", exc)
                self._failed(task, exc, loop.time())
                self.plan.finish(task, loop.time())
                return
            log.error("mirror: %s failed: %s; stopping", task.key, exc)
            self._error = exc
            self.plan.finish(task, loop.time())
            self.stop()
            return
        except AsyncSportsError as exc:
            status = getattr(exc, "status", 0) or 0
            self.requests[(task.kind, status)] += 1
            log.warning("mirror: %s failed (%s); trying again later", task.key, exc)
            self._failed(task, exc, loop.time())
            again = min(task.every or self.every["retry"], self.every["retry"])
        else:
            if self.failing.pop(str(task.key), None) is not None:
                log.info("mirror: %s works again", task.key)
            if done.status:
                self.requests[(done.resource, done.status)] += 1
                self.fresh[done.resource] = loop.time()
            await self._commit(done)
            if task.kind == "window" and done.status == 200:
                self._found(task.args[0], done)
            again = done.again
            self._plan_next(done, loop.time())
        if self._once and again is None and task.every is not None:
            again = math.inf  # once: each task once per pass
        self.plan.finish(task, loop.time(), again=again)

    def _failed(self, task: Task, exc: AsyncSportsError, now: float) -> None:
        key = str(task.key)
        since = self.failing[key][0] if key in self.failing else now
        self.failing[key] = (since, exc)

    def _found(self, sport: str, done: Done) -> None:
        """Keep how many fixtures a sport's window holds; say when it holds none."""
        n = sum(len(w.rows) for w in done.writes if w.table == "fixtures")
        before, self.found[sport] = self.found.get(sport), n
        if n == 0 and before != 0:
            start, end = window(self.clock(), self.jobs.back, self.jobs.ahead)
            log.warning(
                "mirror: no %s fixture from %s to %s by the service's clock: "
                "nothing of it to follow",
                sport,
                start,
                end,
            )

    async def _commit(self, done: Done) -> None:
        if not done.writes and not done.marks and not done.unmarks:
            return
        at = time.time()
        marks, unmarks = [str(m) for m in done.marks], [str(m) for m in done.unmarks]
        n = await self._db().write(done.writes, marks, at, unmarks, done.positions)
        for mark in unmarks:
            self._marks.pop(mark, None)
        for mark in marks:
            self._marks[mark] = at
        if n.total():
            self.committed.update(n)
            self._changed.set()

    def _plan_next(self, done: Done, now: float) -> None:
        delay = 0.0 if self._once else 1.0  # once: a pass waits for nothing
        for key in done.stop:
            self._unfollow(key)
        for n in done.follow:
            if n.kind == "squads":
                self.plan.add(n.key, n.kind, n.args, at=self._due_after(n.key, "squads", now))
            elif n.kind == "final" and str(n.key) in self._marks:
                continue  # read in full since the job that calls for it began
            elif n.kind == "final" and n.key not in self.plan.tasks:
                # Watched while live: its end comes first; one found ended: the backlog.
                live = Live(n.args[1])
                kind = "final" if live in self.plan.tasks else "backlog"
                self._unfollow(live)
                self.plan.add(n.key, kind, n.args, at=now + n.delay * delay)
            elif n.kind == "standings" and self._once:
                # Once: after every ended fixture of the pass, one read per season.
                self.plan.add(n.key, n.kind, n.args, at=now, priority=PRIORITY["backlog"] + 1)
            else:
                self.plan.add(n.key, n.kind, n.args, at=now + n.delay * delay)

    def _unfollow(self, key: Live) -> None:
        self.plan.drop(key)
        self.live.close(key.fixture)

    async def _job(self, task: Task) -> Done:
        j, a = self.jobs, task.args
        match task.kind:
            case "fixtures" | "window":
                return await j.fixtures(a[0], a[1])
            case "live":
                return await self._live(a[0], a[1], a[2])
            case "final" | "backlog":
                return await j.final(a[0], a[1], a[2])
            case "standings":
                return await j.standings(a[0], a[1])
            case "squads":
                return await j.squads(a[0], a[1])
            case "events":
                return await j.events(await self._db().rows("events"))
            case "snooker":
                return await j.snooker()
        raise AssertionError(task.kind)

    # ------------------------------------------------------------------ live actions

    async def _live(self, sport: str, fid: str, season: str) -> Done:
        """A live fixture: its feeds kept open (see :class:`~asyncsports.sync._live.LiveFeeds`);
        its actions polled when no feed carries them (and once a pass)."""
        if self._once or self.live.follow(sport, fid, season):
            return await self.jobs.actions(sport, fid, season)
        return Done("live", status=0)

    async def _position(self, name: str, fid: str) -> int:
        """Where a live feed resumes: its records committed; for an actions feed that
        never ran, the actions stored (polled before): at least once, never a gap."""
        n = await self._db().position(name)
        if n is None and fid:
            n = await self._db().count_actions(fid)
        return n or 0

    def _ended(self, final: Next) -> None:
        """A live fixture's actions feed ended with it: its final read, now."""
        self._plan_next(Done("live", follow=[final]), asyncio.get_running_loop().time())
        self._wake.set()

    def _db(self) -> MirrorStore:
        if self._store is None:
            raise RuntimeError("the mirror is not running")
        return self._store
