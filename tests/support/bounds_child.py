"""Run by test_live_bounds.py in a process of its own: follow one live actions feed, then
print one JSON line: the records' traceIds, the error it ended with, its time and the
process's peak RSS (``ru_maxrss``, kB on Linux).

    python bounds_child.py WAY LIVE_URL SPORT FIXTURE_ID IDLE_TIMEOUT [MAX_UNSENT]

WAY: ``feed`` (iterated) or ``merged`` (``client.live.merge``, pushed by picows).
MAX_UNSENT: the bytes of pongs a socket may have waiting before it gives up on a server
that reads nothing (NotReading); lowered (to 1), a ping flood is given up so at once in
most runs rather than by the idle timeout.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time

from asyncsports import Client, RetryPolicy, Timeout


async def main(way: str, live_url: str, sport: str, fid: str, idle: float) -> None:
    policy = RetryPolicy(max_retries=4, base=0.01, cap=0.05)
    origin = live_url.replace("ws", "http", 1)  # no REST asked of it
    ids: list[str | None] = []
    error = None
    started = time.monotonic()
    async with Client(
        origin, token="child-token", live_url=live_url, retry=policy, timeout=Timeout(connect=0.5)
    ) as c:
        feed = c.live.actions(sport, fid, idle_timeout=idle)
        try:
            if way == "feed":
                async with feed:
                    async for a in feed:
                        ids.append(a.trace_id)
            else:
                async with c.live.merge([feed]) as m:
                    async for _, a in m:
                        ids.append(a.trace_id)
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
    out = {
        "trace_ids": ids,
        "error": error,
        "elapsed": time.monotonic() - started,
        "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    way, url, sport, fid, idle = sys.argv[1:6]
    if len(sys.argv) > 6:
        from asyncsports._http.transports import picows

        picows.MAX_UNSENT = int(sys.argv[6])
    asyncio.run(main(way, url, sport, fid, float(idle)))
