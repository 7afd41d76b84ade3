"""The change feed's publisher under faults (issue 34), against the real servers: the bus
away for a while, restarted, killed; the database restarted under it; the connection cut
in the middle of a batch; what /metrics and /healthz say meanwhile; and the usage errors
of ``changes --to``.

Each test runs a following :class:`~asyncsports.sync.Publisher` in the test's process,
commits more changes while the fault lasts (the emulator's clock moved on, the mirror run
again), and reads the bus back as a consumer of the guide does (tests/support/bus.py):
every change once, in order. Waits are for conditions, each bounded; an outage is held
until the publisher has failed to reach the bus a few times.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families
from support import ENGINES, ainvoke, until
from support.bus import KINDS, consume, once_in_order, seqs
from support.proxy import Proxy
from support.servers import Bus, PostgresServer, free_port, postgres_server
from support.webhooks import SECRET

import asyncsports.bus._publisher as publish_module
from asyncsports import RetryPolicy
from asyncsports._wire.bus import message
from asyncsports.bus import serve_publisher_metrics
from asyncsports.emulator import Emulator
from asyncsports.store import open_mirror
from asyncsports.sync import Mirror, Publisher, Standby

# Tried again within half a second: an outage of a few seconds is tried many times.
FAST = RetryPolicy(max_retries=2**31, base=0.05, cap=0.5)
WITHIN = 30  # seconds any one condition may take on a loaded machine


# ------------------------------------------------------------------------------ helpers


class Feed:
    """A mirror database the emulator fills, one pass at a time (:meth:`more`)."""

    def __init__(self, emulator: Emulator, mirror: Mirror, db: str) -> None:
        self.emulator, self.mirror, self.db = emulator, mirror, db

    async def more(self) -> list[int]:
        """The service an hour on, mirrored again: every seq now, more than before."""
        before = await seqs(self.db)
        self.emulator.clock.advance(3600)  # live fixtures move on: more actions
        await self.mirror.once()
        now = await seqs(self.db)
        assert len(now) > len(before)
        return now


@contextlib.asynccontextmanager
async def feed(emulator: Emulator, db: str) -> AsyncIterator[Feed]:
    """A :class:`Feed` of ``db`` after its first pass over basketball."""
    async with emulator.client() as client:
        mirror = Mirror(client, db, sports=["basketball"], clock=emulator.clock.time)
        await mirror.once()
        yield Feed(emulator, mirror, db)


@contextlib.asynccontextmanager
async def following(publisher: Publisher) -> AsyncIterator[Publisher]:
    """``publisher.run()`` as a task; stopped (it returns in time) on the way out."""
    task = asyncio.create_task(publisher.run())
    try:
        yield publisher
    finally:
        publisher.stop()
        await asyncio.wait_for(task, WITHIN)


async def caught_up(publisher: Publisher, want: list[int]) -> None:
    await until(lambda: publisher.position == want[-1], within=WITHIN)


@pytest.fixture(params=ENGINES)
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty mirror database of each engine."""
    if request.param == "sqlite":
        return str(tmp_path / "m.sqlite")
    return str(request.getfixturevalue("postgres_url"))


class Said(logging.Handler):
    """The messages logged to it, in order."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def said() -> Iterator[list[str]]:
    """What the ``asyncsports.sync`` logger says, at INFO and above (read at the logger
    itself: a command run earlier in the process may have stopped its propagation)."""
    logger = logging.getLogger("asyncsports.sync")
    handler, level = Said(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler.messages
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


class Attempts:
    """Counts the publisher's connections to the bus that failed (``connect`` wrapped)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.failed = 0
        real = publish_module.connect

        async def counted(*args: object, **kwargs: object) -> object:
            try:
                return await real(*args, **kwargs)  # type: ignore[arg-type]
            except Exception:
                self.failed += 1
                raise

        monkeypatch.setattr(publish_module, "connect", counted)

    async def wait(self, more: int) -> None:
        """Until ``more`` further connections have failed: the outage held that long."""
        want = self.failed + more
        await until(lambda: self.failed >= want, within=WITHIN)


@pytest.fixture
def attempts(monkeypatch: pytest.MonkeyPatch) -> Attempts:
    return Attempts(monkeypatch)


def cannot_reach(said: list[str]) -> list[str]:
    return [m for m in said if "cannot reach" in m]


# ---------------------------------------------------------- 1. the bus away for a while


