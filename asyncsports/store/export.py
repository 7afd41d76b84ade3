"""Export a backfill's tables (SQLite or PostgreSQL) to Parquet, partitioned by sport and
season (hive style), for DuckDB, Spark, pandas and the like. Needs the ``parquet`` extra
(pyarrow).

::

    rows = await export_parquet("sports.sqlite", Path("lake"))

writes ``lake/fixtures/sport=basketball/season_id=123/part-0-0.parquet`` and so on for
``fixtures``, ``actions`` and ``statistics``; ``actions`` and ``statistics`` get their
fixture's ``season_id`` (as the partition). A fixture without a season goes under
``season_id=__HIVE_DEFAULT_PARTITION__`` (read back as NULL). Values are typed from the
one schema description (:mod:`asyncsports.store._schema`): ``time`` columns are UTC timestamps
(microseconds), flags booleans, ``json`` the record's JSON text. Each table's directory is
replaced as a whole, and PostgreSQL's tables are read in one snapshot (repeatable read),
so an export is a snapshot even of a database being written. Rows are read and written in
chunks: memory stays bounded whatever the database's size.
"""

from __future__ import annotations

import functools
import shutil
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from asyncsports._optional import need
from asyncsports.errors import SinkError
from asyncsports.store._pg import (
    CONNECT_TIMEOUT,
    _asyncpg,
    is_postgres,
    ours,
    redact_url,
    unusable,
)
from asyncsports.store._schema import RESOURCE_TABLES, Kind, Table
from asyncsports.store._sqlite import connect

__all__ = ["CHUNK", "export_parquet"]

CHUNK = 50_000
"""Rows read, converted and written at a time."""

PARTITION = ("sport", "season_id")


def _pyarrow() -> Any:
    pa = need("pyarrow", "a Parquet export")
    for part in ("compute", "dataset"):  # used as pa.compute and pa.dataset
        need(f"pyarrow.{part}", "a Parquet export")
    return pa


def _arrow_type(pa: Any, kind: Kind) -> Any:
    return {
        "text": pa.string(),
        "int": pa.int64(),
        "flag": pa.bool_(),
        "time": pa.timestamp("us", tz="UTC"),
        "json": pa.string(),
    }[kind]


def _query(table: Table) -> str:
    """The table's rows, with the fixture's season when the table has none, ordered by
    partition so that a chunk touches few partitions (few, larger files)."""
    if "season_id" in table.names:
        cols = ", ".join(table.names)
        order = ", ".join((*PARTITION, *table.key))
        return f"SELECT {cols} FROM {table.name} ORDER BY {order}"
    cols = ", ".join(f"t.{c}" for c in table.names)
    order = ", ".join(("t.sport", "f.season_id", *(f"t.{k}" for k in table.key)))
    return (
        f"SELECT {cols}, f.season_id FROM {table.name} t "
        f"LEFT JOIN fixtures f ON f.id = t.fixture_id ORDER BY {order}"
    )


async def _sqlite_chunks(conn: Any, sql: str) -> AsyncIterator[list[tuple[Any, ...]]]:
    # The connection's errors are SinkErrors naming the file (store._sqlite.connect).
    cursor = await anyio.to_thread.run_sync(conn.execute, sql)
    while rows := await anyio.to_thread.run_sync(cursor.fetchmany, CHUNK):
        yield rows


async def _pg_chunks(conn: Any, sql: str) -> AsyncIterator[list[tuple[Any, ...]]]:
    cursor = await conn.cursor(sql)  # in the caller's transaction
    while rows := await cursor.fetch(CHUNK):
        yield [tuple(r) for r in rows]


def _batch(pa: Any, schema: Any, kinds: Sequence[Kind], rows: list[tuple[Any, ...]]) -> Any:
    columns = []
    for field, kind, values in zip(schema, kinds, zip(*rows, strict=True), strict=True):
        if kind == "time" and any(isinstance(v, str) for v in values):
            # SQLite's ISO 8601 text with a 'Z': Arrow parses it, in C.
            array = pa.compute.cast(pa.array(values, pa.string()), field.type)
        elif kind == "flag":
            array = pa.array([None if v is None else bool(v) for v in values], pa.bool_())
        else:
            array = pa.array(values, field.type)
        columns.append(array)
    return pa.Table.from_arrays(columns, schema=schema)


async def _write_table(
    pa: Any, table: Table, chunks: AsyncIterator[list[tuple[Any, ...]]], out: Path
) -> int:
    kinds: list[Kind] = [c.kind for c in table.columns]
    fields = [(c.name, _arrow_type(pa, c.kind)) for c in table.columns]
    if "season_id" not in table.names:
        kinds.append("text")
        fields.append(("season_id", pa.string()))
    schema = pa.schema(fields)
    partitioning = pa.dataset.partitioning(
        pa.schema([(name, pa.string()) for name in PARTITION]), flavor="hive"
    )
    n = 0
    try:
        await anyio.to_thread.run_sync(_replace, out)
        async for number, rows in _enumerate(chunks):
            # In a thread: the next chunk is read meanwhile (PostgreSQL).
            write = functools.partial(
                pa.dataset.write_dataset,
                _batch(pa, schema, kinds, rows),
                out,
                format="parquet",
                partitioning=partitioning,
                basename_template=f"part-{number}-{{i}}.parquet",
                existing_data_behavior="overwrite_or_ignore",
            )
            await anyio.to_thread.run_sync(write)
            n += len(rows)
    except OSError as exc:  # pyarrow's I/O errors are OSErrors too
        raise SinkError(f"cannot write {out}: {exc}") from exc
    return n


def _replace(out: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)


async def _enumerate(chunks: AsyncIterator[Any]) -> AsyncIterator[tuple[int, Any]]:
    n = 0
    async for chunk in chunks:
        yield n, chunk
        n += 1


async def export_parquet(
    db: str | Path, directory: Path, *, connect_timeout: float = CONNECT_TIMEOUT
) -> dict[str, int]:
    """Write every resource table of ``db`` (a SQLite file or a ``postgresql://`` URL)
    under ``directory``/TABLE, partitioned by sport and season; returns rows per table.
    A database that cannot be reached fails within ``connect_timeout`` seconds."""
    pa = _pyarrow()
    directory = Path(directory)
    counts: dict[str, int] = {}
    if not is_postgres(db):
        # Checked before any output is touched; read-only: a file that is not ours, or is
        # missing, is refused and left as it was.
        conn = await anyio.to_thread.run_sync(functools.partial(connect, Path(db), readonly=True))
        try:
            for table in RESOURCE_TABLES:
                chunks = _sqlite_chunks(conn, _query(table))
                counts[table.name] = await _write_table(pa, table, chunks, directory / table.name)
        finally:
            conn.close()
        return counts
    url, apg = str(db), _asyncpg()
    try:
        conn = await apg.connect(url, timeout=connect_timeout)
    except Exception as exc:
        raise unusable(url, exc, connect_timeout, verb="read") from exc
    try:
        # One snapshot for every table, even while a backfill writes.
        async with conn.transaction(isolation="repeatable_read", readonly=True):
            if await ours(conn, url) is None:  # another application's tables are refused
                raise SinkError(f"{redact_url(url)} holds no asyncsports tables to export")
            for table in RESOURCE_TABLES:
                chunks = _pg_chunks(conn, _query(table))
                counts[table.name] = await _write_table(pa, table, chunks, directory / table.name)
    except SinkError:
        raise
    except Exception as exc:
        raise SinkError(f"cannot read {redact_url(url)}: {exc}") from exc
    finally:
        await conn.close()
    return counts
