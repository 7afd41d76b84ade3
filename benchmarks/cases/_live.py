"""The live feeds' benchmarks (issue 12), each run in a fresh child process (``benchmarks.harness.child``).

Against the benchmark server's streams host (:mod:`benchmarks.harness.liveserver`, another
process): packets the emulator rendered, replayed to any fixture id, each stamped with
the server's send time (``traceId``, ``time.monotonic()``).

- ``live``: one feed replayed flat out (``speed=fast``): client CPU per delivered action,
  asyncsports against the floor (aiohttp ``ws_connect`` + a msgspec decode of each
  message, no checks) and the same loop on the peers ``websockets`` and ``picows``.
- ``fanin``: ``fixtures`` feeds followed at once from this process, each pushed ``rate``
  packets a second: delivery latency (the server's send to the consumer holding the
  record) and client CPU per packet, over a window of ``seconds`` once every feed flows.
- ``idle``: resident memory per idle connected feed (authorised, nothing sent): RSS
  growth over opening ``feeds`` of them, divided by ``feeds``; one variant per process.
- ``live_icount``: one variant of ``live`` for an instruction count (under callgrind).

The loops differ only in the client: every variant decodes each packet into the same
``asyncsports.models.Action`` with msgspec. The floor knows what the server does (the
first message is the acknowledgement, no heartbeat comes, the server closes after the
last packet) and checks nothing; asyncsports orders, deduplicates and resumes.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import inspect
import statistics
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any

import aiohttp
import msgspec

from asyncsports import Client
from asyncsports._wire.live import FeedState, Step
from asyncsports.models import Action
from benchmarks.harness.measure import rounds as _rounds
from benchmarks.harness.measure import rss_kb
from benchmarks.harness.measure import warm as _warm

# aiohttp 3.14 hands text frames over as bytes when asked (as the client does); older ones
# only as str, which msgspec decodes as well.
RAW: dict[str, Any] = (
    {"decode_text": False}
    if "decode_text" in inspect.signature(aiohttp.ClientSession.ws_connect).parameters
    else {}
)

__all__ = [
    "IDLE_VARIANTS",
    "LIVE_VARIANTS",
    "PEERS",
    "fanin",
    "fixture_ids",
    "idle",
    "live",
    "sketch_loops",
]

Manifest = dict[str, Any]
Params = dict[str, Any]
SPORT = "american-football"
_NS = uuid.UUID("0d6f3d52-7d1e-4b8e-9a47-5e0e2f1c7a10")
# What every variant decodes a packet into; lax like the live path (quoted decimals).
DECODE = msgspec.json.Decoder(Action, strict=False).decode
PEERS = ("websockets", "picows", "picows queue")
LIVE_VARIANTS = ("asyncsports", "floor", *PEERS)
IDLE_VARIANTS = ("asyncsports merge", *LIVE_VARIANTS)
TIMED = "floor, receive(timeout)"
Run = Callable[[], Awaitable[int]]
Take = Callable[[Action], None]
Loop = Callable[[str, bool, int, Take], Coroutine[Any, Any, int]]
"""One feed read to its end: ``loop(fixture_id, fast, start_position, take) -> records``."""


def fixture_ids(n: int, tag: str = "") -> list[str]:
    """``n`` made-up fixture ids (the server serves any)."""
    return [str(uuid.uuid5(_NS, f"{tag}{i}")) for i in range(n)]


def _url(m: Manifest, fid: str, fast: bool = False, start: int = 0) -> str:
    query = "&".join(
        q for q in ("speed=fast" if fast else "", f"startPosition={start}" if start else "") if q
    )
    return f"{m['live']}/{SPORT}/fixtures/{fid}/actions" + (f"?{query}" if query else "")


def _auth(m: Manifest) -> str:
    return msgspec.json.encode({"authToken": m["token"]}).decode()


async def control(m: Manifest, route: str, **params: Any) -> dict[str, Any]:
    """GET ``/_bench/live/<route>`` on the streams host (``config`` or ``stats``)."""
    base = "http" + m["live"].removeprefix("ws")
    query = {k: str(v) for k, v in params.items()}
    async with (
        aiohttp.ClientSession() as http,
        http.get(f"{base}/_bench/live/{route}", params=query) as r,
    ):
        r.raise_for_status()
        out: dict[str, Any] = await r.json()
        return out


def _client(m: Manifest, feeds: int) -> Client | None:
    """The client with the live URL, or None while ``client.live`` does not exist.

    ``max_connections`` bounds the client's pool, websockets included: room for ``feeds``.
    """
    try:
        client = Client(
            m["big"],
            token=m["token"],
            vendor=m["vendor"],
            live_url=m["live"],
            max_connections=feeds + 10,
        )
    except TypeError:
        return None
    return client if hasattr(client, "live") else None


@contextlib.asynccontextmanager
async def _clients(
    m: Manifest, feeds: int = 1
) -> AsyncIterator[tuple[aiohttp.ClientSession, Client | None]]:
    """The floor's session and the client, both open, with room for ``feeds`` sockets."""
    async with contextlib.AsyncExitStack() as stack:
        # No limit on connections: aiohttp's default (100) would hold the 101st feed back.
        connector = aiohttp.TCPConnector(limit=0)
        http = await stack.enter_async_context(aiohttp.ClientSession(connector=connector))
        client = _client(m, feeds)
        if client is not None:
            await stack.enter_async_context(client)
        yield http, client