async def test_a_bus_away_for_a_while_is_said_once_and_caught_up(
    sports_emulator: Emulator, db: str, bus: Bus, said: list[str], attempts: Attempts
) -> None:
    publisher = Publisher(db, bus.url, connect_timeout=1, backoff=FAST)
    async with feed(sports_emulator, db) as changes, following(publisher):
        first = await seqs(db)
        await caught_up(publisher, first)
        before = await consume(bus.url)  # the consumer group reads on across the outage
        bus.stop()
        await changes.more()  # committed while the bus is away
        await until(lambda: publisher.outages == 1 and not publisher.connected, within=WITHIN)
        await attempts.wait(6)  # tried again and again, said once
        await changes.more()
        assert publisher.position == first[-1]
        bus.start()
        later = await seqs(db)
        await caught_up(publisher, later)
    assert len(cannot_reach(said)) == 1, said
    assert publisher.outages == 1
    assert sum("is back" in m for m in said) == 1, said
    after = await consume(bus.url)
    once_in_order(before + after, later)
    assert {g.seq for g in before} == set(first)


async def test_each_outage_is_said_once_and_counted(
    tmp_path: Path, sports_emulator: Emulator, bus: Bus, said: list[str], attempts: Attempts
) -> None:
    """A second outage after the bus came back is a new one: said and counted again."""
    db = str(tmp_path / "m.sqlite")
    publisher = Publisher(db, bus.url, connect_timeout=1, backoff=FAST)
    async with feed(sports_emulator, db) as changes, following(publisher):
        await caught_up(publisher, await seqs(db))
        for n in (1, 2):
            bus.stop()
            await changes.more()
            await until(lambda n=n: publisher.outages == n, within=WITHIN)  # type: ignore[misc]
            await attempts.wait(3)
            bus.start()
            await caught_up(publisher, await seqs(db))
            assert publisher.connected
    assert len(cannot_reach(said)) == 2, said
    once_in_order(await consume(bus.url), await seqs(db))


# Redis only: on NATS the test passed before the fix too (so it tests nothing there), and
# on a loaded Python 3.11 leg it failed once, its cause not yet read. A webhook endpoint
# holding a request: the same loop's cancel, through aiohttp.
@pytest.mark.parametrize("bus", ["redis", "webhook"], indirect=True)
async def test_a_standby_cancelled_while_its_bus_holds_a_batch_ends_at_once(
    tmp_path: Path, sports_emulator: Emulator, bus: Bus
) -> None:
    """A cancel is not a stop: a standby's publisher cancelled while a batch waits for the
    bus's answer ends with it, without the grace a stop is given to finish (which a bus
    that holds the batch would spend in full)."""
    db = str(tmp_path / "m.sqlite")
    async with feed(sports_emulator, db) as changes, Proxy(bus.port) as proxy:
        url = bus.url.replace(str(bus.port), str(proxy.port))
        publisher = Publisher(db, url, connect_timeout=1, backoff=FAST)
        running = asyncio.create_task(Standby(publisher, name="bus", poll=0.1).run())
        await caught_up(publisher, await seqs(db))
        proxy.hold()
        before = publisher.position
        await changes.more()
        await until(lambda: publisher.head > (before or 0), within=WITHIN)  # a batch sent
        running.cancel()
        # Half the 5 s grace of a stop (sync._standby.GRACE).
        done, _ = await asyncio.wait([running], timeout=2.5)
        proxy.release()
    assert done and running.cancelled()
    assert publisher.position == before


# ----------------------------------------------------- 2. the bus restarted and killed


