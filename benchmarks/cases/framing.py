"""framing: a timeline in memory, jsonstream.decode_array over its chunks vs one decode."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp

from asyncsports.models import Action, decoder
from benchmarks.harness.children import Context
from benchmarks.harness.manifest import Manifest, Params
from benchmarks.harness.manifest import actions_path as _actions_path
from benchmarks.harness.manifest import fetch as _get
from benchmarks.harness.manifest import headers as _headers
from benchmarks.harness.measure import rounds as _rounds
from benchmarks.harness.measure import warm as _warm
from benchmarks.harness.registry import Case, Result
from benchmarks.harness.report import Row, median, paired


def _gc_off(fn: Callable[[], Awaitable[int]]) -> Callable[[], Awaitable[int]]:
    async def run() -> int:
        gc.disable()
        try:
            return await fn()
        finally:
            gc.enable()

    return run


async def framing(m: Manifest, p: Params) -> dict[str, Any]:
    """A timeline already in memory: decode_array over its chunks vs one decode of it.

    Issue 4's in-process figure (benchmarks/jsonstream_bench.py measures it on a
    synthetic body), here on the emulator's body: no I/O, every batch kept as the whole
    decode keeps its list (and once with each batch dropped, as a streaming consumer
    runs), timed with the cyclic GC off (what framing costs) and on.
    """
    from asyncsports.jsonstream import decode_array

    records, size = p["records"], p["chunk"]
    async with aiohttp.ClientSession() as http:
        body = await _get(http, m["big"] + _actions_path(m, records), _headers(m))
    parts = [body[i : i + size] for i in range(0, len(body), size)]
    dec = decoder(list[Action])

    async def chunks() -> AsyncIterator[bytes]:
        for part in parts:
            yield part

    async def streamed() -> int:
        out: list[Action] = []
        async for batch in decode_array(chunks(), dec):
            out.extend(batch)
        return len(out)

    async def dropped() -> int:
        # As a streaming consumer runs it: each batch let go before the next.
        n = 0
        async for batch in decode_array(chunks(), dec):
            n += len(batch)
        return n

    async def whole() -> int:
        return len(dec.decode(body))

    variants = {
        "streamed": _gc_off(streamed),
        "streamed, batches dropped": _gc_off(dropped),
        "whole": _gc_off(whole),
        "streamed, gc on": streamed,
        "whole, gc on": whole,
    }
    await _warm(variants, records)
    times = await _rounds(variants, p["repeat"])
    return {"records": records, "bytes": len(body), "chunk": size, **times}


def run(ctx: Context, s: dict[str, Any]) -> Result:
    return ctx.child(framing, records=ctx.sizes.stream_records, **s)


def rows(fr: Result | None, counts: Result | None, quick: bool) -> list[Row]:
    """CPU with the GC off against one decode; with the GC on and batches dropped in the note."""
    if fr is None:
        return []
    st, wh = fr["streamed"]["cpu"], fr["whole"]["cpu"]
    on = paired(fr["streamed, gc on"]["cpu"], fr["whole, gc on"]["cpu"])
    dropped = paired(fr["streamed, batches dropped"]["cpu"], wh)
    return [
        Row(
            "stream",
            f"{fr['records']:,} actions in memory ({fr['bytes'] / 1e6:,.0f} MB) in "
            f"{fr['chunk'] // 1024} KiB chunks: jsonstream.decode_array vs one decode",
            "CPU, cyclic GC off",
            "ms",
            median(st) * 1e3,
            median(wh) * 1e3,
            "msgspec Decoder(list[Action]).decode of the whole body",
            "cost",
            1.10,
            f"no I/O, every batch kept; with the GC on: {on:.3f}x; GC off, each batch "
            f"dropped before the next (as a streaming consumer runs): {dropped:.3f}x. "
            "Kept batches keep their runs alive (action metadata is msgspec.Raw into "
            "them), so each run is copied into fresh pages: most of the difference",
            paired=paired(st, wh),
        )
    ]


CASE = Case(
    name="framing",
    run=run,
    rows=rows,
    quick={"chunk": 256 * 1024, "repeat": 5},
    full={"chunk": 256 * 1024, "repeat": 7},
    order=70,
)
