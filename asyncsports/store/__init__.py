"""Where the backfill and the mirror keep what they fetch: SQLite or PostgreSQL.

Everything that speaks SQL lives in this package. A job is written once, over a
:class:`~asyncsports.store._dialect.Dialect` (SQLite's or PostgreSQL's, chosen by the
factories here: :func:`engine` (:class:`SqliteEngine`, :class:`PgEngine`),
:func:`open_mirror`, :func:`open_changes`, :func:`open`; nothing else picks one); what
every job shares has a module of its own.

- ``_dialect``: what a job asks of an engine (``Dialect`` and its ``Tx``; the reader's
  ``Snapshot``; the lease's ``Seat``); ``_sqlite`` and ``_pg``: the two engines (a file
  or a database opened, checked, migrated; their errors, transactions and connection
  rules, and their SQL where it differs).
- ``_types``: the engine-neutral types, protocols and constants (``Unit``, ``JobState``,
  ``Engine``, ``Write``, ``RowChange``, ``Lease``, timeouts).
- ``_schema``: every table, once, and each engine's DDL; ``_rows``: records as rows;
  ``_urls``: database names; ``_sql``: every statement both engines run, written once.
- ``_mirror``: the mirror's :class:`MirrorStore` and its :class:`ChangeLog`;
  ``_changes``: the one walk of a change log, for the change feed and the bus publisher.
- ``_writer``: the batching :class:`Writer`; ``_backfill``: the backfill's job and its
  writer engines; ``_jobs``: the sharded workers' job tables (PostgreSQL only).
- ``_lease``: the mirror's writer lease, its statements written once in a seat's words.
- ``_reader`` and ``export``: reading a store (a snapshot of either dialect), and the
  Parquet export on it.

The backfill (:mod:`asyncsports.backfill`), the sharded workers, the mirror
(:mod:`asyncsports.sync`) and the Parquet export (:mod:`asyncsports.store.export`) are
built on the names below.

::

    async with asyncsports.store.open("sports.sqlite") as store:   # or a postgresql:// URL
        print(store.version, await store.counts())
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from asyncsports.store._backfill import BackfillEngine
from asyncsports.store._changes import change_batches
from asyncsports.store._dialect import Dialect, Snapshot
from asyncsports.store._jobs import (
    MAX_ATTEMPTS,
    JobProgress,
    ShardEngine,
    Shards,
    StoredUnit,
    UnitBatch,
)
from asyncsports.store._lease import Election
from asyncsports.store._mirror import ChangeLog, MirrorStore
from asyncsports.store._pg import PgDialect, PgLink, PgSnapshot
from asyncsports.store._reader import Reader
from asyncsports.store._rows import (
    ActionRows,
    EventRow,
    FixtureRow,
    Row,
    action_row,
    event_row,
    feed_health_row,
    fixture_row,
    squad_row,
    standings_row,
    statistics_row,
    tournament_row,
)
from asyncsports.store._schema import SCHEMA_VERSION
from asyncsports.store._sqlite import SqliteDialect, SqliteSnapshot
from asyncsports.store._types import (
    CHUNK,
    CONNECT_TIMEOUT,
    JOIN_TIMEOUT,
    LINGER,
    PATIENCE,
    ChangeLine,
    Contents,
    Deposed,
    Engine,
    JobState,
    Lease,
    RowChange,
    Unit,
    Write,
)
from asyncsports.store._types import KEYS as MIRROR_KEYS
from asyncsports.store._types import TABLES as MIRROR_COLUMNS
from asyncsports.store._urls import is_postgres, redact_url
from asyncsports.store._writer import Writer

__all__ = [
    "CHUNK",
    "CONNECT_TIMEOUT",
    "JOIN_TIMEOUT",
    "LINGER",
    "MAX_ATTEMPTS",
    "MIRROR_COLUMNS",
    "MIRROR_KEYS",
    "PATIENCE",
    "SCHEMA_VERSION",
    "ActionRows",
    "ChangeLine",
    "ChangeLog",
    "Contents",
    "Deposed",
    "Election",
    "Engine",
    "EventRow",
    "FixtureRow",
    "JobProgress",
    "JobState",
    "Lease",
    "MirrorStore",
    "PgEngine",
    "PgLink",
    "Reader",
    "Row",
    "RowChange",
    "ShardEngine",
    "Shards",
    "SqliteEngine",
    "StoredUnit",
    "Unit",
    "UnitBatch",
    "Write",
    "Writer",
    "action_row",
    "change_batches",
    "engine",
    "event_row",
    "feed_health_row",
    "fixture_row",
    "is_postgres",
    "open",
    "open_changes",
    "open_mirror",
    "redact_url",
    "squad_row",
    "standings_row",
    "statistics_row",
    "tournament_row",
]


class SqliteEngine(BackfillEngine):
    """The backfill's engine for job ``job`` of the SQLite file at ``path``."""

    def __init__(self, path: Path, job: str, *, restart: bool = False) -> None:
        dialect = SqliteDialect(Path(path), thread="asyncsports-writer", interruptible=True)
        super().__init__(dialect, job, restart=restart)