# --------------------------------------------------------------------------- one feed


class _Counter:
    """A sink for a loop: counts records, and in a window, their delivery latencies."""

    __slots__ = ("lat", "n", "on")

    def __init__(self) -> None:
        self.n = 0
        self.on = False
        self.lat: list[float] = []

    def take(self, record: Action) -> None:
        if self.on:
            self.n += 1
            self.lat.append(time.monotonic() - float(record.trace_id or 0))


def _picows_listener(auth: str, sink: Callable[[bytes], None]) -> Any:
    """A picows listener class: sends the token, hands each packet's bytes to ``sink``."""
    import picows

    text = picows.WSMsgType.TEXT

    class Listener(picows.WSListener):
        def __init__(self) -> None:
            self.acked = False

        def on_ws_connected(self, transport: Any) -> None:
            transport.send(text, auth.encode())

        def on_ws_frame(self, transport: Any, frame: Any) -> None:
            kind = frame.msg_type
            if kind is text:
                if self.acked:
                    # A copy: a memoryview would point into picows' reused read buffer,
                    # and the record's metadata (msgspec.Raw) into it.
                    sink(frame.get_payload_as_bytes())
                else:
                    self.acked = True
            elif kind is picows.WSMsgType.CLOSE:
                transport.send_close(frame.get_close_code())
                transport.disconnect()

    return Listener


def feed_loops(m: Manifest, http: aiohttp.ClientSession, client: Client | None) -> dict[str, Loop]:
    """One feed read to its end by each client: ``loop(fid, fast, start, take) -> records``."""
    auth = _auth(m)

    async def floor(fid: str, fast: bool, start: int, take: Take) -> int:
        n = 0
        # Text frames as bytes (aiohttp 3.14): no UTF-8 decode before msgspec's own.
        async with http.ws_connect(_url(m, fid, fast, start), **RAW) as ws:
            await ws.send_str(auth)
            await ws.receive()  # the acknowledgement
            async for msg in ws:
                take(DECODE(msg.data))
                n += 1
        return n

    async def websockets_(fid: str, fast: bool, start: int, take: Take) -> int:
        from websockets.asyncio.client import connect

        n = 0
        # No compression: the server offers none to aiohttp either; no proxy lookup.
        async with connect(_url(m, fid, fast, start), compression=None, proxy=None) as ws:
            await ws.send(auth)
            await ws.recv()  # the acknowledgement
            async for data in ws:
                take(DECODE(data))
                n += 1
        return n

    loops: dict[str, Loop] = {"floor": floor, "websockets": websockets_, **_picows_loops(m)}
    if client is not None:
        live = client.live

        async def ours(fid: str, fast: bool, start: int, take: Take) -> int:
            n = 0
            speed = "fast" if fast else None
            async with live.actions(SPORT, fid, start_position=start, replay=speed) as feed:
                async for record in feed:
                    take(record)
                    n += 1
            return n

        loops = {"asyncsports": ours, **loops}
    return loops


