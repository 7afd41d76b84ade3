"""The SQLite dialect of the store: a file opened, checked, migrated; its errors and
transactions; :class:`SqliteThread`, the one thread that owns a connection;
:class:`SqliteDialect`, the :class:`~asyncsports.store._dialect.Dialect` the jobs are
written over, and the reader's :class:`SqliteSnapshot` and the lease's
:class:`SqliteSeat`. No network.

:func:`connect` refuses a file that is not ours, or is newer, before writing to it,
and makes every error of the connection a SinkError naming the file
(:func:`storage_error`). :class:`Transaction` is ``BEGIN IMMEDIATE ... COMMIT``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import queue
import shutil
import socket
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

import asyncsports.store._sql as _sql
from asyncsports.errors import SinkError
from asyncsports.store._dialect import Line, Tx
from asyncsports.store._schema import (
    ALL_TABLES,
    HEALTH_TABLES,
    SCHEMA_VERSION,
    SQLITE_LEASE_DDL,
    Table,
    sqlite_ddl,
)
from asyncsports.store._types import POLL, Lease, NotYet, Row, deposed, now_text

__all__ = [
    "APPLICATION_ID",
    "BUSY",
    "HOST",
    "SCHEMA_VERSION",
    "SinkError",
    "SqliteDialect",
    "SqliteSeat",
    "SqliteSnapshot",
    "SqliteThread",
    "Transaction",
    "alive",
    "connect",
    "fence",
    "storage_error",
]

_SCHEMA = sqlite_ddl()
_OLD_MIRROR = "mirror"  # a mirror's file before version 2 kept its version in this table
APPLICATION_ID = 0x41535350
# How long opening a file waits for another connection's write lock, in all: each statement
# waits it (SQLite's busy timeout), and the setup's retries stop once it has passed.
LOCK_WAIT = 5.0
"""``PRAGMA application_id`` of our files ("ASSP"): what tells them from another
application's, whatever tables and ``user_version`` that one has."""
# Files written before the application id: a layout is ours when every one of its tables
# is there (tables the user added beside them are kept).
_LAYOUTS: dict[int, frozenset[str]] = {
    0: frozenset(
        {
            "fixtures",
            "actions",
            "statistics",
            "changes",
            "cursors",
            "marks",
            "positions",
            _OLD_MIRROR,
        }
    ),  # the mirror's, before version 2
    1: frozenset({"fixtures", "actions", "statistics", "jobs", "checkpoints", "job_fixtures"}),
    2: frozenset(t.name for t in ALL_TABLES if t not in HEALTH_TABLES),
    3: frozenset(t.name for t in ALL_TABLES),
}

# SQLite's primary result codes (sqlite3.h) that say what the user has to do.
_IOERR, _CORRUPT, _FULL, _NOTADB = 10, 11, 13, 26


