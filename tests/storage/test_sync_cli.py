"""`asyncsports sync` in subprocesses: --once with --changes, kill -9 and a restart, SIGTERM,
on SQLite and on PostgreSQL (a throwaway server, tests/support/servers.py); `asyncsports changes`
following a database's feed from another process; PostgreSQL restarted mid-run."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import asyncpg
import pytest
from support import CLI, TIMEOUT, Standalone, clean_env
from support.cli import serving_metrics
from support.mirror import _changes, committed, sync_args, tables
from support.servers import PostgresServer, free_port

from asyncsports.sync import TABLES, open_mirror

pytestmark = pytest.mark.slow  # the command in subprocesses, against a standalone emulator


async def _backends(url: str) -> int:
    base, _, name = url.rpartition("/")
    conn = await asyncpg.connect(f"{base}/postgres")
    try:
        return int(
            await conn.fetchval("SELECT count(*) FROM pg_stat_activity WHERE datname = $1", name)
        )
    finally:
        await conn.close()


async def _replayed(db: Path | str, into: Path | str) -> dict[str, list[tuple[object, ...]]]:
    """The change feed of ``db`` from the start, applied to the empty ``into``."""
    source, copy = await open_mirror(db), await open_mirror(into)
    try:
        await copy.apply(await source.changes(0, limit=1_000_000))
        return {t: await copy.rows(t) for t in TABLES}
    finally:
        await source.close()
        await copy.close()


def test_once_with_changes_prints_the_feed_and_resumes(
    base_url: str, new_db: Callable[[str], str]
) -> None:
    db = new_db("m")
    first = subprocess.run(
        sync_args(base_url, db, "--once", "--changes"),
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=TIMEOUT,
    )
    assert first.returncode == 0, first.stderr
    feed = [json.loads(line) for line in first.stdout.splitlines()]
    assert [c["seq"] for c in feed] == list(range(1, len(feed) + 1))
    assert {c["table"] for c in feed} >= {"fixtures", "actions", "statistics", "standings"}
    assert {"seq", "op", "table", "key", "committed_at", "record"} == set(feed[0])
    counts = {t: len(rows) for t, rows in tables(db).items()}
    assert sum(counts.values()) == len(feed)  # every row arrived by one insert
    again = subprocess.run(
        sync_args(base_url, db, "--once", "--changes"),
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=TIMEOUT,
    )
    assert again.returncode == 0 and again.stdout == ""  # nothing changed, nothing repeated
    # The feed read back by `asyncsports changes`, from another process, is the same.
    read = subprocess.run(
        [*CLI, "changes", "--db", db],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=TIMEOUT,
    )
    assert read.returncode == 0, read.stderr
    assert [json.loads(line) for line in read.stdout.splitlines()] == feed


def test_kill_9_at_random_points_then_a_restart_reach_the_same_state(
    base_url: str, tmp_path: Path, new_db: Callable[[str], str]
) -> None:
    reference = tmp_path / "ref.sqlite"
    clean = subprocess.run(
        sync_args(base_url, reference, "--once"),
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=TIMEOUT,
    )
    assert clean.returncode == 0, clean.stderr
    want = tables(reference)
    assert want["actions"] and want["statistics"]
    rng = random.Random(13)
    db = new_db("killed")
    total = sum(map(len, want.values()))  # a clean pass inserts each row once
    partial = []
    for _ in range(3):
        # Kill it when the pass has committed a random part of what it will.
        before = committed(db)
        if before >= total - 1:
            break
        target = rng.randint(before + 1, total - 1)
        proc = subprocess.Popen(
            sync_args(base_url, db, "--once"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=clean_env(),
        )
        deadline = time.monotonic() + TIMEOUT
        while proc.poll() is None and committed(db) < target and time.monotonic() < deadline:
            time.sleep(0.005)
        proc.kill()
        proc.wait(TIMEOUT)
        partial.append(sum(map(len, tables(db).values())))
    # The runs really died mid-way, with part of the pass committed.
    assert any(0 < n < total for n in partial), (partial, total)
    done = subprocess.run(
        sync_args(base_url, db, "--once"),
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    assert tables(db) == want  # the same rows as one clean pass into SQLite
    # Nothing lost or doubled in the log: one change for each row (PostgreSQL may skip
    # seq numbers a killed transaction took, never repeat or reorder them).
    log = asyncio.run(_changes(db))
    assert len(log) == total and "update" not in {c.op for c in log}
    assert len({(c.table, c.key) for c in log}) == total
    assert [c.seq for c in log] == sorted({c.seq for c in log})
    # The log holds every committed change: replayed, it rebuilds the same tables.
    assert asyncio.run(_replayed(db, new_db("replayed"))) == want


def test_sigterm_finishes_in_flight_and_exits_0_with_metrics_meanwhile(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite"
    args = [
        "sync",
        "--emulator",
        "--emulator-speed",
        "60",
        "-s",
        "basketball",
        "--db",
        str(db),
        "--every",
        "live=0.2,fixtures=0.2,window=0.5",
        "--metrics-port",
        "0",
    ]
    with serving_metrics(*args) as (proc, url):
        deadline = time.monotonic() + TIMEOUT
        while True:  # until the first commits
            with urllib.request.urlopen(f"{url}/metrics", timeout=10) as r:
                text = r.read().decode()
            if 'asyncsports_sync_changes_total{table="actions"}' in text:
                break
            assert time.monotonic() < deadline, text
            time.sleep(0.1)
        with urllib.request.urlopen(f"{url}/healthz", timeout=10) as r:
            assert r.status == 200 and json.loads(r.read())["ok"] is True
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(TIMEOUT) == 0
    assert tables(db)["actions"]


def test_a_standalone_emulator_with_its_defaults_is_mirrored_around_its_now(
    tmp_path: Path,
) -> None:
    """Its clock is 2026-06-01, not the machine's: the mirror takes now from its Date."""
    with Standalone() as emulator:
        db = tmp_path / "m.sqlite"
        args = [
            *CLI,
            "sync",
            "--base-url",
            emulator.base_url,
            "--token",
            "emulator-token",
            "--rate-limit",
            "0",
            "-s",
            "basketball",
            "--db",
            str(db),
            "--once",
        ]
        done = subprocess.run(
            args, capture_output=True, text=True, timeout=TIMEOUT, env=clean_env()
        )
    assert done.returncode == 0, done.stderr
    assert "mirror: the service's clock reads 2026-06-01T12:" in done.stderr
    assert "no basketball fixture" not in done.stderr
    starts = [r[3] for r in tables(db)["fixtures"]]
    assert starts
    assert all("2026-05-30" <= s[:10] <= "2026-06-03" for s in starts), starts


