"""The bulk backfill: fixtures, then each fixture's actions and statistics, into SQLite
or PostgreSQL (``db`` a ``postgresql://`` URL; needs the ``postgres`` extra).

::

    async with Client(base_url, token=token, rate_limit=5, max_connections=8) as client:
        report = await Backfill(client, "sports.sqlite", Scope(("basketball",))).run()

Fixture listings (a sport, or a sport's season) are walked page by page; each page is a
unit. As fixtures arrive, those that have started get an *actions* unit and a
*statistics* unit (a 404 there means the service has none yet, which is normal), fetched
by ``concurrency`` workers. Units are committed in batches by one writer
(:class:`asyncsports.store.Writer`: SQLite in a thread of its own, PostgreSQL in the event
loop), each with its checkpoint in the same transaction, so a run stopped at any point,
even by SIGKILL, resumes where it stood and ends with the rows a clean run gives. A run of a job whose last run finished starts it afresh and upserts.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import anyio
from anyio.abc import ObjectSendStream
from anyio.streams.memory import MemoryObjectReceiveStream

from asyncsports._http.sports import Sport
from asyncsports.client import Client
from asyncsports.errors import (
    AsyncSportsError,
    AuthenticationError,
    BadRequestError,
    NotFoundError,
    RateLimitError,
    TransportError,
)
from asyncsports.paging import ResumeToken
from asyncsports.resources.actions import timeline_rows
from asyncsports.store import (
    CONNECT_TIMEOUT,
    ActionRows,
    JobState,
    Row,
    Unit,
    Writer,
    engine,
    fixture_row,
    is_postgres,
    redact_url,
    statistics_row,
)

__all__ = ["DEFAULT_SPORTS", "PHASES", "Backfill", "Progress", "Report", "Scope"]

DEFAULT_SPORTS: tuple[str, ...] = tuple(s.value for s in Sport)
"""Every sport the emulator has fixtures for."""

PHASES = ("fixtures", "actions", "statistics")
"""The phases of a run, in the order of its progress bars."""

# These stop the whole run: every later request would fail the same way. Anything else
# (a 5xx after retries, an undecodable body) fails its unit only; the run goes on and a
# later run of the same command retries the unit.
FATAL = (AuthenticationError, TransportError, RateLimitError, BadRequestError)

_NOT_STARTED = frozenset({"scheduled", "postponed"})


@dataclass(frozen=True, slots=True)
class Scope:
    """What a backfill covers: sports, and optionally seasons and a start-date range.

    With ``seasons`` each sport's listing is asked per season (a season id belongs to one
    sport: the other sports answer 404, which is noted, not an error).
    """

    sports: Sequence[str] = DEFAULT_SPORTS
    seasons: Sequence[str] = ()
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    page_size: int = 1000

    @property
    def key(self) -> str:
        """The job's name in the database: the same scope gives the same name."""
        parts = [f"sports={','.join(sorted(set(self.sports)))}"]
        if self.seasons:
            parts.append(f"seasons={','.join(sorted(set(self.seasons)))}")
        if self.date_from is not None:
            parts.append(f"from={self.date_from.isoformat()}")
        if self.date_to is not None:
            parts.append(f"to={self.date_to.isoformat()}")
        parts.append(f"size={self.page_size}")
        return " ".join(parts)

    def listings(self) -> list[tuple[str, str | None]]:
        """``(sport, season or None)`` of every fixture listing to walk."""
        seasons: Sequence[str | None] = list(dict.fromkeys(self.seasons)) or [None]
        return [(sport, season) for sport in dict.fromkeys(self.sports) for season in seasons]


def listing_key(sport: str, season: str | None) -> str:
    """A listing's name in checkpoint units."""
    return sport if season is None else f"{sport}/seasons/{season}"


def started(status: str | None, deleted: bool) -> bool:
    """Whether a fixture can have actions and statistics (not deleted, not yet to start)."""
    return not deleted and (status or "").lower() not in _NOT_STARTED


