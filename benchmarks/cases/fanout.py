"""fanout: a 40-page walk with server latency, concurrency=4 vs sequential."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp

from benchmarks.harness.children import Context
from benchmarks.harness.manifest import SPORT, Manifest, Params
from benchmarks.harness.manifest import client as _client
from benchmarks.harness.measure import rounds as _rounds
from benchmarks.harness.measure import warm as _warm
from benchmarks.harness.registry import Case, Result
from benchmarks.harness.report import Row, median, paired


@contextlib.asynccontextmanager
async def _latency(m: Manifest, seconds: float) -> AsyncIterator[None]:
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{m['big']}/_bench/config", params={"latency": str(seconds)}):
            pass
        try:
            yield
        finally:
            async with http.get(f"{m['big']}/_bench/config", params={"latency": "0"}):
                pass


async def fanout(m: Manifest, p: Params) -> dict[str, Any]:
    """A 40-page walk with server latency: concurrency=4 vs sequential (no lookahead)."""
    size = p["size"]
    async with _client(m) as client:

        def walker(concurrency: int, lookahead: int) -> Callable[[], Awaitable[int]]:
            async def run() -> int:
                n = 0
                listing = client.fixtures.list(
                    SPORT,
                    season_id=m["big_season_id"],
                    size=size,
                    concurrency=concurrency,
                    lookahead=lookahead,
                )
                async for _ in listing:
                    n += 1
                return n

            return run

        variants = {
            "concurrency=4": walker(concurrency=4, lookahead=1),
            "sequential": walker(concurrency=1, lookahead=0),
        }
        expect = size * p["pages"]
        await _warm(variants, expect)  # fills the cache, without the wait
        async with _latency(m, p["latency"]):
            times = await _rounds(variants, p["repeat"])
    return {"pages": p["pages"], "size": size, "latency": p["latency"], **times}


def run(ctx: Context, s: dict[str, Any]) -> Result:
    return ctx.child(fanout, size=ctx.sizes.walk_fixtures // s["pages"], **s)


def rows(f: Result | None, counts: Result | None, quick: bool) -> list[Row]:
    """Wall time of the concurrent walk against the sequential one."""
    if f is None:
        return []
    conc, seq = f["concurrency=4"]["wall"], f["sequential"]["wall"]
    return [
        Row(
            "fan-out",
            f"{f['pages']} pages of {f['size']}, {f['latency'] * 1e3:.0f} ms server latency",
            "wall time",
            "s",
            median(conc),
            median(seq),
            "sequential: concurrency=1, lookahead=0",
            "faster",
            3.0,
            paired=paired(seq, conc),
        )
    ]


CASE = Case(
    name="fanout",
    run=run,
    rows=rows,
    quick={"pages": 40, "latency": 0.05, "repeat": 1},
    full={"pages": 40, "latency": 0.05, "repeat": 3},
    order=90,
    label="fan-out",
)
