"""Every table of the store, described once for every engine (SQLite and PostgreSQL).

A :class:`Table` lists its columns, each of a :data:`Kind`, and its primary key; the DDL of
each engine and the statements that write a table are made from it. Rows are tuples of
plain Python values in the columns' order, the same for both engines: text as ``str``,
``int`` and ``flag`` (0 or 1) as ``int``, ``time`` as ISO 8601 UTC text with a ``Z``, and
``json`` as the JSON text. SQLite keeps them as they come; PostgreSQL stores ``flag`` as
``boolean``, ``time`` as ``timestamptz`` and ``json`` as ``json`` (which keeps the text as
sent, byte for byte, where ``jsonb`` would reorder keys and drop duplicates), converting
from the same values as it copies them in (see :func:`pg_convert`).

One database holds every table: the backfill's, the mirror's, the change feed and the
job state, so that the backfill, the mirror, the workers and the export can all open any
database this package made. :data:`SCHEMA_VERSION` is checked by every opener. No I/O here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "ALL_TABLES",
    "FEED_TABLES",
    "HEALTH_TABLES",
    "JOB_TABLES",
    "LEASE_DDL",
    "MIRROR_TABLES",
    "PG_CARRIER",
    "RESOURCE_TABLES",
    "SCHEMA_VERSION",
    "SHARD_DDL",
    "SQLITE_LEASE_DDL",
    "Column",
    "Kind",
    "Table",
    "pg_convert",
    "pg_ddl",
    "pg_staging",
    "sqlite_ddl",
]

SCHEMA_VERSION = 3
"""1: the backfill's tables alone (PostgreSQL ``json`` as ``jsonb``); 2: every table; 3:
``feed_health`` added (an older database gets it, created when opened)."""

Kind = Literal["text", "int", "flag", "time", "json", "real", "seq"]
"""``seq``: a number the database gives each new row, ascending in insertion order."""

_SQLITE: dict[Kind, str] = {
    "text": "TEXT",
    "int": "INTEGER",
    "flag": "INTEGER",
    "time": "TEXT",
    "json": "TEXT",
    "real": "REAL",
    "seq": "INTEGER PRIMARY KEY AUTOINCREMENT",
}
_PG: dict[Kind, str] = {
    "text": "text",
    "int": "bigint",
    "flag": "boolean",
    "time": "timestamptz",
    "json": "json",
    "real": "double precision",
    "seq": "bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
}
# What a row's value travels as on PostgreSQL: in a staging table (COPY in binary
# format), and in an array parameter of unnest().
PG_CARRIER: dict[Kind, str] = {
    "text": "text",
    "int": "bigint",
    "flag": "integer",
    "time": "text",
    "json": "text",
    "real": "double precision",
    "seq": "bigint",
}


@dataclass(frozen=True, slots=True)
class Column:
    """A column: name, kind, whether it may be NULL, and what it holds (for the DDL)."""

    name: str
    kind: Kind = "text"
    null: bool = True
    note: str = ""


@dataclass(frozen=True, slots=True)
class Table:
    """A table: its columns, its primary key, and its secondary indexes (name: columns).

    ``ordered`` tables are read back in insertion order (SQLite's rowid; PostgreSQL gets
    an identity column ``position`` for it).
    """

    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    indexes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    ordered: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        """The column names, in row order."""
        return tuple(c.name for c in self.columns)


def _c(name: str, kind: Kind = "text", null: bool = True, note: str = "") -> Column:
    return Column(name, kind, null, note)


RESOURCE_TABLES: tuple[Table, ...] = (
    Table(
        "fixtures",
        (
            _c("id", null=False),
            _c("sport", null=False),
            _c("season_id"),
            _c("start_date_utc", "time", note="UTC (SQLite: ISO 8601, 'Z' suffix)"),
            _c("status"),
            _c("name"),
            _c("deleted", "flag", null=False, note="fixtureDeleted: disregard the fixture"),
            _c("json", "json", null=False),
        ),
        ("id",),
        indexes=(("fixtures_sport_start", ("sport", "start_date_utc")),),
    ),
    Table(
        "actions",
        (
            _c("fixture_id", null=False),
            _c("action_id", null=False),
            _c("sport", null=False),
            _c("seq", "int", note="fixtureSeqNum"),
            _c("type", note="fixtureActionType"),
            _c("send_type"),
            _c("timestamp", "time"),
            _c("json", "json", null=False),
        ),
        ("fixture_id", "action_id"),
    ),
    Table(
        "statistics",
        (
            _c("fixture_id", null=False),
            _c("sport", null=False),
            _c("seq_num", "int"),
            _c("timestamp", "time"),
            _c("json", "json", null=False),
        ),
        ("fixture_id",),
    ),
)
"""The resource tables: a few key columns and each record's JSON as the service sent it."""