def requests_needed(listings: Sequence[int], started_fixtures: int, page_size: int) -> int:
    """The fewest requests a backfill can make: every page of each listing (``listings``
    holds each listing's fixture count; an empty listing is still one page), and a
    timeline and a statistics packet per fixture that has started."""
    pages = sum(max(1, -(-n // page_size)) for n in listings)
    return pages + 2 * started_fixtures


async def fixture_pages(
    client: Client, scope: Scope, sport: str, season: str | None, start: int
) -> AsyncIterator[tuple[int, list[tuple[Any, ...]]]]:
    """The ``fixtures`` rows of one listing of ``scope``, page by page from page
    ``start``: ``(page number, rows)``. What the backfill and its workers walk."""
    listing = client.with_json.fixtures.list(
        sport,
        season_id=season,
        date_from=scope.date_from,
        date_to=scope.date_to,
        page_size=scope.page_size,
        resume=ResumeToken(start),
        concurrency=2,
    )
    async with listing:
        async for page in listing.pages():
            rows: list[Row] = [fixture_row(sport, f, json) for f, json in page]
            yield listing.resume_token.page, rows


def first_missing(numbers: set[int]) -> int:
    """The smallest non-negative integer not in ``numbers``."""
    n = 0
    while n in numbers:
        n += 1
    return n


class Progress(Protocol):
    """What a backfill reports as it goes (the command draws progress bars from it)."""

    def add(self, phase: str, total: int) -> None:
        """``total`` more units of ``phase`` are known (fixtures count one per fixture)."""

    def advance(self, phase: str, n: int = 1) -> None:
        """``n`` units of ``phase`` are done."""

    def settle(self, phase: str) -> None:
        """No more units of ``phase`` will be added."""


class _Silent:
    def add(self, phase: str, total: int) -> None:
        pass

    def advance(self, phase: str, n: int = 1) -> None:
        pass

    def settle(self, phase: str) -> None:
        pass


@dataclass
class Report:
    """What a run did. ``rows`` counts each table's rows in the database at the end."""

    job: str
    db: Path | str
    """The SQLite file, or the PostgreSQL URL without its password."""
    resumed: bool = False
    interrupted: bool = False
    rows: dict[str, int] = field(default_factory=dict)
    written: Counter[str] = field(default_factory=Counter)
    units: int = 0
    """Units done by this run."""
    skipped: int = 0
    """Units an earlier, interrupted run had done."""
    without_statistics: int = 0
    """Started fixtures the service has no statistics for yet (404)."""
    not_found: list[str] = field(default_factory=list)
    """Listings that answered 404 (a season id of another sport, say), as
    ``sport`` or ``sport/seasons/id``; also those of the interrupted run it resumed."""
    failed: list[tuple[str, AsyncSportsError]] = field(default_factory=list)
    requests: int = 0
    retries: int = 0
    seconds: float = 0.0

    @property
    def finished(self) -> bool:
        """Whether every unit is done: the job is complete."""
        return not self.interrupted and not self.failed

    def as_dict(self) -> dict[str, Any]:
        """The report as plain JSON-ready values."""
        return {
            "job": self.job,
            "db": str(self.db),
            "finished": self.finished,
            "resumed": self.resumed,
            "interrupted": self.interrupted,
            "rows": self.rows,
            "written": dict(self.written),
            "units": self.units,
            "skipped": self.skipped,
            "without_statistics": self.without_statistics,
            "not_found": self.not_found,
            "failed": [{"unit": unit, "error": str(exc)} for unit, exc in self.failed],
            "requests": self.requests,
            "retries": self.retries,
            "seconds": round(self.seconds, 3),
        }


class Backfill:
    """One run of a backfill job. ``await run()`` returns a :class:`Report`.

    ``client`` should be open, with the rate limit and connection count wanted
    (``max_connections`` bounds requests in flight); ``concurrency`` is the number of
    fixtures fetched at once. ``restart`` starts the job afresh even if its last run was
    interrupted. :meth:`stop` ends the run early: work in flight is dropped, what is
    done is committed, and the same command later resumes.

    ``progress`` hears of nothing before the database is open. A PostgreSQL database
    that cannot be reached fails the run within ``connect_timeout`` seconds; one lost
    later is waited for (see :class:`asyncsports.store.PgLink`).
    """

    def __init__(
        self,
        client: Client,
        db: str | Path,
        scope: Scope,
        *,
        concurrency: int = 8,
        restart: bool = False,
        progress: Progress | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency: must be >= 1, got {concurrency}")
        self.client = client
        self.scope = scope
        self.concurrency = concurrency
        pending = 4 * concurrency
        if is_postgres(db):
            self.report = Report(scope.key, redact_url(str(db)))
            # Four times the units per batch: a PostgreSQL transaction costs a dozen round
            # trips whatever its size, and the server's time, not the client's, paces it.
            pending *= 4
        else:
            self.report = Report(scope.key, Path(db))
        store = engine(db, scope.key, restart=restart, connect_timeout=connect_timeout)
        self._writer = Writer(store, pending=pending, wrote=self._wrote)
        self._restart = restart
        self._progress: Progress = progress or _Silent()
        self._scope = anyio.CancelScope()
        self._done: frozenset[str] = frozenset()
        self._offered: set[str] = set()
        self._fatal: AsyncSportsError | None = None
        self._ran = False

    def stop(self) -> None:
        """End the run early (call it from the event loop, say on SIGINT).

        What is fetched is committed, and the report says ``interrupted``. Called before
        :meth:`run`, the run stops as soon as the database is open; after it, nothing.
        """
        if self._ran:
            return
        self.report.interrupted = True
        self._scope.cancel()

    async def run(self) -> Report:
        """Run the job to its end (or to :meth:`stop`); raise the error that stopped it."""
        report = self.report
        t0 = time.monotonic()
        requests, retries = self.client.requests_sent, self.client.retries
        try:
            async with anyio.create_task_group() as tg:
                state: JobState = await tg.start(self._writer.run)
                finished = False
                try:
                    with self._scope:
                        await self._work(state)
                    finished = report.finished and self._fatal is None
                finally:
                    # Not finished when cancelled from outside either: the job resumes.
                    self._writer.close(finished=finished)
        except BaseExceptionGroup as group:
            raise _unwrap(group) from None
        finally:
            self._ran = True
        report.rows = self._writer.rows
        report.requests = self.client.requests_sent - requests
        report.retries = self.client.retries - retries
        report.seconds = time.monotonic() - t0
        if self._fatal is not None:
            raise self._fatal
        return report

    async def _work(self, state: JobState) -> None:
        self.report.resumed = state.resumed
        self.report.skipped = len(state.done)
        self._done = state.done
        send, receive = anyio.create_memory_object_stream[tuple[str, str, str]](
            2 * self.concurrency
        )
        async with anyio.create_task_group() as tg:
            for _ in range(self.concurrency):
                tg.start_soon(self._worker, receive.clone())
            receive.close()
            async with send:
                self._progress.advance("fixtures", len(state.fixtures))
                tg.start_soon(self._resume_fixtures, send.clone(), state)
                listings = anyio.CapacityLimiter(max(1, min(4, self.concurrency // 2)))
                async with anyio.create_task_group() as walks:
                    for sport, season in self.scope.listings():
                        walks.start_soon(self._walk, send.clone(), listings, sport, season)
                self._progress.settle("fixtures")
        for phase in PHASES[1:]:
            self._progress.settle(phase)

    async def _resume_fixtures(
        self, send: ObjectSendStream[tuple[str, str, str]], state: JobState
    ) -> None:
        async with send:
            for fid, sport, status, deleted in state.fixtures:
                await self._offer(send, sport, fid, status, deleted)

    async def _offer(
        self,
        send: ObjectSendStream[tuple[str, str, str]],
        sport: str,
        fid: str,
        status: str | None,
        deleted: bool,
    ) -> None:
        """Queue a fixture's actions and statistics units, unless done or not due."""
        if fid in self._offered or not started(status, deleted):
            return
        self._offered.add(fid)
        for kind in PHASES[1:]:
            self._progress.add(kind, 1)
            if f"{kind} {fid}" in self._done:
                self._progress.advance(kind)
            else:
                try:
                    await send.send((kind, sport, fid))
                except anyio.BrokenResourceError:
                    # Every worker is gone: the run is stopping (stop() cancelled its scope,
                    # and a send can see the workers' ends closed before its own
                    # cancellation). What was not sent is not done: a resume does it.
                    return

    async def _walk(
        self,
        send: ObjectSendStream[tuple[str, str, str]],
        limiter: anyio.CapacityLimiter,
        sport: str,
        season: str | None,
    ) -> None:
        async with send, limiter:  # closing the clone, even when there is nothing to do
            key = listing_key(sport, season)
            if f"listed {key}" in self._done:
                return
            if f"missing {key}" in self._done:  # a 404 of the interrupted run
                self.report.not_found.append(key)
                return
            prefix = f"page {key} "
            pages = {int(u[len(prefix) :]) for u in self._done if u.startswith(prefix)}
            try:
                start = first_missing(pages)
                async for number, rows in fixture_pages(
                    self.client, self.scope, sport, season, start
                ):
                    ids = [row[0] for row in rows]
                    await self._save(Unit(f"{prefix}{number}", "fixtures", rows, members=ids))
                    self._progress.advance("fixtures", len(rows))
                    for fid, _, _, _, status, _, deleted, _ in rows:
                        await self._offer(send, sport, fid, status, bool(deleted))
            except NotFoundError:
                self.report.not_found.append(key)
                await self._save(Unit(f"missing {key}", "fixtures"))
                return
            except AsyncSportsError as exc:
                self._failed(f"listing {key}", exc)
                return
            await self._save(Unit(f"listed {key}", "fixtures"))

    async def _worker(self, receive: MemoryObjectReceiveStream[tuple[str, str, str]]) -> None:
        async with receive:
            async for kind, sport, fid in receive:
                try:
                    unit = await self._fetch(kind, sport, fid)
                except AsyncSportsError as exc:
                    self._failed(f"{kind} {fid}", exc)
                    continue
                await self._save(unit)
                self._progress.advance(kind)

    async def _fetch(self, kind: str, sport: str, fid: str) -> Unit:
        unit, found = await fetch_unit(self.client, kind, sport, fid)
        if not found:
            self.report.without_statistics += 1
        return unit

    async def _save(self, unit: Unit) -> None:
        await self._writer.put(unit)
        self.report.units += 1

    def _wrote(self, batch: Sequence[Unit], written: Sequence[Unit]) -> None:
        for unit in written:
            self.report.written[unit.table] += len(unit.rows)

    def _failed(self, unit: str, exc: AsyncSportsError) -> None:
        if isinstance(exc, FATAL):
            if self._fatal is None:
                self._fatal = exc
            self._scope.cancel()
        else:
            self.report.failed.append((unit, exc))


async def fetch_unit(client: Client, kind: str, sport: str, fid: str) -> tuple[Unit, bool]:
    """A fixture's ``actions`` or ``statistics`` unit, and whether the service had them
    (statistics that answer 404 are not there yet: an empty unit)."""
    name = f"{kind} {fid}"
    if kind == "actions":
        try:
            # Rows straight from the wire (asyncsports.store.ActionRows): the sink's columns and
            # each record's JSON, without building the full models.
            actions = await timeline_rows(client.session, sport, fid, ActionRows(sport, fid))
        except NotFoundError:
            actions = []  # a sport without timelines
        # A timeline may hold an action more than once (a later version of it): the
        # last one is the action as it stands, and the only one stored.
        rows = {row[1]: row for row in actions}
        return Unit(name, kind, list(rows.values()), replace=fid), True
    try:
        packet, json = await client.with_json.statistics.get(sport, fid)
    except NotFoundError:
        return Unit(name, kind, (), replace=fid), False
    return Unit(name, kind, [statistics_row(sport, fid, packet, json)], replace=fid), True


def _unwrap(exc: BaseException) -> BaseException:
    """The one error inside nested single-error groups (task groups wrap what they raise)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc
