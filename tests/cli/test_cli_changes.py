"""What ``asyncsports changes`` and ``sync`` say, taken at their word (issue 43, items 6
and 7): a database that is not a mirror is refused naming it, one a mirror has not
written to yet prints nothing and says so, a publisher stopped before it reached its bus
says that nothing was published, and sync's counts of fixtures say what they count."""

from __future__ import annotations

import asyncio
import re
import signal
from pathlib import Path

import msgspec
import pytest
from support import CLI, TIMEOUT, run, until
from support.procs import Command
from support.samples import fixture
from support.servers import PostgresServer, free_port

from asyncsports.bus import Publisher
from asyncsports.models import Fixture, decode
from asyncsports.store import Write, fixture_row, open_mirror, redact_url
from asyncsports.sync import Standby

pytestmark = pytest.mark.slow  # the command in subprocesses


async def _new_mirror(db: Path | str, *, changes: int = 0) -> None:
    """A mirror database as ``sync`` makes it as it starts, and ``changes`` changes in it."""
    store = await open_mirror(db)
    try:
        for n in range(changes):
            f = decode(Fixture, msgspec.json.encode(fixture(n)))
            await store.write([Write("fixtures", [tuple(fixture_row("basketball", f))])])
    finally:
        await store.close()


def _refusal(name: str) -> str:
    return (
        f"asyncsports: error: {name} is not a mirror: it holds records but never logged a "
        "change (a backfill logs none), so its change feed is empty; asyncsports sync --db "
        f"{name} makes it a mirror, logging each change from then on"
    )


@pytest.fixture(scope="module")
def backfilled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("backfill") / "sports.sqlite"
    done = run("--emulator", "backfill", "-s", "soccer", "--db", str(db))
    assert done.returncode == 0, done.stderr
    return db


@pytest.mark.parametrize(
    "more",
    [[], ["--follow"], ["--after", "3"], ["--to", "redis://127.0.0.1:{port}/0", "--follow"]],
    ids=["print", "follow", "after", "to"],
)
def test_a_backfill_database_is_refused_naming_it_and_what_makes_a_mirror(
    backfilled: Path, more: list[str]
) -> None:
    """Issue 43, item 6: every database holds every table, so ``changes`` read a
    backfill's empty change log and exited 0 printing nothing; with --follow (and --to
    ... --follow) it waited for ever. Now: exit 13, one line, before any bus is tried."""
    args = [a.format(port=free_port()) for a in more]
    done = run("changes", "--db", str(backfilled), *args)
    assert done.returncode == 13, done.stderr
    assert done.stderr.splitlines() == [_refusal(str(backfilled))]
    assert done.stdout == ""


def test_a_backfill_database_on_postgresql_is_refused_too(postgres: PostgresServer) -> None:
    url = postgres.create_database().replace("postgres@", "postgres:s3cret@")
    done = run("--emulator", "backfill", "-s", "soccer", "--db", url)
    assert done.returncode == 0, done.stderr
    refused = run("changes", "--db", url, "--follow")
    assert refused.returncode == 13, refused.stderr
    assert refused.stderr.splitlines() == [_refusal(redact_url(url))]
    assert "s3cret" not in refused.stderr


def test_a_mirror_with_nothing_yet_prints_nothing_and_says_so_or_waits(tmp_path: Path) -> None:
    """A mirror sync has just made (nothing committed yet) is no backfill's database:
    without --follow nothing is printed, exit 0, and a note says why; with --follow it
    waits for the first change and prints it."""
    db = tmp_path / "m.sqlite"
    asyncio.run(_new_mirror(db))
    done = run("changes", "--db", str(db))
    assert (done.returncode, done.stdout) == (0, ""), done.stderr
    assert done.stderr == f"asyncsports: no change committed to {db} yet\n"
    follower = Command([*CLI, "changes", "--db", str(db), "--follow"], out=True)
    try:
        asyncio.run(_new_mirror(db, changes=1))  # the mirror's first commit
        line = follower.wait_for_out('"seq"', TIMEOUT)
        code = follower.signal(signal.SIGTERM, TIMEOUT)
    finally:
        follower.stop()
    assert msgspec.json.decode(line)["seq"] == 1
    assert code == 0, follower.drain()


def test_a_publisher_stopped_before_it_reached_its_bus_says_nothing_was_published(
    tmp_path: Path,
) -> None:
    """Issue 43, item 7: Ctrl-C on a bus never reached said "it holds the feed up to
    change 0", a position never read from it."""
    db = tmp_path / "m.sqlite"
    asyncio.run(_new_mirror(db, changes=2))
    to = f"redis://127.0.0.1:{free_port()}/0"
    args = [*CLI, "changes", "--db", str(db), "--to", to, "--follow", "--connect-timeout", "1"]
    command = Command(args)
    try:
        command.wait_for("cannot reach", TIMEOUT)  # the bus is away, waited for
        code = command.signal(signal.SIGINT, TIMEOUT)
    finally:
        command.stop()
    said = command.drain()
    assert code == 130, said
    assert said[-1] == f"asyncsports: nothing published: {to} asyncsports:* was never reached\n"
    assert not any("holds the feed" in line for line in said), said


async def test_a_publisher_that_only_stood_by_says_so(tmp_path: Path) -> None:
    """Stopped while another process held the stream's lease: it never tried the bus."""
    db = tmp_path / "m.sqlite"
    await _new_mirror(db, changes=1)
    to = f"redis://127.0.0.1:{free_port()}/0"
    publisher = Publisher(db, to, connect_timeout=1)  # its bus away: it waits for it
    holder = Standby(publisher, name=f"bus {publisher.target.shown}")  # as the CLI names it
    held = asyncio.create_task(holder.run())
    try:
        await until(lambda: holder.role == "writer", TIMEOUT)
        command = Command([*CLI, "changes", "--db", str(db), "--to", to, "--follow"])
        try:
            await asyncio.to_thread(command.wait_for, "standby for", TIMEOUT)
            code = await asyncio.to_thread(command.signal, signal.SIGTERM, TIMEOUT)
        finally:
            await asyncio.to_thread(command.stop)
    finally:
        holder.stop()
        await held
    said = command.drain()
    assert code == 0, said
    assert (
        said[-1] == f"asyncsports: nothing published to {to} asyncsports:*: this process stood by\n"
    )


def test_sync_says_what_it_carries_on_with_and_what_it_follows(tmp_path: Path) -> None:
    """Issue 43, item 7: a new mirror said "carrying on with 0 live and 0 ended fixtures"
    (those the database held from an earlier run), then "4 live fixtures followed"
    (those the listings found): two counts of different things, read as one."""
    db = str(tmp_path / "m.sqlite")
    args = ("--emulator", "sync", "--once", "-s", "basketball", "--db", db)
    first = run(*args)
    assert first.returncode == 0, first.stderr
    assert "; no fixture under way in the database to carry on with\n" in first.stderr
    found = re.search(r"; (\d+) live fixtures followed at the end;", first.stderr)
    assert found is not None and int(found[1]) > 0, first.stderr
    again = run(*args)
    assert again.returncode == 0, again.stderr
    assert (
        f"; carrying on from the database with {found[1]} live fixtures to follow and 0 "
        "ended ones to read in full\n"
    ) in again.stderr
