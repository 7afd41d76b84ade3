"""The change feed's publisher as processes (issue 34's "Done when"): ``asyncsports
changes --db FILE --follow --to BUS_URL`` beside a running ``asyncsports sync`` (the
embedded emulator's clock at x60, basketball, a SQLite file), killed -9, two of one
stream, stopped by a signal; the bus stopped for 30 s and restarted under them.

What a user's consumer reads is read as the guide's consumers read it
(tests/support/bus.py): a Redis consumer group, a JetStream durable pull consumer. Each
process a test starts is killed -9 when the test ends, whatever happened
(:func:`start`), and every wait is for a line or a metric, within a bound.
The publisher in the tests' own process: tests/bus/test_publish.py.
"""

from __future__ import annotations

import asyncio
import re
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import pytest
from support import until
from support.bus import consume, once_in_order, seqs
from support.cli import CLI
from support.mirror import committed, wait_committed
from support.procs import Command, child_env
from support.servers import Bus

pytestmark = pytest.mark.slow  # the command in subprocesses, bus servers

TAKEOVER = 15.0  # seconds: a standby takes over within this of a kill -9 (issue 34)
OUTAGE = 30.0  # seconds the bus is held down with the publisher and sync running
SYNC = ("--emulator", "--emulator-speed", "60", "sync", "--sports", "basketball")
ROLE = "asyncsports_bus_role"
POSITION = "asyncsports_bus_position"
PUBLISHED = "asyncsports_bus_published_total"
RESUMES = "publisher: publishing the changes"  # said as it has read where the bus stands

Start = Callable[..., Command]


@pytest.fixture
def start() -> Iterator[Start]:
    """``start(*args)``: ``asyncsports ARGS`` as a :class:`Command`; every process started
    is killed -9 as the test ends (a failing test leaves none behind, and hangs on none)."""
    started: list[Command] = []

    def run(*args: str) -> Command:
        command = Command([*CLI, *args])
        started.append(command)
        return command

    try:
        yield run
    finally:
        for command in started:
            command.kill()


@pytest.fixture(scope="module")
def once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A mirror database after one pass of ``sync`` over basketball (a few thousand
    changes), for tests to copy."""
    db = tmp_path_factory.mktemp("once") / "m.sqlite"
    done = subprocess.run(
        [*CLI, "--emulator", "sync", "--sports", "basketball", "--db", str(db), "--once"],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return db


def copy(src: Path, dst: Path) -> str:
    with closing(sqlite3.connect(src)) as a, closing(sqlite3.connect(dst)) as b:
        a.backup(b)
    return str(dst)


def sync(start: Start, db: str) -> Command:
    """A ``sync`` writing ``db``, once it writes."""
    command = start(*SYNC, "--db", db)
    command.wait_for("mirror: writing", 60)
    return command


def publisher(start: Start, db: str, url: str) -> Command:
    """A publisher of ``db``'s feed to ``url``, once its metrics are served."""
    command = start("changes", "--db", db, "--follow", "--to", url, "--metrics-port", "0")
    command.wait_for("metrics on ", 30)
    return command


def reaches(p: Command, seq: int, within: float = 30) -> int:
    """Until ``p`` says the bus holds the feed up to ``seq`` at least; where it is."""
    deadline = time.monotonic() + within
    while (at := int(p.value(POSITION))) < seq:
        assert p.proc.poll() is None, f"the publisher exited {p.proc.returncode}: {p.drain()}"
        assert time.monotonic() < deadline, (
            f"the bus at change {at}, not {seq}, after {within:g} s: {p.drain()}"
        )
        time.sleep(0.05)
    return at


def resumed_after(p: Command) -> str:
    """Where the bus stood as ``p`` started: "after change X (of Y)" of its line."""
    found = re.search(r"after change \d+ \(of \d+\)", p.line)
    assert found, p.line
    return found[0]