def storage_error(path: Path, exc: sqlite3.Error, verb: str = "use") -> SinkError:
    """The SinkError for SQLite's ``exc`` on ``path``: a damaged file and a full disk say
    so and what to do; anything else gives SQLite's words."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if code == _CORRUPT:
        why = (
            f"the file is damaged ({exc}): restore it from a backup, or use another --db "
            f"(sqlite3 {path} .recover may save what is left)"
        )
    elif code == _NOTADB:
        why = "it is not an SQLite database, or its first page is damaged: use another --db"
    elif code == _FULL or (code == _IOERR and _no_space(path)):
        # An I/O error on a disk with no space left: the -shm file (SQLite maps it)
        # could not grow, which SQLite reports as an I/O error, not as a full disk.
        verb = "write"
        why = (
            f"the disk is full ({exc}); what was being written is rolled back and the "
            "database is intact: free some space (or use another --db) and run the "
            "command again: it carries on from what is committed"
        )
    elif code == _IOERR:
        why = f"{exc} ({getattr(exc, 'sqlite_errorname', 'SQLITE_IOERR')})"
    else:
        why = str(exc)
    return SinkError(f"cannot {verb} {path}: {why}")


def _no_space(path: Path) -> bool:
    try:
        return shutil.disk_usage(path.absolute().parent).free < 1 << 20
    except OSError:
        return False


_M = TypeVar("_M", bound=Callable[..., Any])
R = TypeVar("R")
T = TypeVar("T")


def _naming(method: _M) -> _M:
    """``method`` of a cursor, with every sqlite3 error a SinkError naming the file."""

    @functools.wraps(method)
    def named(self: _Cursor, *args: Any) -> Any:
        try:
            return method(self, *args)
        except sqlite3.Error as exc:
            raise storage_error(cast(_Connection, self.connection).path, exc) from exc

    return cast(_M, named)


class _Cursor(sqlite3.Cursor):
    """A cursor whose every error is a SinkError naming the file (see :func:`connect`).

    Rows after the first are read as they are fetched: a damaged page further on fails
    in the fetches and the iteration, so they are named too."""

    execute = _naming(sqlite3.Cursor.execute)
    executemany = _naming(sqlite3.Cursor.executemany)
    executescript = _naming(sqlite3.Cursor.executescript)
    fetchone = _naming(sqlite3.Cursor.fetchone)
    fetchmany = _naming(sqlite3.Cursor.fetchmany)
    fetchall = _naming(sqlite3.Cursor.fetchall)
    __next__ = _naming(sqlite3.Cursor.__next__)


class _Connection(sqlite3.Connection):
    """A connection to ``path`` whose statements go through :class:`_Cursor`."""

    path: Path

    # Cursor.execute called as a function, not through _Cursor's own: the mirror makes
    # a few statements a row, and a frame less each counts.
    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return _EXECUTE(self.cursor(_Cursor), sql, parameters)
        except sqlite3.Error as exc:
            raise storage_error(self.path, exc) from exc

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        try:
            return _EXECUTEMANY(self.cursor(_Cursor), sql, parameters)
        except sqlite3.Error as exc:
            raise storage_error(self.path, exc) from exc

    def executescript(self, sql_script: str, /) -> sqlite3.Cursor:
        try:
            return _EXECUTESCRIPT(self.cursor(_Cursor), sql_script)
        except sqlite3.Error as exc:
            raise storage_error(self.path, exc) from exc


_EXECUTE = sqlite3.Cursor.execute
_EXECUTEMANY = sqlite3.Cursor.executemany
_EXECUTESCRIPT = sqlite3.Cursor.executescript


def connect(path: Path, *, readonly: bool = False, create: bool = True) -> sqlite3.Connection:
    """Open (or create) the store's database at ``path``: checked, migrated, ready.

    A file that is not ours (another application's, or not SQLite at all), or one written
    by a newer asyncsports, is refused (SinkError) before anything is written to it. A
    file of an older version is brought to :data:`SCHEMA_VERSION` (its tables are kept;
    the missing ones are created). ``readonly``: a file that must exist, checked the same
    way, and never written to (the export). ``create=False``: a file that must exist,
    checked, taken as it is (a reader of a change log, which may save its cursor there:
    its writer makes the tables, perhaps later: :class:`NotYet` until then).

    Every error of the connection, then, is a SinkError naming the file, saying so when
    the file is damaged or the disk full (:func:`storage_error`). The connection is in
    autocommit mode (transactions are explicit) and may be handed from thread to thread,
    one at a time.
    """
    path = Path(path)
    if (readonly or not create) and not path.is_file():
        raise SinkError(f"cannot read {path}: there is no such file")
    try:
        db = sqlite3.connect(
            path, isolation_level=None, check_same_thread=False, factory=_Connection
        )
    except sqlite3.Error as exc:
        raise SinkError(f"cannot open {path}: {exc}") from exc
    db.path = path
    try:
        db.execute(f"PRAGMA busy_timeout = {int(LOCK_WAIT * 1000)}")
        # One read transaction: another connection may be creating the file this moment
        # (the mirror and its change feed), and a version read before its commit beside
        # tables read after it would look like another application's file.
        db.execute("BEGIN")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        app = db.execute("PRAGMA application_id").fetchone()[0]
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
        db.execute("COMMIT")
        names = {n for n in names if not n.startswith("sqlite_")}
        _check(path, version, app, names)
        if readonly and not names:
            raise SinkError(f"cannot read {path}: it holds no asyncsports tables")
        if readonly:
            # Not SQLite's mode=ro: a read-only connection cannot remove the -wal and -shm
            # files it makes beside a WAL file, and would leave them there.
            db.execute("PRAGMA query_only = 1")
        if readonly or not create:
            return db  # as it is: its writer makes and migrates it
        # 16 KiB pages: a record's JSON (about 1.3 kB an action) packs several to a page;
        # set before the first table, a no-op on an existing file. A 64 MiB cache keeps the
        # primary-key indexes in memory as the tables grow. Together they halve the CPU
        # time of writing a backfill (benchmarks/README.md).
        if not names:
            db.execute("PRAGMA page_size = 16384")
        db.execute("PRAGMA cache_size = -65536")
        _setup(db, drop_old_mirror=_OLD_MIRROR in names)
    except BaseException:
        db.close()
        raise
    return db


def _check(path: Path, version: int, app: int, names: set[str]) -> None:
    layout = _LAYOUTS.get(version)
    new = not names and version == 0
    ours = app == APPLICATION_ID or (app == 0 and (new or (layout is not None and layout <= names)))
    if not ours:
        held = f"tables of its own: {', '.join(sorted(names)[:5])}" if names else "no tables"
        mark = f"application id {app:#x}, " if app else ""
        raise SinkError(
            f"{path} is not an asyncsports database ({mark}{held}, user_version {version}): "
            "use another --db"
        )
    if version > SCHEMA_VERSION:
        raise SinkError(
            f"{path} has schema version {version}, written by a newer asyncsports (this one "
            f"reads {SCHEMA_VERSION} and older): upgrade asyncsports, or use another --db"
        )


def _setup(db: _Connection, *, drop_old_mirror: bool) -> None:
    # Two connections opening a new file at once (the mirror and its change feed):
    # switching to WAL does not wait for the other's lock, so try again, for LOCK_WAIT in
    # all (a statement may wait it once more: at most twice LOCK_WAIT, not 50 busy waits).
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        try:
            # WAL: readers (the change feed, sqlite3, pandas) read while a writer writes,
            # and a committed transaction survives the process being killed.
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            script = _SCHEMA + f"PRAGMA application_id = {APPLICATION_ID};\n"
            if drop_old_mirror:
                script += f"DROP TABLE IF EXISTS {_OLD_MIRROR};\n"
            db.executescript(f"BEGIN IMMEDIATE;\n{script}COMMIT;\n")
            return
        except SinkError as exc:
            if db.in_transaction:
                with contextlib.suppress(SinkError):  # as in Transaction: keep the cause
                    db.execute("ROLLBACK")
            locked = isinstance(exc.__cause__, sqlite3.OperationalError) and "locked" in str(
                exc.__cause__
            )
            if not locked:
                raise
            if time.monotonic() >= deadline:
                raise SinkError(
                    f"cannot set up {db.path}: the database is locked: another connection "
                    f"holds its write lock (waited {LOCK_WAIT:g} s)"
                ) from exc
            time.sleep(0.1)


class Transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any exception.

    SQLite's errors come out as SinkError naming the file (:func:`storage_error`): a
    locked database (another backfill writing it), a full disk or a read-only file are
    the user's to fix. SQLite rolls a transaction back itself on some errors (a full
    disk); the error then is the one raised, not the ROLLBACK's finding nothing to undo.
    """

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self._db = db
        self._path = path

    def __enter__(self) -> None:
        # IMMEDIATE takes the write lock now, so a second writer on the same file
        # waits (busy timeout) or fails here instead of halfway through.
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except SinkError as exc:
            raise self._again(exc) from exc.__cause__

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object
    ) -> None:
        if exc_type is None:
            try:
                self._db.execute("COMMIT")
                return
            except SinkError as error:
                exc = error
        if self._db.in_transaction:
            # A ROLLBACK that fails (the disk gone) must not hide why we got here; the
            # connection's close undoes what is left.
            with contextlib.suppress(SinkError):
                self._db.execute("ROLLBACK")
        if isinstance(exc, SinkError) and isinstance(exc.__cause__, sqlite3.Error):
            raise self._again(exc) from exc.__cause__
        if exc_type is None and exc is not None:
            raise exc

    def _again(self, exc: SinkError) -> SinkError:
        """``exc`` (SQLite's, from a statement) as an error writing the file."""
        assert isinstance(exc.__cause__, sqlite3.Error)
        return storage_error(self._path, exc.__cause__, "write")


