"""Where the backfill and the mirror keep what they fetch: SQLite or PostgreSQL.

Everything that speaks SQL lives in this package, in one pattern: a concern's
engine-neutral part in ``_<concern>.py``, each engine's part beside it in
``_<concern>_sqlite.py`` and ``_<concern>_pg.py``, and what every concern shares in
modules of its own. The factories that choose an engine are here (:func:`engine`,
:func:`open_mirror`, :func:`open`); nothing else picks one.

- ``_types``: the engine-neutral types, protocols and constants (``Unit``, ``JobState``,
  ``Engine``, ``Write``, ``RowChange``, ``MirrorStore``, ``Lease``, ``Seat``, timeouts).
- ``_schema``: every table, once, and each engine's DDL; ``_rows``: records as rows;
  ``_urls``: database names.
- ``_sql``: every statement written once for both engines (``?`` placeholders,
  translated for PostgreSQL), apart only where the engines differ (COPY, NOTIFY).
- ``_sqlite``: a SQLite file (opened, checked, migrated; its errors and transactions) and
  the one worker thread that owns a connection, for the writer, the mirror, the reader
  and the lease; ``_pg``: a PostgreSQL connection (opened, checked, created; its errors)
  and :class:`PgLink`, the one reconnect rule, which the lease uses too.
- ``_writer``: the batching :class:`Writer`; ``_backfill_sqlite`` / ``_backfill_pg``: the
  backfill's sinks and writer engines; ``_jobs``: the sharded workers' job tables
  (PostgreSQL only).
- ``_mirror`` / ``_mirror_sqlite`` / ``_mirror_pg``: the mirror and its change log;
  ``_changes``: the one walk of a change log, for the change feed and the bus publisher.
- ``_lease`` / ``_lease_sqlite`` / ``_lease_pg``: the mirror's writer lease.
- ``_reader`` / ``_reader_sqlite`` / ``_reader_pg`` and ``export``: reading a store, and
  the Parquet export on it.

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

from asyncsports.store._backfill_pg import PgEngine
from asyncsports.store._backfill_sqlite import SqliteEngine
from asyncsports.store._changes import change_batches
from asyncsports.store._jobs import (
    MAX_ATTEMPTS,
    JobProgress,
    ShardEngine,
    Shards,
    StoredUnit,
    UnitBatch,
)
from asyncsports.store._lease import Election
from asyncsports.store._mirror_pg import PgMirror
from asyncsports.store._mirror_sqlite import SqliteMirror
from asyncsports.store._mirror_sqlite import Store as MirrorFile
from asyncsports.store._pg import PgLink
from asyncsports.store._reader import Reader
from asyncsports.store._reader_pg import PgReader
from asyncsports.store._reader_sqlite import SqliteReader
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
    MirrorStore,
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
    "Contents",
    "Deposed",
    "Election",
    "Engine",
    "EventRow",
    "FixtureRow",
    "JobProgress",
    "JobState",
    "Lease",
    "MirrorFile",
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
    "open_mirror",
    "redact_url",
    "squad_row",
    "standings_row",
    "statistics_row",
    "tournament_row",
]


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


async def open_mirror(
    db: str | Path,
    *,
    patience: float = PATIENCE,
    connect_timeout: float = CONNECT_TIMEOUT,
    fence: Lease | None = None,
) -> MirrorStore:
    """Open (or create) the mirror database ``db``: a SQLite path or a ``postgresql://``
    URL. PostgreSQL: a database never reached fails within ``connect_timeout``; one lost
    later is waited for, for up to ``patience`` seconds, and each call is done again.
    With a standby's ``fence`` (its lease), on either engine, each write first checks
    the lease is ours (:class:`Deposed` else) and writes nothing else."""
    if is_postgres(db):
        return await PgMirror.open(
            str(db), patience=patience, connect_timeout=connect_timeout, fence=fence
        )
    return await SqliteMirror.open(Path(db), fence=fence)


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
    reader: Reader
    if is_postgres(db):
        reader = await PgReader.open(str(db), connect_timeout)
    else:
        reader = await SqliteReader.open(Path(db))
    try:
        yield reader
    finally:
        await reader.close()