def test_a_consumer_reads_every_change_once_in_order_across_kills_and_outages(
    start: Start, bus: Bus, tmp_path: Path
) -> None:
    """The issue's scenario: a consumer (group) that reads part of the feed before the
    faults and the rest after them gets every change of the change table, once, in seq
    order, across the publisher killed -9 three times (mid-way in what it follows,
    catching up, waiting for the bus), the bus away 30 s, the bus restarted (stopped,
    then killed -9)."""
    t0 = time.monotonic()
    db = str(tmp_path / "m.sqlite")
    mirror = sync(start, db)
    wait_committed(db, 1000)  # the day's first pass; then live fixtures trickle in
    p = publisher(start, db, bus.url)
    reaches(p, committed(db))
    early = asyncio.run(consume(bus.url))  # the consumer's first read, before any fault
    assert early and max(g.seq for g in early) >= 1000

    # 1: killed as it follows, having published some.
    reaches(p, committed(db))
    p.kill()
    wait_committed(db, committed(db) + 20)  # committed meanwhile: a backlog
    # 2: killed as it catches up with that.
    p = publisher(start, db, bus.url)
    p.wait_for(RESUMES, 30)
    p.kill()
    wait_committed(db, committed(db) + 10)
    p = publisher(start, db, bus.url)
    p.wait_for(RESUMES, 30)
    print(f"after the kill as it caught up: the bus {resumed_after(p)}")
    reaches(p, committed(db))

    # The bus away for 30 s, the publisher and sync running; 3: killed meanwhile.
    bus.stop()
    down = time.monotonic()
    p.wait_for("cannot reach", 15)  # said once: its next publish found no bus
    p.kill()
    p = publisher(start, db, bus.url)
    p.wait_for("cannot reach", 15)
    assert "waiting for it, nothing is lost" in p.line, p.line
    during = committed(db)
    time.sleep(max(0.0, OUTAGE - (time.monotonic() - down)))  # the outage itself
    held = committed(db)
    assert held > during  # sync went on committing while the bus was away
    bus.start()
    p.wait_for(RESUMES, 30)
    reaches(p, held, 30)
    print(f"after {time.monotonic() - down:.1f} s, the bus back: {resumed_after(p)}")

    # The bus restarted under it: stopped and started, then killed -9 and started.
    for kill in (False, True):
        began = time.monotonic()
        bus.stop(kill=kill)
        bus.start()
        since = committed(db)
        reaches(p, since + 1, 30)  # publishing what came after the restart
        print(
            f"the bus {'killed' if kill else 'stopped'} and started: publishing again "
            f"{time.monotonic() - began:.1f} s after"
        )

    assert mirror.stop() == 0
    last = committed(db)
    reaches(p, last, 30)
    late = asyncio.run(consume(bus.url))
    want = asyncio.run(seqs(db))
    assert want[-1] == last and late
    once_in_order(early + late, want)
    assert p.stop() == 0
    print(
        f"{len(want)} changes read once, in order ({len(early)} before the faults), "
        f"in {time.monotonic() - t0:.1f} s"
    )


