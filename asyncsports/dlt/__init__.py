"""A dlt source: the service into any warehouse dlt loads (DuckDB, PostgreSQL, BigQuery,
Snowflake, ...), incrementally. Needs the ``dlt`` extra (and dlt's for the destination)::

    import dlt
    from asyncsports import Client
    from asyncsports.dlt import sports_source

    pipeline = dlt.pipeline("sports", destination="duckdb", dataset_name="sports")
    info = pipeline.run(sports_source(Client(url, token=token, rate_limit=5)))

Tables (:data:`TABLES`): ``fixtures``, ``actions``, ``statistics``, ``standings``,
``squads``, ``events``, ``snooker_tournaments`` and ``snooker_matches``. Each has the
backfill's key columns (:mod:`asyncsports.store`) and ``json``, the record as the service
sent it (dlt type ``json``); each merges on its primary key, so a record that changes
replaces its row.

Incremental, by what the service lets one filter by: a fixture listing takes a start
date, and a fixture's status says whether it can still change. The first run lists every
fixture; a later one lists each sport from the day of its earliest fixture that was not
settled (completed or deleted) at the last run. The service has no "changed since", so
the source keeps a short digest of each listed record in dlt's state and yields only the
records that are new or changed. A finished fixture's timeline and statistics are loaded
once; a started one's timeline is re-read each run and only its new or changed actions
load. Standings are re-read for the seasons with a changed fixture, squads for seasons
not read before, matches for the snooker tournaments not over when last read.
The state is dlt's: committed with the load, so a failed load is read again next run.

The bridge: the client is asyncio, dlt iterates plain generators. The resources are sync
generators that run the client's coroutines on one event loop with
``asyncio.run_coroutine_threadsafe``: the loop of the caller when the source is made in
one (the pipeline then runs in another thread: ``await asyncio.to_thread(pipeline.run,
source)``), else a loop of the source's own, in a thread, with the client opened there for
the run. Not dlt's async generators: dlt runs those on a loop of its own, made per
extract, where a client opened by the caller cannot be used, and it drives each
``__anext__`` as a separate task, so the concurrency inside (a task group fetching
timelines) could not span them. This way one client, and so one rate limiter and one
connection pool, serves every resource, and timelines are fetched ``concurrency`` at a
time inside its budget.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from asyncsports._http.config import Settings
from asyncsports._optional import need
from asyncsports.backfill import DEFAULT_SPORTS, Progress, started
from asyncsports.client import Client
from asyncsports.dlt._bridge import Bridge, running_loop
from asyncsports.dlt._run import Run
from asyncsports.dlt._state import digest, loaded_digests, new_or_changed, settled
from asyncsports.dlt._tables import TABLES, columns, record
from asyncsports.errors import NotFoundError
from asyncsports.resources.actions import timeline_rows
from asyncsports.store._rows import (
    ActionRows,
    Row,
    event_row,
    squad_row,
    standings_row,
    statistics_row,
    tournament_row,
    utc_text,
)

if TYPE_CHECKING:
    from dlt.sources import DltSource

__all__ = ["MATCHES_DAYS", "TABLES", "sports_source"]

# ----------------------------------------------------------------- the resources


def _fixtures(src: Run) -> Iterator[list[dict[str, Any]]]:
    with src.bridge.using():
        state = src.state()
        since = state.setdefault("since", {})
        for sport in src.sports:
            listed = src.listed(sport)
            seen: dict[str, list[Any]] = loaded_digests(state, "fixtures").setdefault(sport, {})
            out = []
            for row in listed.rows:
                fid, start, d = row[0], row[3], digest(row[7])
                if seen.get(fid, (None,))[0] != d:
                    out.append(record(TABLES["fixtures"], row))
                seen[fid] = [d, start]
            # The next run lists from the day of the earliest fixture that can still change;
            # when none can, from the day of the last (new ones are added after it).
            days = [r[3][:10] for r in listed.rows if r[3] and not settled(r[4], bool(r[6]))]
            last = [r[3][:10] for r in listed.rows if r[3]]
            nxt = min(days) if days else max(last) if last else listed.since
            if nxt is not None:
                since[sport] = nxt
                for fid in [f for f, (_, s) in seen.items() if s and s[:10] < nxt]:
                    del seen[fid]  # before the next run's first day: never listed again
            if out:
                yield out


def _due(src: Run, kind: str) -> tuple[list[tuple[str, str]], dict[str, Row]]:
    """The started fixtures whose ``kind`` is still to read, and the rows of all listed."""
    finals: dict[str, dict[str, str]] = src.state().setdefault("final", {}).setdefault(kind, {})
    jobs: list[tuple[str, str]] = []
    rows: dict[str, Row] = {}
    for sport in src.sports:
        listed = src.listed(sport)
        final = finals.setdefault(sport, {})
        if listed.since is not None:  # before the listing's first day: never listed again
            for fid in [f for f, s in final.items() if s and s[:10] < listed.since]:
                del final[fid]
        for row in listed.rows:
            rows[row[0]] = row
            if started(row[4], bool(row[6])) and row[0] not in final:
                jobs.append((sport, row[0]))
    return jobs, rows


def _finish(src: Run, kind: str, fixture: Row, seen: dict[str, Any]) -> None:
    """A settled fixture's ``kind`` is loaded for good: read no more, keep no digests."""
    if settled(fixture[4], bool(fixture[6])):
        seen.pop(fixture[0], None)
        finals = src.state()["final"][kind]
        finals[fixture[1]][fixture[0]] = fixture[3] or ""