class PgEngine(BackfillEngine):
    """The backfill's engine for job ``job`` of the PostgreSQL database at ``url`` (a
    database never reached fails within ``connect_timeout``; one that goes away is
    waited for up to ``patience`` seconds)."""

    def __init__(
        self,
        url: str,
        job: str,
        *,
        restart: bool = False,
        patience: float = PATIENCE,
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> None:
        dialect = PgDialect(url, patience=patience, connect_timeout=connect_timeout, bulk=True)
        super().__init__(dialect, job, restart=restart)
        self.link = dialect.link

    @property
    def reconnects(self) -> int:
        """Attempts made again after the database was lost."""
        return self.link.reconnects


def engine(
    db: str | Path,
    job: str,
    *,
    restart: bool = False,
    patience: float = PATIENCE,
    connect_timeout: float = CONNECT_TIMEOUT,
) -> Engine[Unit]:
    """The :class:`Writer`'s engine for job ``job`` of ``db``: a SQLite file (a thread of
    its own), or a ``postgresql://`` URL (reconnecting for up to ``patience`` seconds to
    a database it had reached; one never reached fails within ``connect_timeout``)."""
    if is_postgres(db):
        return PgEngine(
            str(db), job, restart=restart, patience=patience, connect_timeout=connect_timeout
        )
    return SqliteEngine(Path(db), job, restart=restart)


def _connection(
    db: str | Path, *, create: bool, patience: float = PATIENCE, connect_timeout: float
) -> Dialect:
    if is_postgres(db):
        return PgDialect(str(db), patience=patience, connect_timeout=connect_timeout, create=create)
    return SqliteDialect(Path(db), create=create)


async def open_mirror(
    db: str | Path,
    *,
    patience: float = PATIENCE,
    connect_timeout: float = CONNECT_TIMEOUT,
    fence: Lease | None = None,
) -> MirrorStore:
    """Open (or create) the mirror database ``db``, to write it: a SQLite path or a
    ``postgresql://`` URL. PostgreSQL: a database never reached fails within
    ``connect_timeout``; one lost later is waited for, for up to ``patience`` seconds, and
    each call is done again. With a standby's ``fence`` (its lease), on either engine,
    each write first checks the lease is ours (:class:`Deposed` else) and writes nothing
    else."""
    dialect = _connection(db, create=True, patience=patience, connect_timeout=connect_timeout)
    await dialect.open()
    return MirrorStore(dialect, fence)


async def open_changes(
    db: str | Path, *, patience: float = PATIENCE, connect_timeout: float = CONNECT_TIMEOUT
) -> ChangeLog:
    """Open the change log of the mirror database ``db`` (as :func:`open_mirror`) to read
    it and keep consumers' cursors in it. A reader never creates a database, nor its
    tables: a SQLite file that is not there is refused (SinkError); one whose mirror has
    not made its tables yet (an empty file, a new PostgreSQL database) reads as empty,
    and a follower waits for the mirror's first commit."""
    dialect = _connection(db, create=False, patience=patience, connect_timeout=connect_timeout)
    await dialect.open()
    return ChangeLog(dialect)


@contextlib.asynccontextmanager
async def open(
    db: str | Path, *, connect_timeout: float = CONNECT_TIMEOUT
) -> AsyncIterator[Reader]:
    """Open the store ``db`` (a SQLite file, or a ``postgresql://`` URL) to read it::

        async with asyncsports.store.open("sports.sqlite") as store:
            print(store.version, await store.counts())
            async for rows in store.rows("fixtures"):
                ...

    Nothing is written to it. A file that does not exist, is not a store, or was
    written by a newer asyncsports is refused (SinkError); so is a database that cannot
    be reached within ``connect_timeout`` seconds.
    """
    snapshot: Snapshot = (
        PgSnapshot(str(db), connect_timeout) if is_postgres(db) else SqliteSnapshot(Path(db))
    )
    await snapshot.open()
    reader = Reader(snapshot)
    try:
        yield reader
    finally:
        await reader.close()