class SqliteThread(Generic[R]):
    r"""One thread that owns a SQLite connection (or ``R``, an object holding one) and runs
    the calls sent to it, so the event loop never waits on SQLite: the writer's, the
    mirror's, the reader's and the lease's.

    The thread opens ``R`` (``opener``) at the first call (a failed open fails that call,
    and the next tries again) and closes it (``closer``) last. It never waits on the
    event loop: it takes calls from a queue and settles their futures with
    ``call_soon_threadsafe``, so it ends whatever the loop is doing. :meth:`abort` drops
    the calls queued (they fail) and ``interrupt``\s the one running. It is a daemon
    thread: should a cancelled run give up waiting for it, the process can still exit,
    and SQLite keeps only committed transactions.
    """

    def __init__(
        self,
        opener: Callable[[], R],
        closer: Callable[[R], object],
        *,
        name: str,
        interrupt: Callable[[R], object] | None = None,
    ) -> None:
        self.name = name
        self._opener = opener
        self._closer = closer
        self._interrupt = interrupt
        self._calls: queue.SimpleQueue[tuple[Callable[[R], Any], asyncio.Future[Any]] | None]
        self._calls = queue.SimpleQueue()
        self._abandoned = threading.Event()
        self._resource: R | None = None
        self._thread: threading.Thread | None = None
        self._ended: asyncio.Future[None] | None = None
        self._closed = False

    async def call(self, fn: Callable[[R], T]) -> T:
        """``fn(R)`` on the thread; its result, or what it raised."""
        if self._closed:
            raise self._gone()
        loop = asyncio.get_running_loop()
        if self._thread is None:
            self._ended = loop.create_future()
            self._thread = threading.Thread(target=self._serve, name=self.name, daemon=True)
            self._thread.start()
        future: asyncio.Future[T] = loop.create_future()
        self._calls.put((fn, future))
        return await future

    async def close(self) -> None:
        """Close ``R`` after the calls queued, and wait until the thread has."""
        self._closed = True
        thread, ended = self._thread, self._ended
        if thread is None or ended is None:
            return
        self._calls.put(None)
        await asyncio.shield(ended)
        # Telling the loop it ended is the thread's last act: it is gone within
        # microseconds, and a caller that returns leaves no thread behind.
        thread.join(timeout=1.0)

    def abort(self) -> None:
        """From any thread: drop the calls queued, interrupt the one running; the thread
        closes ``R`` and ends (not waited for: :meth:`close` waits)."""
        self._closed = True
        self._abandoned.set()
        self._calls.put(None)
        resource = self._resource
        if resource is not None and self._interrupt is not None:
            self._interrupt(resource)

    def _serve(self) -> None:
        try:
            while (call := self._calls.get()) is not None:
                fn, future = call
                if self._abandoned.is_set():
                    _tell(future, None, self._gone())
                    break
                try:
                    if self._resource is None:
                        self._resource = self._opener()
                    result = fn(self._resource)
                except BaseException as exc:
                    _tell(future, None, exc)
                else:
                    _tell(future, result, None)
        finally:
            resource, self._resource = self._resource, None
            try:
                if resource is not None:
                    self._closer(resource)
            finally:
                self._drop()

    def _gone(self) -> SinkError:
        return SinkError(f"{self.name}: the database is closed")

    def _drop(self) -> None:
        """Fail the calls left in the queue and tell the loop the thread has ended."""
        gone = self._gone()
        while True:
            try:
                call = self._calls.get_nowait()
            except queue.Empty:
                break
            if call is not None:
                _tell(call[1], None, gone)
        if self._ended is not None:
            _tell(self._ended, None, None)