def follow_args(db: str, *more: str) -> list[str]:
    return [*CLI, "changes", "--db", db, "--consumer", "app", *more]


def read_feed(proc: subprocess.Popen[str], until: int) -> list[dict[str, object]]:
    """The JSON lines ``proc`` prints, up to the one of seq ``until``."""
    assert proc.stdout is not None
    got: list[dict[str, object]] = []
    for line in proc.stdout:
        got.append(json.loads(line))
        if got[-1]["seq"] == until:
            break
    return got


def test_a_follower_in_another_process_sees_each_change_once_in_order(
    base_url: str, new_db: Callable[[str], str]
) -> None:
    db = new_db("m")
    assert asyncio.run(_changes(db)) == []  # made, empty: a follower refuses a missing file
    follower = subprocess.Popen(
        follow_args(db, "--follow"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(),
    )
    try:
        done = subprocess.run(
            sync_args(base_url, db, "--once"),
            capture_output=True,
            text=True,
            env=clean_env(),
            timeout=TIMEOUT,
        )
        assert done.returncode == 0, done.stderr
        last = committed(db)
        got = read_feed(follower, last)
        follower.send_signal(signal.SIGTERM)  # how a follower is stopped: exit 0
        _, err = follower.communicate(timeout=TIMEOUT)
        assert follower.returncode == 0, err
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()
    assert [c["seq"] for c in got] == [c.seq for c in asyncio.run(_changes(db))]
    assert got[-1]["seq"] == last and len(got) == sum(map(len, tables(db).values()))
    # Its cursor was kept: started again, it has nothing more to say.
    again = subprocess.run(
        follow_args(db), capture_output=True, text=True, env=clean_env(), timeout=TIMEOUT
    )
    assert again.returncode == 0 and again.stdout == "", again.stderr


def test_postgres_stopped_immediate_mid_run_loses_nothing(
    base_url: str, tmp_path: Path, postgres: PostgresServer
) -> None:
    """A follower in another process, across the restart too, sees each change once."""
    reference = tmp_path / "ref.sqlite"
    clean = subprocess.run(
        sync_args(base_url, reference, "--once"),
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=TIMEOUT,
    )
    assert clean.returncode == 0, clean.stderr
    want = tables(reference)
    total = sum(map(len, want.values()))
    db = postgres.create_database()
    follower = subprocess.Popen(
        follow_args(db, "--follow"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(),
    )
    # The follower has reached the database before it is stopped: one never reached is
    # an error at once, not waited for (a loaded machine starts the process slowly).
    deadline = time.monotonic() + TIMEOUT
    while asyncio.run(_backends(db)) < 1:
        assert follower.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    # --verbose: the lines saying that the database was lost and is tried again (into a
    # file: a pipe nobody reads while the test waits could fill and stall the run).
    log_file = tmp_path / "sync.log"
    with log_file.open("w") as out:
        proc = subprocess.Popen(
            sync_args(base_url, db, "--once", "--verbose"),
            stdout=subprocess.DEVNULL,
            stderr=out,
            env=clean_env(),
        )
    try:
        deadline = time.monotonic() + TIMEOUT
        # Early: on a loaded machine, a stop near the pass's end may meet no write.
        while proc.poll() is None and committed(db) < total // 20:
            assert time.monotonic() < deadline
            time.sleep(0.005)
        assert proc.poll() is None, "the pass ended before the database could be stopped"
        postgres.stop("immediate")  # as a crash: every backend quits at once
        time.sleep(1.0)
        postgres.start()
        proc.wait(TIMEOUT)
        err = log_file.read_text()
        assert proc.returncode == 0, err[-3000:]
        assert "trying again" in err  # it did lose the database mid-run
        log = asyncio.run(_changes(db))
        got = read_feed(follower, log[-1].seq)
        follower.send_signal(signal.SIGTERM)
        _, ferr = follower.communicate(timeout=TIMEOUT)
        assert follower.returncode == 0, ferr
    finally:
        for p in (proc, follower):
            if p.poll() is None:
                p.kill()
                p.wait()
    assert tables(db) == want
    assert len(log) == total and len({(c.table, c.key) for c in log}) == total
    # The follower, across the restart too, saw each change once, in order.
    assert [c["seq"] for c in got] == [c.seq for c in log]


def test_a_password_in_the_url_is_never_printed(postgres: PostgresServer, tmp_path: Path) -> None:
    url = postgres.create_database().replace("postgres@", "postgres:s3cret@")
    args = [*CLI, "sync", "--emulator", "-s", "basketball", "--once", "--changes", "--db", url]
    done = subprocess.run(args, capture_output=True, text=True, env=clean_env(), timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert "postgres:***@" in done.stderr and "s3cret" not in done.stderr + done.stdout
    # A database that cannot be reached: the storage error (13), named without it.
    gone = f"postgresql://postgres:s3cret@127.0.0.1:{free_port()}/nowhere"
    for cmd in ([*args[:-1], gone], [*CLI, "changes", "--db", gone, "--follow"]):
        failed = subprocess.run(
            cmd, capture_output=True, text=True, env=clean_env(), timeout=TIMEOUT
        )
        assert failed.returncode == 13, failed.stderr
        assert "cannot reach the database" in failed.stderr
        assert "s3cret" not in failed.stderr + failed.stdout
    # A follower of a file that is not there says so, rather than wait on an empty one.
    missing = subprocess.run(
        [*CLI, "changes", "--db", str(tmp_path / "typo.sqlite")],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=TIMEOUT,
    )
    assert missing.returncode == 13 and "no mirror database at" in missing.stderr
    assert not (tmp_path / "typo.sqlite").exists()