def _picows_loops(m: Manifest) -> dict[str, Loop]:
    """picows, in its idiom (decoded in the frame callback) and under an async iterator."""
    auth = _auth(m)

    async def picows_(fid: str, fast: bool, start: int, take: Take) -> int:
        from picows import ws_connect

        count = [0]

        def sink(data: bytes) -> None:
            take(DECODE(data))
            count[0] += 1

        transport, _ = await ws_connect(_picows_listener(auth, sink), _url(m, fid, fast, start))
        try:
            await transport.wait_disconnected()
        finally:
            transport.disconnect()  # when cancelled
        return count[0]

    async def picows_queue(fid: str, fast: bool, start: int, take: Take) -> int:
        # picows under an async iterator, as the live path would use it: callback -> queue.
        from picows import ws_connect

        queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        transport, _ = await ws_connect(
            _picows_listener(auth, queue.put_nowait), _url(m, fid, fast, start)
        )
        ended = asyncio.ensure_future(transport.wait_disconnected())
        ended.add_done_callback(lambda _: queue.put_nowait(None))
        n = 0
        try:
            while (data := await queue.get()) is not None:
                take(DECODE(data))
                n += 1
        finally:
            transport.disconnect()  # when cancelled
        return n

    return {"picows": picows_, "picows queue": picows_queue}


def _timed_floor(m: Manifest, http: aiohttp.ClientSession) -> Loop:
    """The floor with a time limit on each ``receive``, as an idle watchdog armed per message.

    Not a peer: it prices one mechanism (a timer set and cancelled for every message),
    which the live path's reading loop uses (``asyncsports/_http/live.py``).
    """
    auth = _auth(m)

    async def timed(fid: str, fast: bool, start: int, take: Take) -> int:
        n = 0
        async with http.ws_connect(_url(m, fid, fast, start), **RAW) as ws:
            await ws.send_str(auth)
            await ws.receive()  # the acknowledgement
            while (msg := await ws.receive(60.0)).type is aiohttp.WSMsgType.TEXT:
                take(DECODE(msg.data))
                n += 1
        return n

    return timed


# The sketches of the live path's reading loop priced by ``benchmarks.live_watchdog``.
IDLE = 60.0


_TEXT = (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY)


def sketch_loops(m: dict[str, Any], http: aiohttp.ClientSession) -> dict[str, Loop]:
    """The two sketches of the live path's reading loop (see ``benchmarks.live_watchdog``)."""
    auth = _auth(m)

    async def records(url: str, start: int, lazy: bool) -> AsyncIterator[Any]:
        state = FeedState(start, kind="actions")
        state.connect()
        async with http.ws_connect(url, **RAW) as ws:
            await ws.send_str(auth)
            loop = asyncio.get_running_loop()
            last = loop.time()
            closing: list[asyncio.Task[bool]] = []
            timer: asyncio.TimerHandle | None = None

            def check() -> None:
                nonlocal timer
                if loop.time() - last >= IDLE:
                    closing.append(loop.create_task(ws.close()))  # stalled: the reader sees it
                else:
                    timer = loop.call_at(last + IDLE, check)

            timer = loop.call_at(last + IDLE, check) if lazy else None
            try:
                while (msg := await ws.receive()).type in _TEXT:
                    if lazy:
                        last = loop.time()
                    step = state.on_message(msg.data, url)
                    if type(step) is not Step:
                        yield step
                        continue
                    for record in step.records:
                        yield record
                    if step.finished:
                        return
            finally:
                if timer is not None:
                    timer.cancel()

    def sketch(lazy: bool) -> Loop:
        async def run(fid: str, fast: bool, start: int, take: Take) -> int:
            n = 0
            async for record in records(_url(m, fid, fast, start), start, lazy):
                take(record)
                n += 1
            return n

        return run

    return {"sketch": sketch(False), "sketch, lazy watchdog": sketch(True)}