def _tell(future: asyncio.Future[Any], result: object, exc: BaseException | None) -> None:
    """Settle ``future`` on its loop, without waiting (from the thread)."""
    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
        future.get_loop().call_soon_threadsafe(_settle, future, result, exc)


def _settle(future: asyncio.Future[Any], result: object, exc: BaseException | None) -> None:
    if future.done():  # its caller was cancelled
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)


# ------------------------------------------------------------------------ the dialect

_TABLES: dict[str, Table] = {t.name: t for t in ALL_TABLES}
_BY_KEY = {name: _sql.by_key(t) for name, t in _TABLES.items()}
_PUT = {name: _sql.upsert(t) for name, t in _TABLES.items()}
_DELETE = {name: _sql.delete_key(t) for name, t in _TABLES.items()}
_LOG = "INSERT INTO changes (committed_at, op, tbl, key, row) VALUES (?, ?, ?, ?, ?)"
_FENCE = "SELECT 1 FROM sync_lease WHERE name = ? AND term = ? AND expires > ?"


def fence(db: sqlite3.Connection, lease: Lease) -> None:
    """First in each of the writer's ``BEGIN IMMEDIATE`` transactions: raise
    :class:`~asyncsports.store._types.Deposed` unless the lease is still ours and
    unexpired (a takeover waits for the write lock this transaction holds)."""
    if db.execute(_FENCE, (lease.name, lease.term, time.time())).fetchone() is None:
        raise deposed(lease)


