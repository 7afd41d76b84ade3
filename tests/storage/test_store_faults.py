"""Storage faults, through the command line: a file or database that is not ours, a
damaged file, a full disk. Each is refused or reported as a storage error (exit 13) naming
the database, before anything is written to what is not ours, and a full disk leaves the
database intact for a rerun to finish (issue 21, point 7).

A full disk is a small tmpfs (mounted here: root only; the tests skip, saying why, where
mounting is not permitted).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import msgspec
import pytest
from support import CLI, clean_env
from support.servers import PostgresServer, pg_bin
from support.sqlite import sqlite

from asyncsports.errors import SinkError
from asyncsports.store import redact_url

pytestmark = pytest.mark.slow  # each test runs the command in a subprocess or a database server

SMALL = "competitions=1,seasons=2,teams=4,fixtures_per_season=8,actions_per_fixture=60"
EXIT_STORAGE = 13


def cli(
    *args: str, scale: str | None = SMALL, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    emulator = ["--emulator", *(["--emulator-scale", scale] if scale else [])]
    return subprocess.run(
        [*CLI, *emulator, *args], capture_output=True, text=True, env=clean_env(), timeout=timeout
    )


def refused(proc: subprocess.CompletedProcess[str], name: str, *said: str) -> None:
    """A storage error naming the database, on one line, last (no traceback, no internal
    error)."""
    assert proc.returncode == EXIT_STORAGE, proc.stderr
    last = proc.stderr.splitlines()[-1]
    assert proc.stderr.count("asyncsports: error: ") == 1 and proc.stderr.endswith(last + "\n")
    # The database as the secrets rule shows it (a user without a password hidden too).
    assert last.startswith("asyncsports: error: ") and redact_url(name) in last
    assert "internal error" not in last and "Traceback" not in proc.stderr
    for words in said:
        assert words in last, last


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def beside(path: Path) -> list[str]:
    """The files next to ``path`` that SQLite makes (journal, WAL)."""
    return sorted(p.name for p in path.parent.glob(path.name + "-*"))


# ------------------------------------------------------------ not ours (SQLite)


def _sqlite(path: Path, *script: str) -> None:
    db = sqlite3.connect(path)
    for statement in script:
        db.execute(statement)
    db.commit()
    db.close()


FOREIGN: dict[str, Callable[[Path], None]] = {
    # Another application's file, with a table of one of our names.
    "fixtures table": lambda p: _sqlite(
        p, "CREATE TABLE fixtures (home TEXT, away TEXT)", "INSERT INTO fixtures VALUES ('a', 'b')"
    ),
    # One that numbers its own schema versions (user_version), as many do.
    "its own user_version": lambda p: _sqlite(
        p,
        "CREATE TABLE fixtures (id TEXT)",
        "CREATE TABLE ledger (n INTEGER)",
        "PRAGMA user_version = 1",
    ),
    "its own application_id": lambda p: _sqlite(
        p, "PRAGMA application_id = 1234", "CREATE TABLE notes (body TEXT)"
    ),
    # In WAL mode: opening it must not leave a -wal or -shm beside it.
    "WAL mode": lambda p: _sqlite(
        p, "PRAGMA journal_mode = WAL", "CREATE TABLE fixtures (id TEXT)"
    ),
    "not SQLite": lambda p: p.write_bytes(b"a spreadsheet, perhaps; not SQLite\n" * 300),
}
PATHS = {
    "backfill": lambda db, out: ("backfill", "--db", str(db), "--page-size", "5"),
    "sync --once": lambda db, out: ("sync", "--once", "--db", str(db)),
    "export": lambda db, out: ("export", "--db", str(db), "--parquet", str(out)),
}


@pytest.mark.parametrize("kind", FOREIGN)
@pytest.mark.parametrize("path", PATHS)
def test_a_file_that_is_not_ours_is_refused_and_left_as_it_was(
    tmp_path: Path, kind: str, path: str
) -> None:
    db, out = tmp_path / "theirs.db", tmp_path / "lake"
    FOREIGN[kind](db)
    before = digest(db)
    proc = cli(*PATHS[path](db, out))
    said = "not an SQLite database" if kind == "not SQLite" else "not an asyncsports database"
    refused(proc, str(db), said, "use another --db")
    assert digest(db) == before and beside(db) == []
    assert not out.exists()


def test_export_of_a_missing_file_makes_neither_it_nor_the_output(tmp_path: Path) -> None:
    db, out = tmp_path / "typo.sqlite", tmp_path / "lake"
    refused(cli("export", "--db", str(db), "--parquet", str(out)), str(db), "no such file")
    assert list(tmp_path.iterdir()) == []


def test_an_empty_file_is_ours_to_fill_and_export_reads_ours_without_writing(
    tmp_path: Path,
) -> None:
    db = tmp_path / "new.sqlite"
    db.touch()  # made by the user beforehand: empty, so ours to use
    assert cli("backfill", "--db", str(db), "--page-size", "5").returncode == 0
    before = digest(db)
    proc = cli("export", "--db", str(db), "--parquet", str(tmp_path / "lake"))
    assert proc.returncode == 0, proc.stderr
    assert digest(db) == before and beside(db) == []
    with sqlite(db) as conn:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == 0x41535350


def test_files_of_earlier_versions_are_still_ours(tmp_path: Path) -> None:
    """Written before files were marked (application_id 0): the backfill's version 1 and
    the mirror's old layout (its version in a table ``mirror``) are taken up and marked."""
    from asyncsports.store._schema import FEED_TABLES, JOB_TABLES, RESOURCE_TABLES, sqlite_ddl
    from asyncsports.store._sqlite import APPLICATION_ID, connect

    def ddl(*tables: Any) -> list[str]:
        names = {t.name for t in tables}
        return [s for s in sqlite_ddl().split(";\n") if any(f" {n} (" in s for n in names)]

    v1 = tmp_path / "v1.sqlite"
    _sqlite(v1, *ddl(*RESOURCE_TABLES, *JOB_TABLES), "PRAGMA user_version = 1")
    connect(v1).close()
    old = tmp_path / "mirror.sqlite"
    _sqlite(old, *ddl(*RESOURCE_TABLES, *FEED_TABLES), "CREATE TABLE mirror (version)")
    asyncio.run(_open_mirror(old))
    for path in (v1, old):
        with sqlite(path) as conn:
            assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            assert {"jobs", "changes", "fixtures"} <= tables and "mirror" not in tables
    # Half of a layout is not one: another application's file that happens to share it.
    half = tmp_path / "half.sqlite"
    _sqlite(half, *ddl(*RESOURCE_TABLES), "PRAGMA user_version = 1")
    with pytest.raises(SinkError, match="not an asyncsports database"):
        connect(half)


