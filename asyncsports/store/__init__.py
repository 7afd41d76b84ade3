"""Where the backfill and the mirror keep what they fetch: SQLite or PostgreSQL.

Everything that speaks SQL lives in this package: one description of every table
(``_schema``), one set of row builders (``_rows``), and the engines. The backfill
(:mod:`asyncsports.backfill`), the sharded workers, the mirror (:mod:`asyncsports.sync`) and
the Parquet export (:mod:`asyncsports.store.export`) are built on it.
"""

from __future__ import annotations

from asyncsports.store._lease import Deposed, Election, Lease
from asyncsports.store._mirror import KEYS as MIRROR_KEYS
from asyncsports.store._mirror import TABLES as MIRROR_COLUMNS
from asyncsports.store._mirror import Change, MirrorStore, Row, Write, open_mirror
from asyncsports.store._mirror import Store as MirrorFile
from asyncsports.store._pg import is_postgres, redact_url
from asyncsports.store._rows import (
    action_row,
    event_row,
    fixture_row,
    squad_row,
    standings_row,
    statistics_row,
    tournament_row,
)

__all__ = [
    "MIRROR_COLUMNS",
    "MIRROR_KEYS",
    "Change",
    "Deposed",
    "Election",
    "Lease",
    "MirrorFile",
    "MirrorStore",
    "Row",
    "Write",
    "action_row",
    "event_row",
    "fixture_row",
    "is_postgres",
    "open_mirror",
    "redact_url",
    "squad_row",
    "standings_row",
    "statistics_row",
    "tournament_row",
]
