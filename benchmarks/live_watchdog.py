"""What an idle watchdog costs the live path: ``python -m benchmarks.live_watchdog``.

An experiment, not a benchmark of the library: it prices one design choice before it is
made. Against the benchmark server's streams host, one feed flat out, CPU per action of:

- ``asyncsports``: ``client.live.actions`` as it is;
- ``floor``: aiohttp ``ws_connect`` + msgspec decode, no checks (``benchmarks.live``);
- ``floor, receive(timeout)``: the floor with a timer set and cancelled for each message;
- ``sketch``: the live path's reading loop reduced to its parts, an async generator over
  ``ws.receive()`` feeding :class:`asyncsports._live.FeedState` (ordering, duplicates,
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

from asyncsports._live import FeedState
from benchmarks.live import SPORT, TIMED, Loop, Take, _auth, _url

__all__ = ["sketch_loops"]

IDLE = 60.0
_TEXT = (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY)


def sketch_loops(m: dict[str, Any], http: aiohttp.ClientSession) -> dict[str, Loop]:
    """The two sketches of the live path's reading loop (see the module's docstring)."""
    auth = _auth(m)

    async def records(url: str, start: int, lazy: bool) -> AsyncIterator[Any]:
        state = FeedState(start, kind="actions")
        state.connect()
        async with http.ws_connect(url, decode_text=False) as ws:
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


def main() -> None:
    from benchmarks.__main__ import QUICK, Server, _cpus, run_case

    cfg = dataclasses.replace(QUICK, live_actions=2_000)
    server_cpu, client_cpus = _cpus(pin=True)
    server = Server(cfg, server_cpu)
    variants = ["asyncsports", "floor", TIMED, "sketch", "sketch, lazy watchdog"]
    try:
        params = {"actions": cfg.live_actions, "repeat": 15, "variants": variants}
        result = run_case("live", {**params, "sketches": True}, server.manifest, client_cpus, 300)
    finally:
        server.close()
    if "error" in result:
        sys.exit(result["error"])
    floor = result["floor"]["cpu"]
    n = result["actions"]
    print(f"one feed of {n:,} actions flat out ({SPORT}), {len(floor)} paired rounds:")
    for name in variants:
        cpu = result[name]["cpu"]
        ratio = statistics.median([a / b for a, b in zip(cpu, floor, strict=True)])
        print(f"  {name:24s} {statistics.median(cpu) / n * 1e6:6.2f} us/action  {ratio:.3f}x")


if __name__ == "__main__":
    main()