def _priced(m: Manifest, http: aiohttp.ClientSession, sketches: bool) -> dict[str, Loop]:
    """The floor with a timer per message, and the sketches of ``benchmarks.live_watchdog``."""
    loops = {TIMED: _timed_floor(m, http)}
    if sketches:
        loops.update(sketch_loops(m, http))
    return loops


def _ignore(record: Action) -> None:
    pass


async def live(m: Manifest, p: Params) -> dict[str, Any]:
    """One feed of ``actions`` packets flat out, per variant, in interleaved rounds."""
    n = p["actions"]
    await control(m, "config", count=n)
    ids = iter(fixture_ids(10_000, "live"))
    async with _clients(m) as (http, client):
        loops = feed_loops(m, http, client)
        loops.update(_priced(m, http, sketches=p.get("sketches", False)))
        wanted = p.get("variants") or list(loops)

        def variant(loop: Loop) -> Run:
            return lambda: loop(next(ids), True, 0, _ignore)

        variants = {name: variant(loops[name]) for name in wanted if name in loops}
        await _warm(variants, n)
        times = await _rounds(variants, p["repeat"])
    return {"actions": n, "client": client is not None, **times}


async def live_icount(m: Manifest, p: Params) -> dict[str, Any]:
    """One variant of ``live`` for callgrind: warm up, ``ready``, one whole feed, ``done``."""
    n = p["actions"]
    await control(m, "config", count=n)
    ids = iter(fixture_ids(10, "icount"))
    async with _clients(m) as (http, client):
        loop = feed_loops(m, http, client)[p["variant"]]
        await loop(next(ids), True, max(0, n - 50), _ignore)  # a short warm-up
        print("ready", flush=True)
        sys.stdin.readline()
        got = await loop(next(ids), True, 0, _ignore)
        print("done", flush=True)
        sys.stdin.readline()
    if got != n:
        raise AssertionError(f"{p['variant']}: {got} records, expected {n}")
    return {"variant": p["variant"], "actions": n}


# --------------------------------------------------------------------------- many feeds


async def _until(m: Manifest, open_: int) -> None:
    """Wait (a minute at most) until the server holds ``open_`` authorised connections."""
    try:
        async with asyncio.timeout(60):
            # The count is in another process: polled, there is no event to wait on.
            while (await control(m, "stats"))["open"] != open_:  # noqa: ASYNC110
                await asyncio.sleep(0.05)
    except TimeoutError:
        raise AssertionError(f"the server never held {open_} connections") from None


async def _stop(tasks: list[asyncio.Task[Any]]) -> None:
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def _percentiles(lat: list[float]) -> dict[str, float]:
    if not lat:
        return {"count": 0}
    q = statistics.quantiles(lat, n=100, method="inclusive")
    return {"count": len(lat), "p50": q[49], "p90": q[89], "p99": q[98], "max": max(lat)}


async def _follow(
    m: Manifest, start: Callable[[list[str], _Counter], list[asyncio.Task[Any]]], p: Params
) -> dict[str, Any]:
    """Open ``fixtures`` feeds with ``start``, let them flow, measure a window, close them."""
    sink = _Counter()
    ids = fixture_ids(p["fixtures"], f"fanin{time.monotonic_ns()}")
    c0 = time.process_time()
    tasks = start(ids, sink)
    try:
        await _until(m, len(ids))
        setup = time.process_time() - c0
        await asyncio.sleep(p["warm"])
        sent, t0 = (await control(m, "stats"))["sent"], time.perf_counter()
        gc.collect()
        sink.on = True
        c0, w0 = time.process_time(), time.perf_counter()
        await asyncio.sleep(p["seconds"])
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        sink.on = False
        sent = (await control(m, "stats"))["sent"] - sent
        sent_rate = sent / (time.perf_counter() - t0)  # between the two counts
    finally:
        await _stop(tasks)
    await _until(m, 0)
    return {
        "cpu": cpu,
        "wall": wall,
        "packets": sink.n,
        "sent": sent_rate,
        "setup_cpu": setup,
        "lat": sink.lat,
    }