def _actions(src: Run) -> Iterator[list[dict[str, Any]]]:
    with src.bridge.using():
        state = src.state()
        seen = loaded_digests(state, "actions")
        jobs, fixtures = _due(src, "actions")

        async def timeline(sport: str, fid: str) -> list[Row]:
            try:
                rows = await timeline_rows(src.client.session, sport, fid, ActionRows(sport, fid))
            except NotFoundError:
                return []  # a sport without timelines
            # A timeline may hold an action more than once: the last is the action as it is.
            return list({row[1]: row for row in rows}.values())

        for fid, rows in src.fetched("actions", jobs, timeline):
            out = new_or_changed("actions", seen.setdefault(fid, {}), rows, key=(1,))
            _finish(src, "actions", fixtures[fid], seen)
            if out:
                yield out


def _statistics(src: Run) -> Iterator[list[dict[str, Any]]]:
    with src.bridge.using():
        state = src.state()
        seen = loaded_digests(state, "statistics")
        jobs, fixtures = _due(src, "statistics")

        async def packet(sport: str, fid: str) -> Row | None:
            try:
                p, json = await src.client.with_json.statistics.get(sport, fid)
            except NotFoundError:
                return None  # not there yet
            return statistics_row(sport, fid, p, json)

        for fid, row in src.fetched("statistics", jobs, packet):
            if row is None:
                continue
            out = new_or_changed("statistics", seen, [row])
            _finish(src, "statistics", fixtures[fid], seen)
            if out:
                yield out


def _seasons(src: Run) -> list[tuple[str, str]]:
    """``(sport, season id)`` of the fixtures listed this run."""
    found: dict[tuple[str, str], None] = {}
    for sport in src.sports:
        for row in src.listed(sport).rows:
            if row[2]:
                found[sport, row[2]] = None
    return list(found)


def _per_season(src: Run, table: str) -> Iterator[list[dict[str, Any]]]:
    with src.bridge.using():
        state = src.state()
        # Seasons that answered 404 (a competition without standings) are not asked again;
        # squads are read once per season.
        skip: dict[str, int] = state.setdefault("skip", {}).setdefault(table, {})
        seen = loaded_digests(state, table)
        jobs = [(sport, season) for sport, season in _seasons(src) if season not in skip]

        async def read(sport: str, season: str) -> list[Row] | None:
            try:
                if table == "standings":
                    packets = await src.client.with_json.standings.get(sport, season_id=season)
                    return [standings_row(sport, season, p, json) for p, json in packets]
                squads = await src.client.with_json.squads.list(sport, season_id=season).collect()
                return [squad_row(sport, season, s, json) for s, json in squads]
            except NotFoundError:
                return None

        key = (0, 1, 2) if table == "standings" else (0,)
        for season, rows in src.fetched(table, jobs, read):
            if rows is None or table == "squads":
                skip[season] = 1
            out = new_or_changed(table, seen, rows or (), key)
            if out:
                yield out


def _events(src: Run) -> Iterator[list[dict[str, Any]]]:
    with src.bridge.using():

        async def read() -> list[Row]:
            events = src.client.with_json.events
            live = {e.id for e, _ in await events.list(live=True).collect()}
            return [event_row(e, json, e.id in live) for e, json in await events.list().collect()]

        out = new_or_changed("events", loaded_digests(src.state(), "events"), src.bridge.call(read))
        if out:
            yield out


async def _tournaments(client: Client) -> list[Row]:
    return [
        tournament_row(t, json)
        for t, json in await client.with_json.snooker.tournaments().collect()
    ]


def _snooker_tournaments(src: Run) -> Iterator[list[dict[str, Any]]]:
    with src.bridge.using():
        rows = src.once("tournaments", _tournaments, src.client)
        out = new_or_changed(
            "snooker_tournaments", loaded_digests(src.state(), "snooker_tournaments"), rows
        )
        if out:
            yield out