MIRROR_TABLES: tuple[Table, ...] = (
    Table(
        "standings",
        (
            _c("season_id", null=False),
            _c("stage_id", null=False, note="'' when the packet names none"),
            _c("group_id", null=False, note="'' when the packet names none"),
            _c("sport", null=False),
            _c("timestamp", "time"),
            _c("json", "json", null=False),
        ),
        ("season_id", "stage_id", "group_id"),
    ),
    Table(
        "squads",
        (
            _c("id", null=False),
            _c("sport", null=False),
            _c("season_id"),
            _c("team_id"),
            _c("json", "json", null=False),
        ),
        ("id",),
    ),
    Table(
        "events",
        (
            _c("id", "int", null=False),
            _c("title"),
            _c("start_date", "time"),
            _c("end_date", "time"),
            _c("live", "flag", null=False, note="listed as live when last read"),
            _c("json", "json", null=False),
        ),
        ("id",),
    ),
    Table(
        "snooker_tournaments",
        (
            _c("tournament_id", "int", null=False),
            _c("season_id", "int"),
            _c("name"),
            _c("start_date", "time"),
            _c("end_date", "time"),
            _c("json", "json", null=False),
        ),
        ("tournament_id",),
    ),
)
"""The tables only the mirror fills, beside the resource tables."""

HEALTH_TABLES: tuple[Table, ...] = (
    Table(
        "feed_health",
        (
            _c("fixture_id", null=False),
            _c("feed", null=False, note="actions or statistics"),
            _c("sport", null=False),
            _c("state", null=False, note="connecting, live, delayed, reconnecting or over"),
            _c("cause", null=False, note="why, as the feed said it ('' when none)"),
            _c("since", "time", null=False, note="when it came to this state"),
            _c("position", "int", null=False, note="records delivered by then"),
            _c("json", "json", null=False, note="the row as a JSON object"),
        ),
        ("fixture_id", "feed"),
    ),
)
"""The mirror's own word on each live feed it follows (its state, written when it
changes): in its change feed as any table, but not a record of the service's, so not
loaded by the dlt source nor exported."""

FEED_TABLES: tuple[Table, ...] = (
    Table(
        "changes",
        (
            _c("seq", "seq", null=False, note="commit order: the change feed's cursor"),
            _c("committed_at", "time", null=False),
            _c("op", null=False, note="insert, update or delete"),
            _c("tbl", null=False),
            _c("key", null=False, note="JSON array of the key columns"),
            _c("row", null=False, note="JSON object of the whole row"),
        ),
        ("seq",),
    ),
    Table("cursors", (_c("name", null=False), _c("seq", "int", null=False)), ("name",)),
    Table("marks", (_c("name", null=False), _c("done_at", "real", null=False)), ("name",)),
    Table(
        "positions",
        (
            _c("name", null=False, note="live:<fixture> or stats:<fixture>"),
            _c("position", "int", null=False, note="records committed: where it resumes"),
        ),
        ("name",),
    ),
)
"""The mirror's change feed and its consumers' cursors, its marks and live positions."""

JOB_TABLES: tuple[Table, ...] = (
    Table(
        "jobs",
        (
            _c("job", null=False),
            _c("started_at", "time", null=False),
            _c("finished_at", "time", note="NULL while a run is unfinished: the next resumes it"),
        ),
        ("job",),
    ),
    Table(
        "job_fixtures",
        (_c("job", null=False), _c("fixture_id", null=False)),
        ("job", "fixture_id"),
        ordered=True,
    ),
    Table(
        "checkpoints",
        (
            _c("job", null=False),
            _c("unit", null=False),
            _c("rows", "int", null=False),
            _c("done_at", "time", null=False),
        ),
        ("job", "unit"),
    ),
)
"""A backfill job's state: its runs, the fixtures its listings gave, its units done."""

ALL_TABLES: tuple[Table, ...] = (
    *RESOURCE_TABLES,
    *MIRROR_TABLES,
    *HEALTH_TABLES,
    *FEED_TABLES,
    *JOB_TABLES,
)
"""Every table, in the order they are created."""