def drive(body: Coroutine[Any, Any, T]) -> T:
    """Run ``body`` to its end on this thread: each of its awaits is a :class:`SqliteTx`
    call, which returns without waiting (a body that waits on anything else is a bug)."""
    try:
        body.send(None)
    except StopIteration as done:
        return cast(T, done.value)
    body.close()
    raise RuntimeError("a SQLite transaction waited on something that is not SQLite")


class SqliteTx:
    """:class:`~asyncsports.store._dialect.Tx` on a connection, on its thread: each call is
    done before it returns (see :func:`drive`)."""

    __slots__ = ("db",)

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    async def fetch(self, sql: str, *args: Any) -> list[Sequence[Any]]:
        return self.db.execute(sql, args).fetchall()

    async def fetchrow(self, sql: str, *args: Any) -> Sequence[Any] | None:
        row: Sequence[Any] | None = self.db.execute(sql, args).fetchone()
        return row

    async def execute(self, sql: str, *args: Any) -> None:
        self.db.execute(sql, args)

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self.db.executemany(sql, rows)

    def plain(self, table: Table, row: Sequence[Any]) -> Row:
        return tuple(row)

    def text_time(self, value: Any) -> str:
        return str(value)

    async def fence(self, lease: Lease) -> None:
        fence(self.db, lease)

    async def put_changed(self, table: Table, rows: Sequence[Row]) -> list[tuple[Row, bool]]:
        # A row at a time: SQLite compares in Python what PostgreSQL compares in SQL.
        by_key, put, nkeys = _BY_KEY[table.name], _PUT[table.name], len(table.key)
        written: list[tuple[Row, bool]] = []
        for row in rows:
            old = self.db.execute(by_key, row[:nkeys]).fetchone()
            if old is not None and tuple(old) == tuple(row):
                continue  # the same content: no write
            self.db.execute(put, row)
            written.append((row, old is None))
        return written

    async def delete_scope(
        self, table: Table, column: str, value: Any, kept: set[tuple[Any, ...]]
    ) -> list[Row]:
        nkeys = len(table.key)
        scoped = f"SELECT {', '.join(table.names)} FROM {table.name} WHERE {column} = ?"
        gone = [tuple(r) for r in self.db.execute(scoped, (value,)) if tuple(r[:nkeys]) not in kept]
        await self.delete(table, [r[:nkeys] for r in gone])
        return gone

    async def delete(self, table: Table, keys: Sequence[tuple[Any, ...]]) -> None:
        await self.executemany(_DELETE[table.name], keys)

    async def log(self, lines: Sequence[Line]) -> None:
        now = now_text()
        await self.executemany(_LOG, [(now, *line) for line in lines])

    # The backfill's.
    position = "rowid"

    def now(self) -> Any:
        return now_text()

    async def put(self, table: Table, rows: Sequence[Row]) -> None:
        await self.executemany(_PUT[table.name], rows)  # in order: a key's last row stays

    async def clear(self, table: Table, column: str, values: Sequence[str]) -> None:
        sql = f"DELETE FROM {table.name} WHERE {column} = ?"
        await self.executemany(sql, [(v,) for v in values])


def _run(db: sqlite3.Connection, body: Callable[[Tx], Awaitable[T]]) -> T:
    """``body``'s statements on ``db``, on this thread (see :func:`drive`)."""
    return drive(cast(Coroutine[Any, Any, T], body(SqliteTx(db))))


def _transact(db: sqlite3.Connection, path: Path, body: Callable[[Tx], Awaitable[T]]) -> T:
    with Transaction(db, path):
        return _run(db, body)


