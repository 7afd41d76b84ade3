"""Every statement of the store that both engines run, written once.

Statements use ``?`` placeholders, SQLite's; :func:`pg` numbers them for PostgreSQL
(``$1``, ``$2``...). Both engines get the same values apart from time: SQLite keeps it as
ISO 8601 text, PostgreSQL as ``timestamptz`` (each engine passes its own ``now``). Where
the engines differ, the engine module writes its own: PostgreSQL's COPY into staging
tables, its arrays (``unnest``) that send a batch in one statement, and its NOTIFY.
:func:`upsert` is the one builder of ``INSERT ... ON CONFLICT`` for every table and
engine. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from asyncsports.store._schema import (
    ALL_TABLES,
    FEED_TABLES,
    MIRROR_TABLES,
    RESOURCE_TABLES,
    Table,
    pg_convert,
)

__all__ = [
    "CHANGES",
    "CONTENTS",
    "COUNT_ACTIONS",
    "CURSOR",
    "JOB_BEGIN",
    "JOB_CHECKPOINT",
    "JOB_DONE",
    "JOB_FINISH",
    "JOB_FIXTURES",
    "JOB_FORGET",
    "JOB_MEMBER",
    "JOB_RUN",
    "MARK",
    "MARKS",
    "MIRROR_FIXTURES",
    "POSITION",
    "SAVE_CURSOR",
    "SET_POSITION",
    "UNMARK",
    "by_key",
    "counts",
    "delete_key",
    "has",
    "pg",
    "rows",
    "staged",
    "upsert",
]

TABLES: dict[str, Table] = {t.name: t for t in ALL_TABLES}

_MARK = re.compile(r"\?")


def pg(sql: str) -> str:
    """``sql`` with its ``?`` placeholders numbered for PostgreSQL (``$1``, ``$2``...).

    Our statements hold no ``?`` in a literal or a name, so each one is a placeholder."""
    n = 0

    def number(_: re.Match[str]) -> str:
        nonlocal n
        n += 1
        return f"${n}"

    return _MARK.sub(number, sql)


def upsert(table: Table, source: str = "", *, changed: bool = False, returning: str = "") -> str:
    """Insert rows into ``table`` from ``source`` (one row of ``?`` in column order, unless
    given), or replace the row of the same primary key. ``changed``: only a row whose
    content differs is replaced (PostgreSQL's row comparison, which SQLite lacks)."""
    names = ", ".join(table.names)
    rest = [c for c in table.columns if c.name not in table.key]
    source = source or f"VALUES ({', '.join('?' * len(table.columns))})"
    sql = f"INSERT INTO {table.name} ({names}) {source} ON CONFLICT ({', '.join(table.key)}) "
    if not rest:
        return sql + "DO NOTHING" + (f" RETURNING {returning}" if returning else "")
    sql += "DO UPDATE SET " + ", ".join(f"{c.name} = excluded.{c.name}" for c in rest)
    if changed:
        # json has no equality operator: its text is compared (the bytes as sent).
        old = ", ".join(f"{table.name}.{c.name}{'::text' * (c.kind == 'json')}" for c in rest)
        new = ", ".join(f"excluded.{c.name}{'::text' * (c.kind == 'json')}" for c in rest)
        sql += f" WHERE ROW({old}) IS DISTINCT FROM ROW({new})"
    return sql + (f" RETURNING {returning}" if returning else "")


def staged(table: Table) -> str:
    """PostgreSQL: move the rows COPYed into ``table``'s staging table into it."""
    values = ", ".join(pg_convert(c) for c in table.columns)
    return upsert(table, f"SELECT {values} FROM stage_{table.name}")


def counts(tables: Iterable[str]) -> str:
    """``(table, rows)`` of each table, in one statement."""
    return " UNION ALL ".join(f"SELECT '{t}', count(*) FROM {t}" for t in tables)


def rows(table: Table, text_order: str = "") -> str:
    """Every row of ``table`` by key; ``text_order`` is the collation (``COLLATE "C"``)
    that sorts text keys by their bytes, as SQLite does without one."""
    kinds = {c.name: c.kind for c in table.columns}
    order = ", ".join(f"{k} {text_order}".rstrip() if kinds[k] == "text" else k for k in table.key)
    return f"SELECT {', '.join(table.names)} FROM {table.name} ORDER BY {order}"


def by_key(table: Table) -> str:
    """The row of ``table`` whose key columns are ``?``."""
    where = " AND ".join(f"{k} = ?" for k in table.key)
    return f"SELECT {', '.join(table.names)} FROM {table.name} WHERE {where}"


def delete_key(table: Table) -> str:
    """Delete the row of ``table`` whose key columns are ``?``."""
    return f"DELETE FROM {table.name} WHERE " + " AND ".join(f"{k} = ?" for k in table.key)


def has(table: str, column: str) -> str:
    """Whether ``table`` holds a row with ``column = ?`` (ValueError: no such column; the
    names go into the SQL, so they are checked against the schema)."""
    if table not in TABLES or column not in TABLES[table].names:
        raise ValueError(f"{table} has no column {column}")
    return f"SELECT EXISTS (SELECT 1 FROM {table} WHERE {column} = ?)"


# The backfill's jobs (asyncsports.store._backfill).
JOB_RUN = "SELECT finished_at FROM jobs WHERE job = ?"
JOB_DONE = "SELECT unit FROM checkpoints WHERE job = ?"
JOB_FIXTURES = (
    "SELECT f.id, f.sport, f.status, f.deleted FROM job_fixtures j "
    "JOIN fixtures f ON f.id = j.fixture_id WHERE j.job = ? ORDER BY j.{order}"
)
"""Format ``order`` with the column of insertion order: SQLite's ``rowid``, PostgreSQL's
``position`` (see :class:`~asyncsports.store._schema.Table`)."""
JOB_FORGET = ("DELETE FROM checkpoints WHERE job = ?", "DELETE FROM job_fixtures WHERE job = ?")
JOB_BEGIN = (
    "INSERT INTO jobs (job, started_at, finished_at) VALUES (?, ?, NULL) "
    "ON CONFLICT (job) DO UPDATE SET started_at = excluded.started_at, finished_at = NULL"
)
JOB_FINISH = "UPDATE jobs SET finished_at = ? WHERE job = ?"
JOB_MEMBER = upsert(TABLES["job_fixtures"])
JOB_CHECKPOINT = upsert(TABLES["checkpoints"])

# The mirror (asyncsports.store._mirror_sqlite, _mirror_pg).
CHANGES = (
    "SELECT seq, op, tbl, key, row, committed_at FROM changes WHERE seq > ? ORDER BY seq LIMIT ?"
)
HEAD = "SELECT max(seq) FROM changes"
CURSOR = "SELECT seq FROM cursors WHERE name = ?"
# A cursor only moves forward: a late save of an older position changes nothing.
SAVE_CURSOR = (
    "INSERT INTO cursors (name, seq) VALUES (?, ?) ON CONFLICT (name) "
    "DO UPDATE SET seq = excluded.seq WHERE excluded.seq > cursors.seq"
)
MARKS = "SELECT name, done_at FROM marks"
MARK = upsert(TABLES["marks"])
UNMARK = "DELETE FROM marks WHERE name = ?"
POSITION = "SELECT position FROM positions WHERE name = ?"
SET_POSITION = upsert(TABLES["positions"])
MIRROR_FIXTURES = "SELECT id, sport, season_id, status, deleted FROM fixtures"
CONTENTS = "SELECT {}, {}".format(
    " OR ".join(f"EXISTS (SELECT 1 FROM {t.name})" for t in FEED_TABLES),
    " OR ".join(f"EXISTS (SELECT 1 FROM {t.name})" for t in (*RESOURCE_TABLES, *MIRROR_TABLES)),
)
"""Whether a mirror kept anything (a change, a cursor, a mark, a position), and whether
any record is stored: :meth:`~asyncsports.store._types.MirrorStore.contents`."""
COUNT_ACTIONS = "SELECT count(*) FROM actions WHERE fixture_id = ?"
