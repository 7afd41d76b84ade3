"""bus: the change feed onto Redis Streams and NATS JetStream, changes a second and CPU per change vs the floors.

Issue 34 point 6. The case's child writes a mirror file (``asyncsports.store.open_mirror``
makes its schema) whose change table holds ``n`` changes of action rows as the mirror
logs them (the row's columns and the record's JSON text, a few hundred bytes; 100 a
transaction), starts a ``redis-server`` (AOF on, fsynced every second) and a
``nats-server -js`` (file store) of its own on free ports in temporary directories, on
the CPUs the child does not use, then for each bus runs paired rounds of:

- **asyncsports**: ``Publisher(db, url).once()`` from an empty stream: it connects, reads
  where the bus stands, reads the change table 2,000 lines at a time, makes each message
  (:func:`asyncsports._wire.bus.message`) and publishes each batch, counting lags;
- **the floor**: the same message bytes (made before the clock starts), the same batch
  size, by hand: redis-py, one ``MULTI``/``EXEC`` pipeline of ``XADD key MAXLEN ~ N
  <seq>-0 change <body>`` per batch (and the ``SET origin NX``); nats-py,
  ``js.publish_async`` of each message with its ``Nats-Msg-Id`` header, then the batch's
  acks gathered.

Each run writes to a prefix (Redis) or stream (NATS) of its own, checked for ``n``
entries and dropped after it, outside the clock. The figures: changes a second (wall),
client CPU per change (``process_time``: this process, its threads included) and the
median of the per-round ratios to the floor. Who goes first alternates by round.

``live`` (full mode only): ``asyncsports --emulator --emulator-speed 60 sync`` in a
process of its own, and a publisher following its file (``Publisher.run()`` in this
process, its lag histogram at 1 ms resolution) onto each bus in turn: the p99 from a
change's commit to its ack on the bus.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from benchmarks.harness.children import Context
from benchmarks.harness.manifest import Manifest, Params
from benchmarks.harness.registry import Case, Result
from benchmarks.harness.report import Row, median, missing, paired

__all__ = ["CASE", "bus", "make_mirror"]

RATE_TARGET = 50_000.0  # changes a second, each bus (issue 34)
CPU_TARGET = 1.2  # client CPU per change against the floor's
LAG_TARGET = 0.1  # p99 seconds, commit to ack, while sync follows live fixtures
BATCH = 2000  # asyncsports.bus._publisher.BATCH, the floor's too
SERVERS = {"redis": "redis-server", "nats": "nats-server"}


# ------------------------------------------------------------------------- the mirror


def _record(i: int, fixture: str, sport: str, at: str) -> str:
    """An action record as the service sends it (compact JSON, about 600 bytes)."""
    return json.dumps(
        {
            "version": 3,
            "finished": False,
            "fixtureAction": {
                "period": 1 + i % 4,
                "actionId": str(uuid.UUID(int=i)),
                "team": {
                    "id": "b1f2c3d4-0000-4000-8000-000000000007",
                    "name": "Home",
                    "homeTeam": True,
                },
                "sendType": "Confirmed",
                "clockTime": f"{i % 12:02d}:{i % 60:02d}",
                "fixtureId": fixture,
                "timestamp": at,
                "sendTypeId": 5,
                "fixtureSeqNum": i,
                "timelineSequence": float(i),
                "fixtureActionType": "Two Point Shot Made",
                "fixtureActionTypeId": 21,
                "player": {"id": str(uuid.UUID(int=10**6 + i % 24)), "name": "A Player"},
            },
            "fixtureSummary": {
                "isTied": i % 7 == 0,
                "awayTeamScore": i % 97,
                "homeTeamScore": i % 89,
                "currentPeriod": 1 + i % 4,
                "currentStatus": "Live",
                "sport": sport,
            },
        },
        separators=(",", ":"),
    )


async def make_mirror(path: Path, n: int, per_commit: int = 100) -> None:
    """A mirror file of ``path`` whose change table holds ``n`` action changes (inserts,
    ``per_commit`` to a commit time), written straight into the store's own schema."""
    from asyncsports.store import open_mirror

    store = await open_mirror(path)
    await store.close()
    base = time.time() - 3600
    rows = []
    for i in range(1, n + 1):
        sport = "basketball" if i % 3 else "soccer"
        fixture = str(uuid.UUID(int=2**64 + i // 600))
        at = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(base + i // per_commit))
        committed = f"{at}.{(i // per_commit) % 1_000_000:06d}Z"
        record = _record(i, fixture, sport, f"{at}.000Z")
        key = [fixture, str(uuid.UUID(int=i))]
        row = dict(zip(("fixture_id", "action_id"), key, strict=True))
        row |= {
            "sport": sport,
            "seq": i,
            "type": "Two Point Shot Made",
            "send_type": "Confirmed",
            "timestamp": f"{at}.000Z",
            "json": record,
        }
        rows.append((committed, "insert", "actions", json.dumps(key), json.dumps(row)))
    db = sqlite3.connect(path)
    with db:
        db.executemany(
            "INSERT INTO changes (committed_at, op, tbl, key, row) VALUES (?, ?, ?, ?, ?)", rows
        )
    db.close()


# ------------------------------------------------------------------------ the servers


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """A redis-server or nats-server of this run's own, in a temporary directory, on the
    CPUs this process does not use."""

    def __init__(self, kind: str) -> None:
        binary = shutil.which(SERVERS[kind])
        if binary is None:
            raise FileNotFoundError(
                f"{SERVERS[kind]} is not installed (apt-get install {SERVERS[kind]})"
            )
        self.kind, self.port = kind, _free_port()
        self.dir = Path(tempfile.mkdtemp(prefix=f"asyncsports-bench-{kind}-"))
        if kind == "redis":
            argv = [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "everysec",
                "--dir",
                str(self.dir),
            ]
            self.url = f"redis://127.0.0.1:{self.port}/0"
        else:
            argv = [
                binary,
                "-js",
                "-a",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-sd",
                str(self.dir / "js"),
            ]
            self.url = f"nats://127.0.0.1:{self.port}"
        with (self.dir / "log").open("ab") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=log, cwd=self.dir)
        if hasattr(os, "sched_getaffinity"):
            rest = set(range(os.cpu_count() or 1)) - os.sched_getaffinity(0)
            if rest:
                os.sched_setaffinity(self.proc.pid, rest)
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.close()
                    raise RuntimeError(f"{kind} did not start") from None
                time.sleep(0.05)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------------------- the runs


def _messages(db: Path) -> tuple[list[Any], str]:
    """Every change's message as the publisher makes it, and the database's origin."""
    from asyncsports._wire.bus import message, origin
    from asyncsports.store import ChangeLine

    con = sqlite3.connect(db)
    lines = [
        ChangeLine(*line)
        for line in con.execute(
            "SELECT seq, op, tbl, key, row, committed_at FROM changes ORDER BY seq"
        )
    ]
    con.close()
    return [message(*line) for line in lines], origin(lines[0].committed_at)


async def _ours(db: Path, url: str) -> int:
    from asyncsports.sync import Publisher

    pub = Publisher(db, url)
    await pub.once()
    return pub.published


async def _redis_floor(
    url: str, items: list[tuple[str, str, bytes]], origin: tuple[str, str]
) -> int:
    """redis-py by hand: a MULTI/EXEC pipeline of XADDs (and the SET NX) per batch."""
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(url)
    try:
        await client.ping()
        for i in range(0, len(items), BATCH):
            pipe = client.pipeline(transaction=True)
            pipe.execute_command("SET", *origin, "NX")
            xadd = pipe.execute_command
            for key, entry, body in items[i : i + BATCH]:
                xadd("XADD", key, "MAXLEN", "~", 1_000_000, entry, "change", body)
            await pipe.execute()
    finally:
        await client.aclose()
    return len(items)


async def _nats_floor(url: str, items: list[tuple[str, bytes, str]]) -> int:
    """nats-py by hand: publish_async of each message with its Nats-Msg-Id, the batch's
    acks gathered."""
    import nats

    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        for i in range(0, len(items), BATCH):
            send = js.publish_async
            acks = [
                await send(subject, body, headers={"Nats-Msg-Id": mid})
                for subject, body, mid in items[i : i + BATCH]
            ]
            await asyncio.gather(*acks)
    finally:
        await nc.close()
    return len(items)


async def _timed(fn: Any) -> tuple[float, float, Any]:
    import gc

    gc.collect()
    c0, w0 = time.process_time(), time.perf_counter()
    got = await fn()
    return time.process_time() - c0, time.perf_counter() - w0, got


async def _paired(
    rounds: int, one: Callable[[int, str], Awaitable[tuple[float, float]]]
) -> dict[str, Any]:
    """``one(round, who)`` for ours and the floor in each round, in alternating order,
    its (cpu, wall) kept; round 0 warms up and is not kept."""
    out: dict[str, Any] = {"ours": {"cpu": [], "wall": []}, "floor": {"cpu": [], "wall": []}}
    for r in range(rounds + 1):
        runs = [
            (who, *await one(r, who)) for who in (("ours", "floor") if r % 2 else ("floor", "ours"))
        ]
        if r:
            for who, cpu, wall in runs:
                out[who]["cpu"].append(cpu)
                out[who]["wall"].append(wall)
    return out


async def _redis_rounds(db: Path, server: Server, rounds: int) -> dict[str, Any]:
    import redis.asyncio as aioredis

    msgs, source = _messages(db)
    admin = aioredis.Redis.from_url(server.url)

    async def one(r: int, who: str) -> tuple[float, float]:
        prefix = f"{who}{r}"
        if who == "ours":
            url = f"{server.url}?prefix={prefix}"
            fn: Any = lambda: _ours(db, url)  # noqa: E731
        else:
            items = [(f"{prefix}:{m.table}", f"{m.seq}-0", m.body) for m in msgs]
            fn = lambda: _redis_floor(server.url, items, (f"{prefix}:origin", source))  # noqa: E731
        cpu, wall, n = await _timed(fn)
        held = sum(
            [
                await admin.xlen(k)
                for k in await admin.keys(f"{prefix}:*")
                if k != f"{prefix}:origin".encode()
            ]
        )
        if n != len(msgs) or held != len(msgs):
            raise AssertionError(f"redis {who}: {n} published, {held} held, of {len(msgs)}")
        await admin.flushall()
        return cpu, wall

    try:
        out = await _paired(rounds, one)
    finally:
        await admin.aclose()
    return {"n": len(msgs), "bytes": sum(len(m.body) for m in msgs), **out}


async def _nats_rounds(db: Path, server: Server, rounds: int) -> dict[str, Any]:
    import nats
    from nats.js.api import StorageType, StreamConfig

    from asyncsports._wire.bus import msg_id

    msgs, source = _messages(db)
    admin = await nats.connect(server.url)
    js = admin.jetstream()

    async def one(r: int, who: str) -> tuple[float, float]:
        prefix, stream = f"{who}{r}", f"{who.upper()}{r}"
        if who == "ours":
            url = f"{server.url}?prefix={prefix}&stream={stream}"
            fn: Any = lambda: _ours(db, url)  # noqa: E731
        else:
            await js.add_stream(
                StreamConfig(
                    name=stream,
                    subjects=[f"{prefix}.>"],
                    storage=StorageType.FILE,
                    duplicate_window=120,
                )
            )
            items = [(f"{prefix}.{m.sport}.{m.table}", m.body, msg_id(source, m.seq)) for m in msgs]
            fn = lambda: _nats_floor(server.url, items)  # noqa: E731
        cpu, wall, n = await _timed(fn)
        held = (await js.stream_info(stream)).state.messages
        if n != len(msgs) or held != len(msgs):
            raise AssertionError(f"nats {who}: {n} published, {held} held, of {len(msgs)}")
        await js.delete_stream(stream)
        return cpu, wall

    try:
        out = await _paired(rounds, one)
    finally:
        await admin.close()
    return {"n": len(msgs), "bytes": sum(len(m.body) for m in msgs), **out}


async def bus(m: Manifest, p: Params) -> dict[str, Any]:
    """The throughput rounds on each bus (and the live lag, when ``live`` is set)."""
    result: dict[str, Any] = {"changes": p["n"]}
    with tempfile.TemporaryDirectory(prefix="asyncsports-bench-bus-") as tmp:
        db = Path(tmp) / "mirror.sqlite"
        await make_mirror(db, p["n"])
        for kind, rounds in (("redis", _redis_rounds), ("nats", _nats_rounds)):
            try:
                server = Server(kind)
            except (FileNotFoundError, RuntimeError) as exc:
                result[kind] = {"error": str(exc)}
                continue
            try:
                result[kind] = await rounds(db, server, p["rounds"])
            finally:
                server.close()
        if p.get("live"):
            result["live"] = await _live(Path(tmp), p)
    return result


# ------------------------------------------------------------------------- the live lag

FINE = tuple(i / 1000 for i in range(1, 1001))  # 1 ms buckets up to 1 s


def _sync(tmp: Path, db: Path, speed: float) -> subprocess.Popen[bytes]:
    """``asyncsports --emulator ... sync`` in a process of its own, on the other CPUs."""
    argv = [
        sys.executable,
        "-m",
        "asyncsports",
        "--emulator",
        "--emulator-speed",
        str(speed),
        "sync",
        "--db",
        str(db),
        "--sports",
        "basketball",
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASYNCSPORTS_")}
    with (tmp / "sync.log").open("ab") as log:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log, env=env)
    if hasattr(os, "sched_getaffinity"):
        rest = set(range(os.cpu_count() or 1)) - os.sched_getaffinity(0)
        if rest:
            os.sched_setaffinity(proc.pid, rest)
    return proc


async def _follow(db: Path, url: str, window: float) -> dict[str, Any]:
    """A publisher following ``db`` onto ``url``: caught up first, then its lags (commit
    to ack, 1 ms buckets) over ``window`` seconds."""
    from asyncsports._wire.bus import Lags
    from asyncsports.sync import Publisher

    pub = Publisher(db, url)
    task = asyncio.create_task(pub.run())
    try:
        for _ in range(600):
            await asyncio.sleep(0.05)
            if pub.position is not None and pub.published and pub.position >= pub.head:
                break
        pub.lags = Lags(FINE)
        c0, p0 = time.process_time(), pub.published
        await asyncio.sleep(window)
        lags, cpu, n = pub.lags, time.process_time() - c0, pub.published - p0
    finally:
        pub.stop()
        await asyncio.wait_for(task, 30)
    return {
        "n": n,
        "p50": lags.quantile(0.5),
        "p99": lags.quantile(0.99),
        "max": lags.quantile(1.0),
        "mean": lags.total / max(1, lags.count),
        "cpu_per_change": cpu / max(1, n),
        "window": window,
    }


async def _live(tmp: Path, p: Params) -> dict[str, Any]:
    """Both buses in turn, while ``sync`` follows live basketball fixtures."""
    db = tmp / "live.sqlite"
    proc = _sync(tmp, db, p["speed"])
    out: dict[str, Any] = {"speed": p["speed"]}
    try:
        await asyncio.sleep(p["warm"])  # the backlog of ended and live fixtures lands
        if proc.poll() is not None:
            return {
                "error": f"sync exited {proc.returncode}: {(tmp / 'sync.log').read_text()[-500:]}"
            }
        for kind in SERVERS:
            try:
                server = Server(kind)
            except (FileNotFoundError, RuntimeError) as exc:
                out[kind] = {"error": str(exc)}
                continue
            try:
                out[kind] = await _follow(db, server.url, p["live"])
            finally:
                server.close()
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(15)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return out


# --------------------------------------------------------------------------- the rows


def _bus_rows(kind: str, b: dict[str, Any], quick: bool) -> list[Row]:
    name = {"redis": "Redis Streams", "nats": "NATS JetStream"}[kind]
    n = b["n"]
    ours, floor = b["ours"], b["floor"]
    how = {
        "redis": "redis-py MULTI/EXEC pipeline of XADDs, 2,000 a batch",
        "nats": "nats-py publish_async + Nats-Msg-Id, acks gathered per 2,000",
    }[kind]
    case = f"{name}: Publisher.once() over {n:,} changes ({b['bytes'] / n:,.0f} B a message)"
    rounds = len(ours["cpu"])
    rate, floor_rate = n / median(ours["wall"]), n / median(floor["wall"])
    return [
        Row(
            "bus",
            case,
            "changes per second (wall)",
            "/s",
            rate,
            floor_rate,
            f"floor: {how}",
            "above",
            RATE_TARGET,
            note=f"the median of {rounds} rounds; the bus server on the other CPU",
            paired=paired(floor["wall"], ours["wall"]),
        ),
        Row(
            "bus",
            case,
            "client CPU per change",
            "us",
            1e6 * median(ours["cpu"]) / n,
            1e6 * median(floor["cpu"]) / n,
            f"floor: {how}, the bytes made beforehand",
            "cost",
            CPU_TARGET,
            note=f"ratio: median of {rounds} paired rounds (per round: "
            + ", ".join(f"{a / b:.2f}" for a, b in zip(ours["cpu"], floor["cpu"], strict=True))
            + "); ours includes reading the change table (SQLite) and making the messages",
            paired=paired(ours["cpu"], floor["cpu"]),
        ),
    ]


def _live_rows(live: dict[str, Any]) -> list[Row]:
    out = []
    for kind in SERVERS:
        got = live.get(kind)
        if got is None:
            continue
        if "error" in got:
            out.append(missing("bus", f"live {kind}: {got['error']}"))
            continue
        case = (
            f"{kind}: Publisher.run() following sync --emulator-speed {live['speed']:g} "
            f"(basketball), {got['n']:,} changes in {got['window']:.0f} s"
        )
        out.append(
            Row(
                "bus",
                case,
                "lag p99, commit to ack",
                "s",
                got["p99"],
                kind="below",
                target=LAG_TARGET,
                note=f"p50 {got['p50'] * 1e3:.0f} ms, max {got['max'] * 1e3:.0f} ms, mean "
                f"{got['mean'] * 1e3:.1f} ms (1 ms buckets); the SQLite file is polled "
                f"every 50 ms; CPU {got['cpu_per_change'] * 1e6:,.0f} us a change",
            )
        )
    return out


def run(ctx: Context, s: dict[str, Any]) -> Result:
    return ctx.child(bus, **s)


def rows(r: Result | None, counts: Result | None, quick: bool) -> list[Row]:
    """Throughput and CPU against the floor on each bus, then the live lag."""
    if r is None:
        return []
    out: list[Row] = []
    for kind in SERVERS:
        got = r.get(kind)
        if got is None:
            continue
        if "error" in got:
            out.append(missing("bus", f"{kind}: {got['error']}"))
        else:
            out += _bus_rows(kind, got, quick)
    if "live" in r:
        live = r["live"]
        out += [missing("bus", f"live: {live['error']}")] if "error" in live else _live_rows(live)
    return out


CASE = Case(
    name="bus",
    run=run,
    rows=rows,
    quick={"n": 5_000, "rounds": 2},
    full={"n": 100_000, "rounds": 5, "live": 20.0, "warm": 12.0, "speed": 60.0},
    order=145,
)