MATCHES_DAYS = 365
"""Matches are read for the snooker tournaments that ended at most this many days ago
(and those to come); each tournament that is over is read once."""


def _snooker_matches(src: Run) -> Iterator[list[dict[str, Any]]]:
    with src.bridge.using():
        state = src.state()
        final: dict[str, int] = state.setdefault("final", {}).setdefault("snooker", {})
        seen = loaded_digests(state, "snooker_matches")
        tournaments = src.once("tournaments", _tournaments, src.client)
        now = utc_text(_now(src.client)) or ""
        back = utc_text(_now(src.client, -MATCHES_DAYS * 86400)) or ""
        ended = {str(t[0]): bool(t[4] and t[4] < now) for t in tournaments}
        jobs = [
            ("snooker", str(t[0]))
            for t in tournaments
            if str(t[0]) not in final and not (t[4] and t[4] < back)
        ]

        async def read(_: str, tid: str) -> list[Row]:
            matches = await src.client.with_json.snooker.matches(int(tid)).collect()
            return [(m.match_id, int(tid), m.round_number, json.decode()) for m, json in matches]

        for tid, rows in src.fetched("snooker_matches", jobs, read):
            out = new_or_changed("snooker_matches", seen, rows)
            if ended[tid]:
                final[tid] = 1
            if out:
                yield out


def _now(client: Client, plus: float = 0.0) -> dt.datetime:
    """The service's time (its last ``Date``), else this machine's, plus ``plus`` seconds."""
    now = client.server_time()
    return dt.datetime.fromtimestamp((now if now is not None else time.time()) + plus, dt.UTC)


# ----------------------------------------------------------------- the source


Maker = Callable[[Run], Iterator[list[dict[str, Any]]]]


def _makers(*, events: bool, snooker: bool) -> list[tuple[str, Maker]]:
    """Each table the source loads and the generator of its resource."""
    makers: list[tuple[str, Maker]] = [
        ("fixtures", _fixtures),
        ("actions", _actions),
        ("statistics", _statistics),
        ("standings", lambda src: _per_season(src, "standings")),
        ("squads", lambda src: _per_season(src, "squads")),
    ]
    if events:
        makers.append(("events", _events))
    if snooker:
        makers += [
            ("snooker_tournaments", _snooker_tournaments),
            ("snooker_matches", _snooker_matches),
        ]
    return makers


def _client(client_or_settings: Client | Settings) -> Client:
    if isinstance(client_or_settings, Client):
        return client_or_settings
    s = client_or_settings
    kwargs = {f.name: getattr(s, f.name) for f in fields(s)}
    return Client(kwargs.pop("base_url"), **kwargs)


def sports_source(
    client_or_settings: Client | Settings,
    sports: Sequence[str] = DEFAULT_SPORTS,
    *,
    concurrency: int = 8,
    page_size: int = 1000,
    events: bool | None = None,
    snooker: bool | None = None,
    progress: Progress | None = None,
    name: str = "asyncsports",
) -> DltSource:
    """A dlt source of the service: fixtures of ``sports``, the started ones' actions and
    statistics, their seasons' standings and squads, live stream events and snooker lists.

    ``client_or_settings``: a :class:`~asyncsports.Client` (open on the running event loop
    when made inside one; else not open: the source opens it for each run, on a loop of
    its own) or its :class:`Settings` (``client.settings``). Its rate limit and
    connection count hold for the whole source. ``concurrency``: fixtures fetched at once;
    ``page_size``: fixtures per listing page. ``events``: the live stream events (default:
    when the client has a streaming address and credentials); ``snooker``: the snooker
    proxy's tournaments and matches (default: when ``snooker`` is among ``sports``).
    ``progress`` hears of each phase as :class:`asyncsports.backfill.Backfill`'s does.
    ``name`` names the source, its schema and its state.
    """
    dlt = need("dlt", "a dlt source")
    if concurrency < 1:
        raise ValueError(f"concurrency: must be >= 1, got {concurrency}")
    client = _client(client_or_settings)
    s = client.settings
    src = Run(Bridge(client, running_loop()), sports, concurrency, page_size, progress)
    if events is None:
        events = bool(s.streaming_url and s.streaming_credentials)
    if snooker is None:
        snooker = "snooker" in src.sports
    makers = _makers(events=events, snooker=snooker)

    def resources() -> list[Any]:
        return [
            dlt.resource(
                make(src),
                name=table,
                write_disposition="merge",
                primary_key=list(TABLES[table].key),
                columns=columns(TABLES[table]),
            )
            for table, make in makers
        ]

    source: DltSource = dlt.source(resources, name=name, max_table_nesting=0)()
    return source