@pytest.mark.parametrize("kill", [False, True], ids=["restarted", "killed"])
async def test_a_bus_restarted_or_killed_loses_nothing_and_doubles_nothing(
    tmp_path: Path, sports_emulator: Emulator, bus: Bus, kill: bool
) -> None:
    """Stopped (SIGTERM) or killed (SIGKILL) while the publisher works through its backlog,
    in small batches: Redis keeps what its AOF fsynced, JetStream its file store; the
    publisher reads where the bus stands again and sends the rest, once."""
    db = str(tmp_path / "m.sqlite")
    publisher = Publisher(db, bus.url, batch=7, connect_timeout=1, backoff=FAST)
    async with feed(sports_emulator, db) as changes:
        first = await seqs(db)
        async with following(publisher):
            await until(lambda: (publisher.position or 0) >= first[len(first) // 4], within=WITHIN)
            bus.stop(kill=kill)
            assert (publisher.position or 0) < first[-1]  # in the middle of the backlog
            await changes.more()
            await until(lambda: publisher.outages == 1, within=WITHIN)
            bus.start()
            await changes.more()
            later = await seqs(db)
            await caught_up(publisher, later)
    once_in_order(await consume(bus.url), later)
    assert publisher.published + publisher.duplicates <= len(later)


# ------------------------------------ 2b. another publisher of the database, meanwhile


class Meanwhile:
    """``connect`` wrapped: on the first bus a publisher opens, ``meanwhile`` runs once,
    right before the publisher first reads where the feed stands, so that what it read of
    its database before is older than the bus (another publisher of the same database
    published changes committed since, as a copy or a standby's race does)."""

    def __init__(
        self, monkeypatch: pytest.MonkeyPatch, meanwhile: Callable[[], Awaitable[None]]
    ) -> None:
        self.ran = False
        real = publish_module.connect

        async def wrapped(*args: object, **kwargs: object) -> object:
            bus: Any = await real(*args, **kwargs)  # type: ignore[arg-type]
            if not self.ran:
                position = bus.position

                async def late(origin: str | None) -> int:
                    if not self.ran:
                        self.ran = True
                        await meanwhile()
                    got: int = await position(origin)
                    return got

                bus.position = late
            return bus

        monkeypatch.setattr(publish_module, "connect", wrapped)


@pytest.mark.parametrize("empty", [False, True], ids=["more", "first"])
async def test_changes_published_by_a_copy_since_the_database_was_read_are_no_refusal(
    tmp_path: Path,
    sports_emulator: Emulator,
    bus: Bus,
    monkeypatch: pytest.MonkeyPatch,
    empty: bool,
) -> None:
    """A publisher reads its database's head, then where the bus stands; in between, a
    copy of it publishes changes committed meanwhile (``first``: the database's first
    ones, the database empty when read). Those are this database's: it goes on, where it
    used to stop with a BusError ("the bus is at change N, but the database has only M";
    ``first``: "another database"), found by the stateful test."""
    db = str(tmp_path / "m.sqlite")
    async with sports_emulator.client() as client:
        mirror = Mirror(client, db, sports=["basketball"], clock=sports_emulator.clock.time)
        if empty:
            await (await open_mirror(db)).close()  # its tables, no change yet
        else:
            await mirror.once()

        async def meanwhile() -> None:
            before = await seqs(db)
            sports_emulator.clock.advance(3600)  # live fixtures move on: more actions
            await mirror.once()
            assert len(await seqs(db)) > len(before)
            await Publisher(db, bus.url).once()

        hook = Meanwhile(monkeypatch, meanwhile)
        publisher = Publisher(db, bus.url, connect_timeout=2, backoff=FAST)
        await publisher.once()
    assert hook.ran
    want = await seqs(db)
    assert publisher.position == want[-1]
    once_in_order(await consume(bus.url), want)


# ------------------------------------------------- 3. the database restarted under it


@pytest.fixture(scope="module")
def own_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL of this module's own, to restart (the session's is everyone's)."""
    with postgres_server() as server:
        yield server


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["fast", "immediate"])
async def test_the_database_restarted_under_the_follower(
    own_postgres: PostgresServer,
    sports_emulator: Emulator,
    bus: Bus,
    mode: str,
    said: list[str],
) -> None:
    """PostgreSQL stopped (``fast``: clients told; ``immediate``: as a crash) and started
    while the publisher follows it: it reconnects and carries on, and the bus is never
    said to be away (it was not)."""
    db = own_postgres.create_database()
    publisher = Publisher(db, bus.url, connect_timeout=2, backoff=FAST)
    async with feed(sports_emulator, db) as changes, following(publisher):
        first = await seqs(db)
        await caught_up(publisher, first)
        await asyncio.to_thread(own_postgres.stop, mode)
        await asyncio.to_thread(own_postgres.start)
        later = await changes.more()
        await caught_up(publisher, later)
        later = await changes.more()  # and once more, on the follower's new connection
        await caught_up(publisher, later)
    assert publisher.outages == 0 and cannot_reach(said) == [], said
    once_in_order(await consume(bus.url), later)


# -------------------------------------------------------------- 4. /metrics, /healthz


class Scrape:
    """The publisher's metrics server, read as Prometheus and a health check do."""

    def __init__(self, session: aiohttp.ClientSession, base: str) -> None:
        self.session, self.base = session, base

    async def metrics(self) -> dict[str, float]:
        """Each sample by its name (and ``le``, for the histogram's buckets)."""
        async with self.session.get(self.base + "/metrics") as r:
            assert r.status == 200
            text = await r.text()
        out: dict[str, float] = {}
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                le = s.labels.get("le")
                out[s.name + (f"{{le={le}}}" if le else "")] = s.value
        return out

    async def health(self) -> int:
        async with self.session.get(self.base + "/healthz") as r:
            await r.read()
            return r.status

    async def connected(self, value: float) -> bool:
        return (await self.metrics())["asyncsports_bus_connected"] == value


async def behind_is(at: Scrape, n: int) -> bool:
    return (await at.metrics())["asyncsports_bus_behind"] == n


def lag_buckets(got: dict[str, float]) -> list[float]:
    return [v for k, v in got.items() if k.startswith("asyncsports_bus_lag_seconds_bucket")]


@pytest.mark.parametrize("bus", KINDS, indirect=True)
async def test_metrics_and_healthz_while_the_bus_comes_and_goes(
    tmp_path: Path, sports_emulator: Emulator, bus: Bus
) -> None:
    db = str(tmp_path / "m.sqlite")
    publisher = Publisher(db, bus.url, batch=100, connect_timeout=1, backoff=FAST)
    async with (
        feed(sports_emulator, db) as changes,
        aiohttp.ClientSession() as session,
        following(publisher),
    ):
        runner = await serve_publisher_metrics(publisher, 0)
        try:
            at = Scrape(session, f"http://127.0.0.1:{runner.addresses[0][1]}")
            first = await seqs(db)
            await caught_up(publisher, first)
            got = await at.metrics()
            assert got["asyncsports_bus_position"] == first[-1]
            assert got["asyncsports_bus_published_total"] == len(first)
            assert got["asyncsports_bus_connected"] == 1
            assert got["asyncsports_bus_behind"] == 0
            buckets = lag_buckets(got)
            assert len(buckets) == 14 and buckets == sorted(buckets)
            assert buckets[-1] == got["asyncsports_bus_lag_seconds_count"] == len(first)
            assert got["asyncsports_bus_lag_seconds_sum"] > 0  # the emulator's commits: past
            assert await at.health() == 200

            bus.stop()
            later = await changes.more()
            await until(lambda: at.connected(0), within=WITHIN)
            assert await at.health() == 503
            got = await at.metrics()
            assert got["asyncsports_bus_outages_total"] == 1
            assert got["asyncsports_bus_position"] == first[-1]
            # What is committed meanwhile and waits for the bus: read from the database
            # while the bus is tried again.
            behind = later[-1] - first[-1]
            await until(lambda: behind_is(at, behind), within=WITHIN)

            bus.start()
            await caught_up(publisher, later)
            await until(lambda: at.connected(1), within=WITHIN)
            assert await at.health() == 200
            got = await at.metrics()
            assert got["asyncsports_bus_position"] == later[-1]
            assert got["asyncsports_bus_published_total"] == len(later)
            assert lag_buckets(got)[-1] == got["asyncsports_bus_lag_seconds_count"] == len(later)
        finally:
            await runner.cleanup()
    once_in_order(await consume(bus.url), later)


async def test_healthz_of_an_idle_publisher_whose_bus_went_away(
    tmp_path: Path, sports_emulator: Emulator, bus: Bus
) -> None:
    """Nothing to publish, the bus stopped: /healthz should say so all the same."""
    db = str(tmp_path / "m.sqlite")
    publisher = Publisher(db, bus.url, connect_timeout=1, backoff=FAST)
    async with (
        feed(sports_emulator, db),
        aiohttp.ClientSession() as session,
        following(publisher),
    ):
        runner = await serve_publisher_metrics(publisher, 0)
        try:
            at = Scrape(session, f"http://127.0.0.1:{runner.addresses[0][1]}")
            await caught_up(publisher, await seqs(db))
            assert await at.health() == 200
            bus.stop()
            await until(lambda: at.connected(0), within=3)
            assert await at.health() == 503
            bus.start()
            await until(lambda: at.connected(1), within=WITHIN)
            assert await at.health() == 200
        finally:
            await runner.cleanup()


# ------------------------------------------------------- 5. a connection cut mid-batch


class Cutter:
    """A loopback TCP proxy to ``port`` that cuts each of its first ``cuts`` connections
    once ``after`` bytes have gone from the client to the server: the server gets a part
    of what was sent (half a command, a transaction without its EXEC), the client an
    abrupt end."""

    def __init__(self, port: int, after: int, cuts: int) -> None:
        self.port, self.after, self.cuts = port, after, cuts
        self.made = 0
        self.cut = 0
        self.server: asyncio.Server | None = None
        self.tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> Cutter:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    @property
    def listen(self) -> int:
        assert self.server is not None
        port: int = self.server.sockets[0].getsockname()[1]
        return port

    async def _serve(self, down_r: asyncio.StreamReader, down_w: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.tasks.add(task)
        n, self.made = self.made, self.made + 1
        budget = self.after if n < self.cuts else None
        try:
            up_r, up_w = await asyncio.open_connection("127.0.0.1", self.port)
        except OSError:
            down_w.transport.abort()
            return
        ends = (down_w, up_w)

        async def pipe(
            src: asyncio.StreamReader, dst: asyncio.StreamWriter, left: int | None
        ) -> None:
            while True:
                data = await src.read(65536)
                if not data:
                    return
                if left is not None and len(data) >= left:
                    dst.write(data[:left])
                    await dst.drain()
                    self.cut += 1
                    return
                if left is not None:
                    left -= len(data)
                dst.write(data)
                await dst.drain()

        try:
            ups = asyncio.ensure_future(pipe(down_r, up_w, budget))
            downs = asyncio.ensure_future(pipe(up_r, down_w, None))
            await asyncio.wait([ups, downs], return_when=asyncio.FIRST_COMPLETED)
            for t in (ups, downs):
                t.cancel()
            await asyncio.gather(ups, downs, return_exceptions=True)
        finally:
            for w in ends:
                w.transport.abort()
            self.tasks.discard(task)


async def body_bytes(db: str) -> int:
    store = await open_mirror(db)
    try:
        return sum(len(message(*line).body) for line in await store.change_rows(0, 10**9))
    finally:
        await store.close()


@pytest.mark.parametrize(("batch", "share"), [(13, 0.1), (250, 0.27)])
async def test_a_connection_cut_mid_batch_loses_nothing_and_doubles_nothing(
    tmp_path: Path, sports_emulator: Emulator, bus: Bus, batch: int, share: float
) -> None:
    """Three connections, each cut part-way into what the publisher sends (at a share of
    the feed's bytes that no batch ends on): Redis runs a transaction whole or not at all,
    JetStream stores what arrived, and the publisher, reading where the bus stands, sends
    the rest once."""
    db = str(tmp_path / "m.sqlite")
    async with feed(sports_emulator, db):
        want = await seqs(db)
        total = await body_bytes(db)
        async with Cutter(bus.port, after=int(total * share), cuts=3) as proxy:
            url = bus.url.replace(str(bus.port), str(proxy.listen))
            publisher = Publisher(db, url, batch=batch, connect_timeout=1, backoff=FAST)
            async with following(publisher):
                await caught_up(publisher, want)
            assert proxy.cut == 3 and proxy.made >= 4
    assert publisher.outages == 3
    once_in_order(await consume(bus.url), want)


# --------------------------------------------------------- 6. changes --to, its errors


@pytest.fixture
async def mirror_file(tmp_path: Path, sports_emulator: Emulator) -> str:
    db = str(tmp_path / "m.sqlite")
    async with feed(sports_emulator, db):
        pass
    return db


def error_line(stderr: str) -> str:
    (line,) = [x for x in stderr.splitlines() if x.startswith("asyncsports: error: ")]
    return line


@pytest.mark.parametrize(
    ("to", "extra", "named"),
    [
        ("ftp://127.0.0.1:1", [], "a bus is a redis://..., nats://... or https://... URL"),
        ("{bus}", ["--consumer", "c"], "takes no --consumer or --after"),
        ("{bus}", ["--after", "3"], "takes no --consumer or --after"),
        ("nats://127.0.0.1:{port}?bogus=1", [], "unknown option 'bogus'"),
        ("redis://127.0.0.1:{port}/0?maxlen=many", [], "maxlen must be a number"),
        ("http://example.com/hook", [], "plain http:// only to this machine"),
        ("http://127.0.0.1:{port}/hook", [], "set ASYNCSPORTS_WEBHOOK_SECRET"),
        ("https://example.com/hook?concurency=2", [], "did you mean 'concurrency'"),
    ],
    ids=[
        "scheme",
        "consumer",
        "after",
        "unknown-option",
        "bad-number",
        "plain-http",
        "no-secret",
        "webhook-option",
    ],
)
async def test_changes_to_usage_errors_exit_2_naming_to(
    tmp_path: Path, to: str, extra: list[str], named: str
) -> None:
    db = tmp_path / "m.sqlite"
    db.touch()  # there, so that the error is the usage's and not a missing database's
    port = free_port()
    url = to.format(bus=f"redis://127.0.0.1:{port}/0", port=port)
    result = await ainvoke("changes", "--db", str(db), "--to", url, *extra)
    assert result.exit_code == 2, result.output
    line = error_line(result.stderr)
    assert "'--to'" in line and named in line, line
    assert "Traceback" not in result.stderr


def leases(db: str) -> list[tuple[object, ...]] | None:
    """The rows of ``db``'s lease table (None: no table, no lease ever taken)."""
    with contextlib.closing(sqlite3.connect(db)) as file:
        try:
            return file.execute("SELECT * FROM sync_lease").fetchall()
        except sqlite3.OperationalError:
            return None


@pytest.mark.parametrize(
    ("to", "named"),
    [
        (
            "redis://127.0.0.1:{port}/0?max_len=5",
            "unknown option 'max_len' (did you mean 'maxlen'?",
        ),
        ("redis://127.0.0.1:{port}/0?foo=bar", "unknown option 'foo' (known: prefix, maxlen, db"),
        ("nats://127.0.0.1:{port}?duplicate_window=1e300", "from 0.1 to 86400"),
        (
            "nats://127.0.0.1:{port}?dup_window=5",
            "(did you mean 'duplicate_window'?; known: prefix",
        ),
    ],
    ids=["misspelt", "unknown", "out-of-range", "nats-misspelt"],
)
async def test_a_bad_bus_option_is_a_usage_error_before_any_lease_or_connection(
    mirror_file: str, to: str, named: str
) -> None:
    """Issue 41 (and 43, item 4): a misspelt or unknown Redis option was redis-py's
    TypeError at connect (exit 1), after the lease was taken; a NATS window out of range
    an OverflowError. Now: exit 2 at once, naming the option and the known ones, the
    database's leases untouched (the bus is not even there)."""
    before = leases(mirror_file)
    url = to.format(port=free_port())
    result = await ainvoke("changes", "--db", mirror_file, "--to", url, "--connect-timeout", "1")
    assert result.exit_code == 2, result.output
    line = error_line(result.stderr)
    assert "'--to'" in line and named in line, line
    assert "Traceback" not in result.stderr
    assert leases(mirror_file) == before


@pytest.mark.parametrize("bus", ["nats"], indirect=True)
async def test_the_duplicate_window_s_bounds_are_what_jetstream_takes(
    mirror_file: str, bus: Bus
) -> None:
    """The least and the most ``?duplicate_window=`` takes make a stream; less is a usage
    error, not JetStream's refusal at the first publish ("duplicates window needs to be
    >= 100ms")."""
    import nats
    from nats.js.api import StreamConfig
    from nats.js.errors import BadRequestError, ServerError

    with pytest.raises(ValueError, match=r"duplicate_window must be a number from 0\.1 to 86400"):
        Publisher(mirror_file, f"{bus.url}?duplicate_window=0.05")
    nc = await nats.connect(bus.url)
    try:
        with pytest.raises((BadRequestError, ServerError), match="duplicates window"):
            await nc.jetstream().add_stream(
                StreamConfig(name="LESS", subjects=["less.>"], duplicate_window=0.05)
            )
    finally:
        await nc.close()
    for n, window in enumerate(("0.1", "86400")):
        url = f"{bus.url}?stream=W{n}&prefix=w{n}&duplicate_window={window}"
        publisher = Publisher(mirror_file, url)
        await publisher.once()
        assert publisher.published > 0
        nc = await nats.connect(bus.url)
        try:
            info = await nc.jetstream().stream_info(f"W{n}")
        finally:
            await nc.close()
        assert info.config.duplicate_window == float(window)


@pytest.mark.parametrize("bus", KINDS, indirect=True)
async def test_changes_to_an_unreachable_bus_exits_22_naming_it(mirror_file: str, bus: Bus) -> None:
    bus.stop()
    args = ("changes", "--db", mirror_file, "--to", bus.url, "--connect-timeout", "2")
    result = await ainvoke(*args, ASYNCSPORTS_WEBHOOK_SECRET=SECRET)  # a webhook's
    assert result.exit_code == 22, result.output
    errors = [x for x in result.stderr.splitlines() if "error" in x.lower()]
    assert len(errors) == 1, result.stderr
    assert errors[0].startswith("asyncsports: error: cannot publish to ")
    assert f"127.0.0.1:{bus.port}" in errors[0]
    assert "Traceback" not in result.stderr