def test_of_two_publishers_of_one_stream_one_publishes_and_its_standby_takes_over(
    start: Start, bus: Bus, tmp_path: Path
) -> None:
    db = str(tmp_path / "m.sqlite")
    mirror = sync(start, db)
    wait_committed(db, 1000)
    a = publisher(start, db, bus.url)
    a.wait_for("publisher: holding the lease", 30)
    b = publisher(start, db, bus.url)
    b.wait_for("publisher: standby for", 30)
    assert f" pid {a.proc.pid} " in b.line and "is the publisher" in b.line, b.line
    reaches(a, committed(db))
    assert a.role(ROLE) == "publisher" and a.value(PUBLISHED) > 0
    health = b.health()
    assert health["role"] == "standby" and health["ok"] is True, health
    assert b.role(ROLE) == "standby"
    # The standby publishes nothing, and has not read the bus.
    assert b.value(PUBLISHED) == 0 and b.value(POSITION) == 0
    assert RESUMES not in "".join(b.drain())

    killed = a.kill()
    took = b.wait_for("publisher: holding the lease", TAKEOVER) - killed
    assert took < TAKEOVER
    b.wait_for(RESUMES, TAKEOVER)
    print(f"takeover after kill -9: {took:.2f} s ({resumed_after(b)})")
    assert b.role(ROLE) == "publisher"
    assert mirror.stop() == 0
    last = committed(db)
    reaches(b, last)
    assert b.value(PUBLISHED) > 0
    once_in_order(asyncio.run(consume(bus.url)), asyncio.run(seqs(db)))
    assert b.stop() == 0


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGTERM, 0), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"]
)
def test_a_signal_ends_a_follower_once_what_is_committed_is_published(
    start: Start, bus: Bus, once: Path, tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    """SIGTERM (how a follower is stopped) exits 0, Ctrl-C 130: each after publishing
    every change committed (the signal comes as it starts on the backlog)."""
    db = copy(once, tmp_path / "m.sqlite")
    want = asyncio.run(seqs(db))
    p = publisher(start, db, bus.url)
    t0 = time.monotonic()
    p.wait_for(RESUMES, 30)
    assert "after change 0 " in p.line, p.line
    t1 = time.monotonic()
    assert p.signal(sig) == code, p.drain()
    print(f"started in {t1 - t0:.2f} s, ended {time.monotonic() - t1:.2f} s after {sig.name}")
    said = "".join(p.drain())
    assert f"it holds the feed up to change {want[-1]}\n" in said, said
    assert "interrupted" not in said, said
    once_in_order(asyncio.run(consume(bus.url)), want)


def test_each_outage_of_the_bus_is_said_and_counted(start: Start, bus: Bus, tmp_path: Path) -> None:
    db = str(tmp_path / "m.sqlite")
    sync(start, db)
    wait_committed(db, 1000)
    p = publisher(start, db, bus.url)
    reaches(p, committed(db))
    for n in (1, 2):
        bus.stop()
        asyncio.run(until(lambda: p.value("asyncsports_bus_connected") == 0, within=15))
        bus.start()
        reaches(p, committed(db) + 1, 30)
        said = [line for line in p.drain() if "cannot reach" in line]
        assert (len(said), p.value("asyncsports_bus_outages_total")) == (n, n), said


def add_change(db: str) -> int:
    """A change committed to ``db`` (a copy of its last one, under a seq of its own), as
    a writer would; its seq."""
    with closing(sqlite3.connect(db, timeout=30, isolation_level=None)) as file:
        file.execute(
            "INSERT INTO changes (committed_at, op, tbl, key, row) SELECT "
            "committed_at, op, tbl, key, row FROM changes ORDER BY seq DESC LIMIT 1"
        )
        return int(file.execute("SELECT max(seq) FROM changes").fetchone()[0])


@pytest.mark.parametrize("bus", ["redis"], indirect=True)  # the lease is the database's
def test_a_publisher_whose_lease_is_lost_stands_by_once_then_publishes_in_one_new_term(
    start: Start, bus: Bus, once: Path, tmp_path: Path
) -> None:
    """Issue 41: the file's write lock held by another connection (longer than the lease
    lasts): the publisher cannot renew, loses the lease, stands by, and once the lock is
    let go takes it over in one new term and publishes what comes next. Before: 1,900 to
    2,500 terms every 10 s, at a full core, for ever (each new term's run returned at
    once, the lost term's stop still set)."""
    db = copy(once, tmp_path / "m.sqlite")
    p = publisher(start, db, bus.url)
    reaches(p, committed(db))
    with closing(sqlite3.connect(db, isolation_level=None)) as file:
        file.execute("BEGIN IMMEDIATE")  # the write lock: no renewal gets through
        p.wait_for("lost the lease", 60)
        file.execute("ROLLBACK")
    p.wait_for("(lease term 2)", 60)
    # Two changes committed one after the other, each published: time for a loop of
    # terms to show, counted below.
    reaches(p, add_change(db))
    reaches(p, add_change(db))
    assert p.stop() == 0
    said = p.drain()
    terms = [line for line in said if "(lease term " in line]
    assert len(terms) == 2, terms[:5]
    assert sum("lost the lease" in line for line in said) == 1
    assert "it holds the feed up to change " in "".join(said)
