"""What an idle watchdog costs the live path: ``python -m benchmarks.live_watchdog [fanin]``.

An experiment, not a benchmark of the library: it prices one design choice before it is
made. Against the benchmark server's streams host, one feed flat out, CPU per action of:

- ``asyncsports``: ``client.live.actions`` as it is;
- ``floor``: aiohttp ``ws_connect`` + msgspec decode, no checks (``benchmarks/cases/_live.py``);
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

import dataclasses
import statistics
import sys
from collections.abc import Callable
from typing import Any

from benchmarks.cases._live import SPORT, TIMED, fanin, live
from benchmarks.harness.children import QUICK, Server, cpus, run_child


def _run(fn: Callable[..., Any], params: dict[str, Any]) -> dict[str, Any]:
    sizes = dataclasses.replace(QUICK, live_packets=2_000)
    server_cpu, client_cpus = cpus(pin=True)
    server = Server(sizes, server_cpu)
    try:
        spec = {"manifest": server.manifest, "params": params, "cpus": client_cpus}
        result = run_child(fn, spec, 600)
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
        r = _run(fanin, params)
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
    r = _run(live, params)
    floor, n = r["floor"]["cpu"], r["actions"]
    print(f"one feed of {n:,} actions flat out ({SPORT}), {len(floor)} paired rounds:")
    for name in variants:
        cpu = r[name]["cpu"]
        ratio = statistics.median([a / b for a, b in zip(cpu, floor, strict=True)])
        print(f"  {name:24s} {statistics.median(cpu) / n * 1e6:6.2f} us/action  {ratio:.3f}x")


if __name__ == "__main__":
    main()
