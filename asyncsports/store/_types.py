"""What store/ means, apart from either engine: its types, protocols and constants.

Every other module of the package imports these from here: the engine modules
(``*_sqlite``, ``*_pg``) implement the protocols, the engine-neutral ones use them, and
neither kind defines a value the other needs. Pure: no I/O.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol, TypeVar

import msgspec

from asyncsports._wire import defaults
from asyncsports._wire.bus import change_json
from asyncsports.errors import SinkError
from asyncsports.store._schema import HEALTH_TABLES, MIRROR_TABLES, RESOURCE_TABLES

__all__ = [
    "CHUNK",
    "CONNECT_TIMEOUT",
    "JOIN_TIMEOUT",
    "KEYS",
    "LINGER",
    "PATIENCE",
    "POLL",
    "TABLES",
    "ChangeLine",
    "Contents",
    "Deposed",
    "Engine",
    "JobState",
    "Lease",
    "NotYet",
    "Row",
    "RowChange",
    "Unit",
    "Write",
    "deposed",
    "now_text",
    "time_text",
]

B = TypeVar("B")
Row = tuple[Any, ...]
"""A table's row: plain values in the columns' order (see :mod:`asyncsports.store._schema`)."""

PATIENCE = defaults.PATIENCE
"""Seconds a PostgreSQL database once reached is waited for while it is unreachable."""

CONNECT_TIMEOUT = defaults.CONNECT_TIMEOUT
"""Seconds to connect to a PostgreSQL database (TCP, TLS, logging in) before giving up."""

LINGER = 0.05
"""Seconds the writer gathers items into one transaction after the first arrives: a
stopped run loses at most this much fetched work (refetched when it resumes)."""

JOIN_TIMEOUT = 5.0
"""Seconds a cancelled run waits for its engine to abandon its work (it takes
milliseconds; only SQLite waiting on another process's lock takes longer)."""

POLL = 0.05
"""Seconds between looks at a SQLite file's change feed by a follower (no NOTIFY there)."""

CHUNK = 50_000
"""Rows a reader reads at a time."""


def time_text(at: dt.datetime) -> str:
    """``at`` (aware) as ``changes.committed_at`` keeps it (ISO 8601 UTC, microseconds)."""
    return at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def now_text() -> str:
    """This moment as ``changes.committed_at`` keeps it."""
    return time_text(dt.datetime.now(dt.UTC))


_MIRRORED = (*RESOURCE_TABLES, *MIRROR_TABLES, *HEALTH_TABLES)
TABLES: dict[str, tuple[str, ...]] = {t.name: t.names for t in _MIRRORED}
"""The mirror's tables and their columns, in order; each row keeps the record's JSON."""
KEYS: dict[str, tuple[str, ...]] = {t.name: t.key for t in _MIRRORED}
"""Each table's primary key: what makes a row the same record on the next write."""


# ---------------------------------------------------------------------------- the backfill


@dataclass(frozen=True, slots=True)
class Unit:
    """One checkpointed piece of work.

    ``rows`` go into ``table`` (upserted by primary key); with ``replace`` set to a fixture
    id, that fixture's earlier rows in ``table`` are deleted first, so the unit leaves
    exactly what the service returned. ``members`` are fixture ids to add to the job.
    A unit with no rows still records its checkpoint (a fixture without statistics).
    """

    name: str
    table: str
    rows: Sequence[tuple[Any, ...]] = ()
    replace: str | None = None
    members: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class JobState:
    """Where a job stands when a run starts.

    ``resumed`` is True when the job's last run did not finish; ``done`` then names its
    checkpointed units and ``fixtures`` lists ``(id, sport, status, deleted)`` of the
    fixtures its listings have returned so far. A fresh run gets empty ones.
    """

    resumed: bool
    done: frozenset[str] = frozenset()
    fixtures: Sequence[tuple[str, str, str | None, bool]] = field(default=())


class Engine(Protocol[B]):
    """A database the writer (:class:`~asyncsports.store._writer.Writer`) writes batches
    of ``B`` (units, or the workers' items) into. Its methods are called one at a time,
    from one task."""

    async def open(self) -> JobState:
        """Open the database and begin the job's run; where the job stands."""
        ...

    async def write(self, batch: Sequence[B]) -> Sequence[B]:
        """Write ``batch`` in one transaction; returns what was written of it."""
        ...

    async def finish(self) -> None:
        """Mark the job's run finished."""
        ...

    async def counts(self) -> dict[str, int]:
        """Rows per table."""
        ...

    async def close(self) -> None:
        """Close the database (after :meth:`abort`: wait until it is let go)."""
        ...

    def abort(self) -> None:
        """Stop at once, from any task: what was under way is rolled back."""
        ...


# ------------------------------------------------------------------------------ the mirror


@dataclass(frozen=True, slots=True)
class Write:
    """Rows for one table. ``scope``: a ``(column, value)`` whose other rows are deleted
    (the rows are then all there is for it: a fixture's actions)."""

    table: str
    rows: Sequence[Row]
    scope: tuple[str, Any] | None = None


class ChangeLine(NamedTuple):
    """A line of ``changes`` as stored: ``key`` and ``row`` as their JSON texts,
    ``committed_at`` as text (ISO 8601 UTC); :meth:`decoded` is the :class:`RowChange`."""

    seq: int
    op: str
    table: str
    key: str
    row: str
    committed_at: str

    def decoded(self) -> RowChange:
        """The change this line logs, its key and row decoded."""
        key = tuple(json.loads(self.key))
        return RowChange(
            self.seq, self.op, self.table, key, json.loads(self.row), self.committed_at
        )


@dataclass(frozen=True, slots=True)
class RowChange:
    """One committed change of a row of the mirror: ``seq`` (the cursor), ``op`` (insert,
    update or delete), ``table``, ``key`` (the key columns), ``row`` (every column;
    ``row["json"]`` is the record's wire JSON) and ``committed_at`` (ISO 8601 UTC)."""

    seq: int
    op: str
    table: str
    key: tuple[Any, ...]
    row: dict[str, Any]
    committed_at: str

    @property
    def record(self) -> Any:
        """The record as the service sent it, decoded (None for a deleted row)."""
        text = self.row.get("json")
        return json.loads(text) if text is not None else None

    def as_json(self) -> bytes:
        """The change as one line of JSON, as ``asyncsports changes`` prints it and a bus
        carries it: :meth:`as_dict` with the record as stored."""
        key = msgspec.json.encode(list(self.key)).decode()
        return change_json(
            self.seq, self.op, self.table, key, self.row.get("json"), self.committed_at
        )

    def as_dict(self) -> dict[str, Any]:
        """The change as one JSON object (:meth:`as_json`, decoded)."""
        return {
            "seq": self.seq,
            "op": self.op,
            "table": self.table,
            "key": list(self.key),
            "committed_at": self.committed_at,
            "record": self.record,
        }


Contents = Literal["mirror", "records", "nothing"]
"""What a database holds, as :meth:`MirrorStore.contents` tells it."""


# ------------------------------------------------------------------------------- the lease


class NotYet(SinkError):
    """A reader's database holds none of the store's tables yet: its writer (the mirror)
    has not made them. A change log reads it as empty until then."""


class Deposed(SinkError):
    """This process's lease is gone: another process writes the mirror now (a
    :class:`~asyncsports.errors.SinkError`: the mirror stops at once, as for any)."""


@dataclass(frozen=True, slots=True)
class Lease:
    """A lease held: its ``name``, this holding's ``term`` and the ``holder`` it names."""

    name: str
    term: int
    holder: str


def deposed(lease: Lease) -> Deposed:
    """What a fence raises when ``lease`` is no longer the caller's."""
    return Deposed(
        f"the mirror's lease {lease.name!r} (term {lease.term}) is over: "
        "another process writes it now"
    )
