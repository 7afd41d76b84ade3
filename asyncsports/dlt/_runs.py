"""The dlt source's tables and what one run shares: the listings, the state as the run
began, the digests that tell a changed record (see :mod:`asyncsports.dlt`)."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from asyncsports._optional import need
from asyncsports.backfill import Progress
from asyncsports.dlt._bridge import Bridge
from asyncsports.errors import NotFoundError
from asyncsports.store._rows import Row, fixture_row
from asyncsports.store._schema import MIRROR_TABLES, RESOURCE_TABLES, Column, Table

__all__ = ["TABLES"]

T = TypeVar("T")

_SNOOKER_MATCHES = Table(
    "snooker_matches",
    (
        Column("match_id", "int", null=False),
        Column("tournament_id", "int", null=False),
        Column("round_number", "int"),
        Column("json", "json", null=False),
    ),
    ("match_id",),
)

TABLES: dict[str, Table] = {t.name: t for t in (*RESOURCE_TABLES, *MIRROR_TABLES, _SNOOKER_MATCHES)}
"""Each table the source loads, with its columns and primary key."""

_DLT_TYPE = {"text": "text", "int": "bigint", "flag": "bool", "time": "timestamp",
             "json": "json", "real": "double"}  # fmt: skip
_SETTLED = frozenset({"completed"})


def _columns(table: Table) -> list[dict[str, Any]]:
    return [{"name": c.name, "data_type": _DLT_TYPE[c.kind], "nullable": c.null}
            for c in table.columns]  # fmt: skip


def _record(table: Table, row: Row) -> dict[str, Any]:
    out = dict(zip(table.names, row, strict=True))
    for c in table.columns:
        if c.kind == "flag":
            out[c.name] = bool(out[c.name])
    return out


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def _settled(status: str | None, deleted: bool) -> bool:
    return deleted or (status or "").lower() in _SETTLED


# ----------------------------------------------------------------- the runs


@dataclass
class Listed:
    """One sport's fixtures as listed this run: rows, and the day the listing began."""

    rows: list[Row]
    since: str | None


class Source:
    """What the resources share: the client's bridge, the options, the state as the run began."""

    def __init__(self, bridge: Bridge, sports: Sequence[str], concurrency: int,
                 page_size: int, progress: Progress | None) -> None:  # fmt: skip
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
        start = self.memo.setdefault("start", _copy(self.state().get("since", {})))
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
            sport, date_from=since, size=self.page_size, concurrency=2
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


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    return value


def _seen(state: dict[str, Any], table: str) -> dict[str, Any]:
    """The digests of ``table``'s records as last loaded, by key."""
    found: dict[str, Any] = state.setdefault("seen", {}).setdefault(table, {})
    return found


def _changed(
    table: str, seen: dict[str, Any], rows: Sequence[Row], key: Sequence[int] = (0,)
) -> list[dict[str, Any]]:
    """The records of ``rows`` new or changed since last loaded (``seen`` is updated):
    ``key`` the columns that name a record."""
    out = []
    t = TABLES[table]
    for row in rows:
        k, d = "|".join(str(row[i]) for i in key), _digest(row[-1])
        if seen.get(k) != d:
            seen[k] = d
            out.append(_record(t, row))
    return out