async def fanin(m: Manifest, p: Params) -> dict[str, Any]:
    """``fixtures`` feeds at ``rate`` packets a second each, one variant after another."""
    await control(m, "config", rate=p["rate"], count=p["count"], tick=p["tick"])
    async with _clients(m, p["fixtures"]) as (http, client):
        loops = feed_loops(m, http, client)
        if p.get("sketches"):
            loops.update(_priced(m, http, sketches=True))

        def tasks_of(loop: Loop) -> Callable[..., Any]:
            def start(ids: list[str], sink: _Counter) -> list[asyncio.Task[Any]]:
                return [asyncio.create_task(loop(fid, False, 0, sink.take)) for fid in ids]

            return start

        starts = {name: tasks_of(loop) for name, loop in loops.items()}
        merged = _merged(client)
        if merged is not None:
            starts = {"asyncsports merge": merged, **starts}
        wanted = p.get("variants") or list(starts)
        out: dict[str, Any] = {name: [] for name in wanted if name in starts}
        for _ in range(p["repeat"]):
            for name in out:
                out[name].append(await _follow(m, starts[name], p))
    result: dict[str, Any] = {k: p[k] for k in ("fixtures", "rate", "seconds", "tick")}
    for name, rounds in out.items():
        result[name] = {
            "cpu": [r["cpu"] for r in rounds],
            "wall": [r["wall"] for r in rounds],
            "packets": [r["packets"] for r in rounds],
            "sent": [r["sent"] for r in rounds],  # packets a second, all feeds
            "setup_cpu": [r["setup_cpu"] for r in rounds],
            "latency": _percentiles([x for r in rounds for x in r["lat"]]),
        }
    return result


def _merged(client: Client | None) -> Callable[..., Any] | None:
    """Many fixtures followed from one task: ``client.live.merge`` of their feeds."""
    if client is None:
        return None
    live = client.live

    def start(ids: list[str], sink: _Counter) -> list[asyncio.Task[Any]]:
        merged = live.merge([live.actions(SPORT, fid) for fid in ids])

        async def consume() -> None:
            async with merged:
                async for _fid, record in merged:
                    sink.take(record)

        return [asyncio.create_task(consume())]

    return start


# --------------------------------------------------------------------------- idle feeds


async def idle(m: Manifest, p: Params) -> dict[str, Any]:
    """RSS growth over opening ``feeds`` idle feeds with one variant, per feed."""
    await control(m, "config", rate=0)
    name, n = p["variant"], p["feeds"]
    async with _clients(m, n + 1) as (http, client):
        starts: dict[str, Callable[[list[str], _Counter], list[asyncio.Task[Any]]]] = {}
        for vname, loop in feed_loops(m, http, client).items():

            def start(ids: list[str], sink: _Counter, loop: Any = loop) -> list[asyncio.Task[Any]]:
                return [asyncio.create_task(loop(fid, False, 0, sink.take)) for fid in ids]

            starts[vname] = start
        merged = _merged(client)
        if merged is not None:
            starts["asyncsports merge"] = merged
        if name not in starts:
            raise AssertionError(f"no variant {name!r} (client.live missing?)")
        sink = _Counter()
        first = starts[name](fixture_ids(1, f"idle-warm{name}"), sink)  # imports, pools
        tasks: list[asyncio.Task[Any]] = []
        try:
            await _until(m, 1)
            await asyncio.sleep(0.2)
            gc.collect()
            before = rss_kb()
            tasks = starts[name](fixture_ids(n, f"idle{name}"), sink)
            await _until(m, n + 1)
            await asyncio.sleep(p.get("settle", 0.5))  # the acknowledgements read
            gc.collect()
            after = rss_kb()
        finally:
            await _stop(tasks + first)
    return {"variant": name, "feeds": n, "rss_before_kb": before, "rss_after_kb": after}