# ------------------------------------------------------------- damaged (SQLite)


def scramble(path: Path, pages: list[int]) -> None:
    """Overwrite whole pages with noise (page 1 keeps its 100-byte file header)."""
    with sqlite(path) as conn:
        size = conn.execute("PRAGMA page_size").fetchone()[0]
    noise = hashlib.shake_256(b"noise").digest(size)
    with path.open("r+b") as f:
        for page in pages:
            skip = 100 if page == 1 else 0
            f.seek((page - 1) * size + skip)
            f.write(noise[skip:])


def pages_of(path: Path, where: str) -> list[int]:
    with sqlite(path) as conn:
        if where == "page 1":
            return [1]
        if where.endswith(" leaf"):  # a leaf in the middle of the table: met while reading on
            table = where.split()[0]
            leaves = conn.execute(
                "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno",
                (table,),
            ).fetchall()
            return [leaves[len(leaves) // 2][0]]
        root = "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?"
        return [conn.execute(root, (where,)).fetchone()[0]]


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished backfill and mirror pass in one file (of the small emulator)."""
    db = tmp_path_factory.mktemp("filled") / "sports.sqlite"
    assert cli("backfill", "--db", str(db), "--page-size", "5").returncode == 0
    assert cli("sync", "--once", "--db", str(db), "-s", "basketball").returncode == 0
    return db


# Where the damage is, and the commands that meet it: at open (page 1: the schema), or
# mid-run (a table's b-tree: the backfill's job state, the fixtures everything reads, or
# a leaf of the actions that the export reads on to).
DAMAGE = {
    "page 1": ("backfill", "sync --once", "export"),
    "fixtures": ("backfill", "sync --once", "export"),
    "jobs": ("backfill",),
    "actions leaf": ("export",),
}


@pytest.mark.parametrize(("where", "path"), [(w, p) for w, ps in DAMAGE.items() for p in ps])
def test_a_damaged_file_is_a_storage_error_naming_it(
    filled: Path, tmp_path: Path, where: str, path: str
) -> None:
    db = tmp_path / "damaged.sqlite"
    db.write_bytes(filled.read_bytes())
    try:
        pages = pages_of(db, where)
    except sqlite3.OperationalError as exc:  # no dbstat in this build of SQLite
        pytest.skip(f"cannot find the pages of {where}: {exc}")
    scramble(db, pages)
    proc = cli(*PATHS[path](db, tmp_path / "lake"))
    refused(proc, str(db), "the file is damaged", "restore it from a backup")


def test_a_file_that_is_not_a_database_says_so(tmp_path: Path) -> None:
    db = tmp_path / "noise.sqlite"
    db.write_bytes(hashlib.shake_256(b"x").digest(64 * 1024))
    refused(cli("backfill", "--db", str(db)), str(db), "not an SQLite database")


# --------------------------------------------------------------- full disk


@dataclass
class Disk:
    """A small tmpfs mounted at ``path``."""

    path: Path

    def grow(self, megabytes: int) -> None:
        """Make it larger, in place: space is back."""
        subprocess.run(["mount", "-o", f"remount,size={megabytes}M", str(self.path)], check=True)


@contextlib.contextmanager
def small_disk(megabytes: float) -> Iterator[Disk]:
    """A tmpfs of ``megabytes`` MiB at a new directory in /tmp (where the PostgreSQL user
    can reach it), unmounted after; skips the test where mounting is not permitted."""
    where = Path(tempfile.mkdtemp(prefix="asyncsports-disk-"))
    try:
        size = f"size={round(megabytes * 1024)}k"
        mount = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", size, "tmpfs", str(where)],
            capture_output=True,
            text=True,
        )
        why = mount.stderr.strip() if mount.returncode != 0 else ""
    except FileNotFoundError:
        why = "no mount command"
    if why:
        where.rmdir()
        pytest.skip(
            f"a full disk needs a small tmpfs, and mounting one is not permitted here "
            f"(euid {os.geteuid()}: {why})"
        )
    try:
        yield Disk(where)
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)
        with contextlib.suppress(OSError):
            where.rmdir()


def rows(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    with sqlite(db) as conn:
        return {t: sorted(conn.execute(f"SELECT * FROM {t}")) for t in ("fixtures", "actions")}


def integrity(db: Path) -> str:
    with sqlite(db) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


FILLING = {
    # The default emulator's basketball: 15 MB in SQLite, more with the mirror's feed.
    "backfill": ("backfill", "-s", "basketball", "--json"),
    "sync --once": ("sync", "--once", "-s", "basketball"),
}


@pytest.mark.parametrize("path", FILLING)
def test_a_full_disk_says_so_keeps_the_file_intact_and_a_rerun_finishes(
    tmp_path: Path, path: str
) -> None:
    reference = tmp_path / "reference.sqlite"
    assert cli(*FILLING[path], "--db", str(reference), scale=None).returncode == 0
    with small_disk(4) as disk:
        db = disk.path / "sports.sqlite"
        proc = cli(*FILLING[path], "--db", str(db), scale=None)
        refused(proc, str(db), "the disk is full", "free some space", "run the command again")
        assert "no transaction is active" not in proc.stderr
        assert integrity(db) == "ok"
        disk.grow(256)
        again = cli(*FILLING[path], "--db", str(db), scale=None)
        assert again.returncode == 0, again.stderr
        if path == "backfill":
            summary = msgspec.json.decode(again.stdout)
            assert summary["finished"] and summary["resumed"]
        assert integrity(db) == "ok"
        assert rows(db) == rows(reference)


def test_a_disk_full_before_the_first_table_says_so(tmp_path: Path) -> None:
    """So full that SQLite cannot even map its -shm file: an I/O error, not SQLITE_FULL."""
    with small_disk(20 / 1024) as disk:
        db = disk.path / "sports.sqlite"
        refused(cli("backfill", "--db", str(db)), str(db), "the disk is full")


# ------------------------------------------------------------------ PostgreSQL


async def _pg(url: str, *statements: str) -> list[str]:
    """Run ``statements``; the tables of the public schema then."""
    conn = await asyncpg.connect(url)
    try:
        for statement in statements:
            await conn.execute(statement)
        found = await conn.fetch(
            "SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' ORDER BY 1"
        )
        return [r[0] for r in found]
    finally:
        await conn.close()


PG_PATHS = {
    "backfill": lambda url, out: ("backfill", "--db", url, "--page-size", "5"),
    "backfill --workers": lambda url, out: ("backfill", "--db", url, "--workers", "2"),
    "worker": lambda url, out: ("worker", "--db", url, "--job", "j"),
    "jobs": lambda url, out: ("jobs", "--db", url),
    "export": lambda url, out: ("export", "--db", url, "--parquet", str(out)),
}


@pytest.mark.parametrize("path", PG_PATHS)
async def test_a_postgres_database_that_is_not_ours_is_refused_untouched(
    postgres_url: str, tmp_path: Path, path: str
) -> None:
    theirs = await _pg(
        postgres_url,
        "CREATE TABLE fixtures (home text, away text)",
        "INSERT INTO fixtures VALUES ('a', 'b')",
    )
    assert theirs == ["fixtures"]
    out = tmp_path / "lake"
    proc = cli(*PG_PATHS[path](postgres_url, out))
    refused(proc, postgres_url, "not an asyncsports database", "fixtures")
    assert await _pg(postgres_url) == theirs
    assert not out.exists()


async def test_a_postgres_database_shared_with_other_tables_is_used(postgres_url: str) -> None:
    """Tables of other names are no clash: a database may hold other applications'."""
    await _pg(postgres_url, "CREATE TABLE invoices (id int)")
    proc = cli("backfill", "--db", postgres_url, "--page-size", "5", "--json")
    assert proc.returncode == 0, proc.stderr
    assert {"invoices", "fixtures", "asyncsports_schema"} <= set(await _pg(postgres_url))


def test_a_full_postgres_disk_says_so_at_once_and_a_rerun_finishes(tmp_path: Path) -> None:
    bin_dir = pg_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL is not installed")
    reference = tmp_path / "reference.sqlite"
    assert cli("backfill", "--db", str(reference), "--json", scale=None).returncode == 0
    wal = Path(tempfile.mkdtemp(prefix="asyncsports-wal-"))
    # The cluster takes about 25 MiB of the 40; the tables fill the rest. Its WAL lives
    # elsewhere: when the WAL cannot be written PostgreSQL stops (PANIC), which a client
    # sees as the database gone away, not as a full disk.
    with small_disk(40) as disk:
        server = PostgresServer(bin_dir, disk.path, wal=wal)
        try:
            url = server.create_database()
            began = time.monotonic()
            proc = cli("backfill", "--db", url, "--json", scale=None, timeout=100)
            refused(proc, url, "the database's disk is full", "run the command again")
            assert time.monotonic() - began < 60  # not waited out as the database being away
            disk.grow(512)
            again = cli("backfill", "--db", url, "--json", scale=None)
            assert again.returncode == 0, again.stderr
            summary = msgspec.json.decode(again.stdout)
            assert summary["finished"] and summary["resumed"]
            with sqlite(reference) as conn:
                want = {
                    t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                    for t in ("fixtures", "actions", "statistics")
                }
            assert summary["rows"] == want
        finally:
            server.close()
            shutil.rmtree(wal, ignore_errors=True)


async def _open_mirror(path: Path) -> None:
    from asyncsports.store import open_mirror

    await (await open_mirror(path)).close()


def test_a_change_log_reader_tells_an_old_backfill_database_from_a_new_mirror(
    tmp_path: Path,
) -> None:
    """A version-1 backfill file holds records and no change log's tables at all: the
    reader, which migrates nothing, read it as an empty new mirror (and a follower would
    have waited on it for ever); ``changes`` refuses it as it refuses any backfill's."""
    from asyncsports.store._schema import JOB_TABLES, RESOURCE_TABLES, sqlite_ddl

    names = {t.name for t in (*RESOURCE_TABLES, *JOB_TABLES)}
    ddl = [s for s in sqlite_ddl().split(";\n") if any(f" {n} (" in s for n in names)]
    v1 = tmp_path / "v1.sqlite"
    _sqlite(
        v1,
        *ddl,
        "PRAGMA user_version = 1",
        "INSERT INTO fixtures (id, sport, status, deleted, json) VALUES ('f1', 'soccer', 'Ended', 0, '{}')",
    )
    assert asyncio.run(_contents(v1)) == "records"
    proc = subprocess.run(
        [*CLI, "changes", "--db", str(v1)],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=60,
    )
    assert proc.returncode == 13 and "is not a mirror" in proc.stderr, proc.stderr


async def _contents(path: Path) -> str:
    from asyncsports.store import open_changes

    log = await open_changes(path)
    try:
        return await log.contents()
    finally:
        await log.close()
