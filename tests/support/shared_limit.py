"""One rate budget shared through Redis by four processes, measured at the emulator (the
test of tests/client/test_shared_limit.py and benchmarks/shared.py)."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from asyncio.subprocess import PIPE

from asyncsports import RetryPolicy
from asyncsports.emulator import Emulator
from support.ratelimit import Arrivals, busiest

RATE = 20
NO_RETRY = RetryPolicy(max_retries=0)

WORKER = textwrap.dedent(
    """
    import asyncio, sys, time
    from asyncsports import Client, RetryPolicy

    async def main(base, token, url, fid, seconds):
        async with Client(base, token=token, rate_limit=20, rate_limit_url=url,
                          rate_limit_key="shared", retry=RetryPolicy(max_retries=0)) as c:
            await c.fixtures.get("basketball", fid)  # connected, warm
            print("ready", flush=True)
            sys.stdin.readline()  # all start together, none busy importing
            end = time.monotonic() + float(seconds)
            async def loop():
                while time.monotonic() < end:
                    await c.fixtures.get("basketball", fid)
            # Four calls at once: each process alone could take the whole budget.
            await asyncio.gather(*(loop() for _ in range(4)))

    asyncio.run(main(*sys.argv[1:]))
    """
)


async def first_fixture(emu: Emulator) -> str:
    async with emu.client() as client, client.fixtures.list("basketball", page_size=1) as listing:
        async for fixture in listing:
            return str(fixture.id)
    raise AssertionError("no fixture")


async def share(redis_url: str, seconds: float) -> tuple[int, float]:
    """Four processes at once on one budget of RATE a second, each with four calls in
    flight, for ``seconds``: the most requests in any sliding second at the server, and
    the share of the budget they used together (first to last request). No 429 allowed.
    Also run by ``python -m benchmarks.shared``."""
    arrivals = Arrivals()
    async with Emulator(rate_limit=RATE, rate_clock=arrivals) as emu:
        fid = await first_fixture(emu)
        arrivals.seen.clear()
        procs = [
            await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                WORKER,
                emu.base_url,
                emu.token,
                redis_url,
                fid,
                str(seconds),
                stdin=PIPE,
                stdout=PIPE,
            )
            for _ in range(4)
        ]
        try:
            # Bounded: a worker that hangs fails the run, never left behind.
            async with asyncio.timeout(seconds + 60):
                for p in procs:
                    assert p.stdout is not None and await p.stdout.readline() == b"ready\n"
                arrivals.seen.clear()
                for p in procs:
                    assert p.stdin is not None
                    p.stdin.write(b"go\n")
                    await p.stdin.drain()
                codes = [await p.wait() for p in procs]
        finally:
            for p in procs:
                if p.returncode is None:
                    p.kill()
                    await p.wait()
        assert codes == [0] * 4  # no 429 (no retries): the server never refused one
        assert emu.faults.injected["rate_limit"] == 0
    seen = sorted(arrivals.seen)
    return busiest(seen), (len(seen) - 1) / (seen[-1] - seen[0]) / RATE