class SqliteDialect:
    """The file at ``path`` as a :class:`~asyncsports.store._dialect.Dialect`: one
    connection on a :class:`SqliteThread` (calls and the close never overlap). A follower
    looks again every :data:`~asyncsports.store._types.POLL` seconds (a file tells no
    one of its commits). ``create``: a file that is not there is made (else refused).
    ``interruptible`` (the backfill's): :meth:`abort` also interrupts the statement
    running, and every later one fails (its transaction rolls back): sqlite3_interrupt
    aborts only the step running, and an executemany's rows are steps of their own."""

    def __init__(
        self,
        path: Path,
        *,
        create: bool = True,
        thread: str = "asyncsports-db",
        interruptible: bool = False,
    ) -> None:
        self.path = path
        self.name = str(path)
        self.text_order = ""
        self.interrupted = False
        self._closing = threading.Lock()  # an interrupt never touches a closed connection
        self.thread = SqliteThread(
            lambda: self._connect(create, interruptible),
            self._close,
            name=thread,
            interrupt=self._interrupt if interruptible else None,
        )

    def _connect(self, create: bool, interruptible: bool) -> sqlite3.Connection:
        db = connect(self.path, create=create)
        if interruptible:
            db.set_progress_handler(lambda: self.interrupted, 1000)
        return db

    def _close(self, db: sqlite3.Connection) -> None:
        with self._closing:
            db.close()

    def _interrupt(self, db: sqlite3.Connection) -> None:
        """From any thread (:meth:`SqliteThread.abort`)."""
        with self._closing:
            self.interrupted = True
            with contextlib.suppress(sqlite3.ProgrammingError):  # closed already
                db.interrupt()

    async def open(self) -> None:
        """Open the file now (its errors are the opener's)."""
        try:
            await self.thread.call(lambda db: None)
        except BaseException:
            self.thread.abort()
            raise

    async def write(self, body: Callable[[Tx], Awaitable[T]]) -> T:
        return await self.thread.call(lambda db: _transact(db, self.path, body))

    async def read(self, body: Callable[[Tx], Awaitable[T]]) -> T:
        try:
            return await self.thread.call(lambda db: _run(db, body))
        except SinkError as exc:
            cause = exc.__cause__
            if isinstance(cause, sqlite3.OperationalError) and "no such table" in str(cause):
                raise NotYet(f"{self.name} holds no asyncsports tables yet") from exc
            raise

    def seen(self) -> None:
        pass  # nothing tells: wait() looks again after POLL

    async def wait(self, at_most: float) -> None:
        await asyncio.sleep(min(at_most, POLL))

    def abort(self) -> None:
        self.thread.abort()

    async def close(self) -> None:
        await self.thread.close()


# ---------------------------------------------------------------- the reader's snapshot


class SqliteSnapshot:
    """The file at ``path`` read in one snapshot (a WAL read transaction), as a
    :class:`~asyncsports.store._dialect.Snapshot`, on a :class:`SqliteThread`: opened
    read-only, checked as every opener checks it, and no file made where there was none
    (a mistyped path)."""

    def __init__(self, path: Path) -> None:
        self.name = str(path)
        self.text_order = ""
        self.version = 0
        self.tables: list[str] = []
        self._thread = SqliteThread(
            lambda: connect(path, readonly=True),
            sqlite3.Connection.close,
            name="asyncsports-reader",
        )

    async def open(self) -> None:
        try:
            self.version, self.tables = await self._thread.call(_snapshot)
        except BaseException:
            await self._thread.close()
            raise

    async def query(self, sql: str, chunk: int) -> AsyncIterator[list[tuple[Any, ...]]]:
        # The connection's errors are SinkErrors naming the file already (connect()).
        cursor = await self._thread.call(lambda db: db.execute(sql))
        try:
            while rows := await self._thread.call(lambda _: cursor.fetchmany(chunk)):
                yield rows
        finally:
            # On the connection's thread, as every call of it. A generator left early is
            # closed when the loop gets to it, perhaps after the snapshot: its cursors
            # went with the connection.
            with contextlib.suppress(SinkError):
                await self._thread.call(lambda _: cursor.close())

    def plain(self, table: Table, row: Sequence[Any]) -> Row:
        return tuple(row)

    async def close(self) -> None:
        await self._thread.close()


def _snapshot(db: sqlite3.Connection) -> tuple[int, list[str]]:
    db.execute("BEGIN")  # one snapshot (WAL) from the first read to the last
    version = db.execute("PRAGMA user_version").fetchone()[0]
    return version, [r[0] for r in db.execute("SELECT name FROM sqlite_master")]


# --------------------------------------------------------------------- the lease's seat

BUSY = 2.0
"""Seconds the election waits for the file's write lock (a fenced write under way)."""