SHARD_DDL: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS shard_jobs (
    job text PRIMARY KEY,
    scope jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
)""",
    """CREATE TABLE IF NOT EXISTS shard_units (
    job text NOT NULL,
    unit text NOT NULL,
    sport text NOT NULL,
    season text,
    owner text,                     -- the worker holding it, or that did it
    lease_until timestamptz,        -- the claim lapses then unless renewed
    attempts integer NOT NULL DEFAULT 0,  -- failed fetches
    error text,
    rows bigint,
    done_at timestamptz,
    position bigint GENERATED ALWAYS AS IDENTITY,
    PRIMARY KEY (job, unit)
)""",
    "CREATE INDEX IF NOT EXISTS shard_units_todo ON shard_units (job, position) "
    "WHERE done_at IS NULL",
)
"""The sharded workers' job tables (PostgreSQL only: :mod:`asyncsports.store._jobs`), as
statements: defaults, an identity and a partial index that :class:`Table` does not
describe. ``scope`` is ``jsonb``: it is ours, read back as values, never as bytes."""

LEASE_DDL = (
    "CREATE TABLE IF NOT EXISTS sync_lease (name text PRIMARY KEY, term bigint NOT NULL, "
    "holder text NOT NULL, pid integer NOT NULL, expires timestamptz NOT NULL)"
)
"""The mirror's writer lease on PostgreSQL (:class:`asyncsports.store._pg.PgSeat`): the term,
who holds it, the server pid of its renewing connection, and its expiry by the
database's clock."""

SQLITE_LEASE_DDL = (
    "CREATE TABLE IF NOT EXISTS sync_lease (name text PRIMARY KEY, term integer NOT NULL, "
    "holder text NOT NULL, pid integer NOT NULL, host text NOT NULL, expires real NOT NULL)"
)
"""The mirror's writer lease in a SQLite file (:class:`asyncsports.store._sqlite.SqliteSeat`): the
term, who holds it, the holder's process id and host name, and its expiry in epoch
seconds by the machine's clock (one file, one machine: one clock)."""


def _ddl(table: Table, types: dict[Kind, str], extra: tuple[str, ...] = ()) -> list[str]:
    items = [
        (f"{c.name} {types[c.kind]}{'' if c.null or c.kind == 'seq' else ' NOT NULL'}", c.note)
        for c in table.columns
    ]
    items += [(e, "") for e in extra]
    if not any(c.kind == "seq" for c in table.columns):  # else that column is the key
        items.append((f"PRIMARY KEY ({', '.join(table.key)})", ""))
    lines = []
    for i, (item, note) in enumerate(items):
        line = f"    {item}{',' if i < len(items) - 1 else ''}"
        lines.append(f"{line:<40} -- {note}" if note else line)
    statements = [f"CREATE TABLE IF NOT EXISTS {table.name} (\n" + "\n".join(lines) + "\n);"]
    statements += [
        f"CREATE INDEX IF NOT EXISTS {name} ON {table.name} ({', '.join(cols)});"
        for name, cols in table.indexes
    ]
    return statements


def sqlite_ddl() -> str:
    """The SQLite script creating every table (idempotent) and setting the version."""
    parts = [s for t in ALL_TABLES for s in _ddl(t, _SQLITE)]
    parts.append(f"PRAGMA user_version = {SCHEMA_VERSION};")
    return "\n".join(parts) + "\n"


def pg_ddl() -> list[str]:
    """The PostgreSQL statements creating every table (idempotent)."""
    position = ("position bigint GENERATED ALWAYS AS IDENTITY",)
    return [s for t in ALL_TABLES for s in _ddl(t, _PG, position if t.ordered else ())]


def pg_staging(table: Table) -> str:
    """A session's staging table for ``table``: rows are COPYed in, then upserted."""
    cols = ", ".join(f"{c.name} {PG_CARRIER[c.kind]}" for c in table.columns)
    return f"CREATE TEMPORARY TABLE IF NOT EXISTS stage_{table.name} ({cols}) ON COMMIT DELETE ROWS"


def pg_convert(column: Column) -> str:
    """The SQL expression turning a staged value into the column's PostgreSQL type."""
    return {
        "flag": f"{column.name} <> 0",
        "time": f"{column.name}::timestamptz",
        "json": f"{column.name}::json",
    }.get(column.kind, column.name)
