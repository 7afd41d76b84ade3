"""Where the backfill and the mirror keep what they fetch: SQLite or PostgreSQL.

Everything that speaks SQL lives in this package: one description of every table
(``_schema``), one set of row builders (``_rows``), the engines, and one batching
:class:`Writer` over them. The backfill (:mod:`asyncsports.backfill`), the sharded workers,
the mirror (:mod:`asyncsports.sync`) and the Parquet export (:mod:`asyncsports.store.export`)
are built on it, through the names below.

::

    async with asyncsports.store.open("sports.sqlite") as store:   # or a postgresql:// URL
        print(store.version, await store.counts())
"""

from __future__ import annotations

from pathlib import Path

from asyncsports.store._jobs import (
    MAX_ATTEMPTS,
    JobProgress,
    ShardEngine,
    Shards,
    StoredUnit,
    UnitBatch,
)
from asyncsports.store._lease import Deposed, Election, Lease
from asyncsports.store._mirror import KEYS as MIRROR_KEYS
from asyncsports.store._mirror import TABLES as MIRROR_COLUMNS
from asyncsports.store._mirror import MirrorStore, RowChange, Write, open_mirror
from asyncsports.store._mirror import Store as MirrorFile
from asyncsports.store._pg import (
    CONNECT_TIMEOUT,
    PATIENCE,
    PgEngine,
    PgLink,
    is_postgres,
    redact_url,
)
from asyncsports.store._reader import CHUNK, Reader, open
from asyncsports.store._rows import (
    ActionRows,
    Row,
    action_row,
    event_row,
    fixture_row,
    squad_row,
    standings_row,
    statistics_row,
    tournament_row,
)
from asyncsports.store._schema import SCHEMA_VERSION
from asyncsports.store._sqlite import JobState, Unit
from asyncsports.store._writer import JOIN_TIMEOUT, LINGER, Engine, SqliteEngine, Writer

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
    "Deposed",
    "Election",
    "Engine",
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
    "engine",
    "event_row",
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
        return PgEngine(str(db), job, restart=restart, patience=patience,
                        connect_timeout=connect_timeout)  # fmt: skip
    return SqliteEngine(Path(db), job, restart=restart)
