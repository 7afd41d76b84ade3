"""What an idle watchdog costs the live path: ``python -m benchmarks.live_watchdog [fanin]``.

An experiment, not a benchmark of the library: it prices one design choice before it is
made. Against the benchmark server's streams host, one feed flat out, CPU per action of:

- ``asyncsports``: ``client.live.actions`` as it is;
- ``floor``: aiohttp ``ws_connect`` + msgspec decode, no checks (``benchmarks.live``);
- ``floor, receive(timeout)``: the floor with a timer set and cancelled for each message;
- ``sketch``: the live path's reading loop reduced to its parts, an async generator over
  ``ws.receive()`` feeding :class:`asyncsports._wire.live.FeedState` (ordering, duplicates,
  positions), with no idle watchdog;
- ``sketch, lazy watchdog``: the same with one timer per connection that fires after
  ``idle_timeout`` and, if a message came since, re-arms itself from that message's time;
  each message only records ``loop.time()``.

Prints the medians and the paired ratios to the floor. The sketches keep the live path's
per-message work and leave out reconnecting (which costs nothing while a connection lasts).
"""

from __future__ import annotations

import asyncio
import dataclasses
import statistics
import sys
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

from asyncsports._wire.live import FeedState
from benchmarks.live import RAW, SPORT, TIMED, Loop, Take, _auth, _url

__all__ = ["sketch_loops"]

IDLE = 60.0
_TEXT = (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY)


def sketch_loops(m: dict[str, Any], http: aiohttp.ClientSession) -> dict[str, Loop]:
    """The two sketches of the live path's reading loop (see the module's docstring)."""
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
                    step = state.feed(msg.data, url)
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


def _run(case: str, params: dict[str, Any]) -> dict[str, Any]:
    from benchmarks.__main__ import QUICK, Server, _cpus, run_case

    cfg = dataclasses.replace(QUICK, live_actions=2_000)
    server_cpu, client_cpus = _cpus(pin=True)
    server = Server(cfg, server_cpu)
    try:
        result = run_case(case, params, server.manifest, client_cpus, 600)
    finally:
        server.close()
    if "error" in result:
        sys.exit(result["error"])
    return result


def main(argv: list[str] | None = None) -> None:
    """``python -m benchmarks.live_watchdog [fanin]``: one feed flat out, or 500 paced."""
    variants = ["asyncsports", "floor", TIMED, "sketch", "sketch, lazy watchdog"]
    if (argv if argv is not None else sys.argv[1:]) == ["fanin"]:
        params: dict[str, Any] = {"fixtures": 500, "rate": 10.0, "seconds": 5.0, "warm": 1.0}
        params |= {"repeat": 2, "tick": 0.01, "count": 700, "variants": variants, "sketches": True}
        r = _run("fanin", params)
        print("500 fixtures x 10 packets/s, a task per feed, CPU per packet and latency:")
        for name in variants:
            v, lat = r[name], r[name]["latency"]
            per = sum(v["cpu"]) / sum(v["packets"]) * 1e6
            print(
                f"  {name:24s} {per:6.1f} us/packet  p50 {lat['p50'] * 1e3:5.2f} ms  "
                f"p99 {lat['p99'] * 1e3:6.2f} ms"
            )
        return
    params = {"actions": 2_000, "repeat": 15, "variants": variants, "sketches": True}
    r = _run("live", params)
    floor, n = r["floor"]["cpu"], r["actions"]
    print(f"one feed of {n:,} actions flat out ({SPORT}), {len(floor)} paired rounds:")
    for name in variants:
        cpu = r[name]["cpu"]
        ratio = statistics.median([a / b for a, b in zip(cpu, floor, strict=True)])
        print(f"  {name:24s} {statistics.median(cpu) / n * 1e6:6.2f} us/action  {ratio:.3f}x")


if __name__ == "__main__":
    main()