def _pid_space() -> str:
    """Where a pid names the same process as here: this host, and on Linux this pid
    namespace (containers sharing a file and a host name each have their own)."""
    name = socket.gethostname()
    with contextlib.suppress(OSError):
        name += f" pidns:{os.stat('/proc/self/ns/pid').st_ino}"
    return name


HOST = _pid_space()
"""What the lease row's ``host`` says of its holder: a holder's pid is looked up only
where this matches."""


def alive(pid: int) -> bool:
    """Whether process ``pid`` of this host runs (a zombie does not; unsure: it does)."""
    if os.name == "nt":
        return True  # pragma: no cover  (Windows: os.kill ends a process; wait for the lapse)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # pragma: no cover  (EPERM, another user's process: the tests run as root)
        return True  # it runs
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # pragma: no cover  (no procfs, or the process reaped since os.kill: a race)
        return True  # not a zombie as far as we can tell
    return stat.rpartition(")")[2].split()[:1] != ["Z"]  # killed, not yet reaped


def _holder_alive(pid: int, host: str) -> bool:
    return host != HOST or alive(pid)


class SqliteSeat:
    """The :class:`~asyncsports.store._dialect.Seat` of the writer lease ``name`` in the
    file at ``path``, on a :class:`SqliteThread` of its own (the file created, and the lease's
    table, at the first call).

    The lease row keeps its holder's pid and where that pid means it (:data:`HOST`), and
    its expiry in epoch seconds by the machine's clock: processes sharing one file share
    one machine, hence one clock (a file on a network share is not supported: SQLite's
    locks are not reliable there). A holder on this host whose pid is gone (killed) is
    taken over at once; one elsewhere, or whose pid is in use again, when its lease
    lapses. Python's clock and pid lookup are SQL functions of the connection.

    Every statement takes the file's one write lock, after any fenced write under way
    (:func:`fence` runs first in each of the writer's ``BEGIN IMMEDIATE``
    transactions), so a write that starts after a takeover finds the term moved on. The
    lock held past :data:`BUSY` is a ``TimeoutError``.
    """

    now = "lease_now()"
    later = "lease_now() + ?"
    me = {"pid": "lease_pid()", "host": "lease_host()"}
    alive = "lease_alive(l.pid, l.host)"
    lapsed = "0"

    def __init__(self, path: Path, name: str) -> None:
        self.path = path
        self.name = name
        self._thread: SqliteThread[sqlite3.Connection] | None = None

    def _open(self) -> sqlite3.Connection:
        db = connect(self.path)
        try:
            db.execute(f"PRAGMA busy_timeout = {int(BUSY * 1000)}")
            db.create_function("lease_now", 0, time.time)
            db.create_function("lease_pid", 0, os.getpid)
            db.create_function("lease_host", 0, lambda: HOST)
            db.create_function("lease_alive", 2, _holder_alive)
            with Transaction(db, self.path):
                db.execute(SQLITE_LEASE_DDL)
        except BaseException:  # pragma: no cover  (connect() just wrote it: a lock since, a race)
            db.close()
            raise
        return db

    async def one(self, sql: str, *args: Any) -> Sequence[Any] | None:
        if self._thread is None:
            self._thread = SqliteThread(self._open, sqlite3.Connection.close, name="mirror-lease")
        try:
            rows = await self._thread.call(lambda db: self._run(db, sql, args))
        except SinkError as exc:
            cause = exc.__cause__
            if isinstance(cause, sqlite3.OperationalError) and (
                "locked" in str(cause) or "busy" in str(cause)
            ):
                raise TimeoutError(f"{self.path} is locked by another writer") from exc
            raise
        return rows[0] if rows else None

    def _run(self, db: sqlite3.Connection, sql: str, args: tuple[Any, ...]) -> list[Any]:
        write, returning, what = sql.partition(" RETURNING ")
        if not returning:
            return db.execute(sql, args).fetchall()
        # RETURNING came with SQLite 3.35, which older systems' Pythons lack: the row
        # written is read back in the write's own transaction (its lock held throughout).
        with Transaction(db, self.path):
            if db.execute(write, args).rowcount < 1:
                return []
            return db.execute(
                f"SELECT {what} FROM sync_lease WHERE name = ?", (self.name,)
            ).fetchall()

    def abort(self) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.abort()

    async def close(self) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            await thread.close()
