"""stream: a timeline streamed by client.actions.list vs read whole and decoded once."""

from __future__ import annotations

from typing import Any

import aiohttp

from asyncsports.models import Action, decoder
from benchmarks.harness.children import Context
from benchmarks.harness.manifest import TIMELINE_SPORT, Manifest, Params
from benchmarks.harness.manifest import actions_path as _actions_path
from benchmarks.harness.manifest import client as _client
from benchmarks.harness.manifest import control as _server
from benchmarks.harness.manifest import fetch as _get
from benchmarks.harness.manifest import headers as _headers
from benchmarks.harness.measure import rounds as _rounds
from benchmarks.harness.measure import warm as _warm
from benchmarks.harness.registry import Case, Result
from benchmarks.harness.report import Row, median, paired


async def stream(m: Manifest, p: Params) -> dict[str, Any]:
    """Iterate a timeline streamed by client.actions.list vs read whole and decoded once."""
    records = p["records"]
    url = m["big"] + _actions_path(m, records)
    headers = _headers(m)
    fid = m["timelines"][str(records)]
    dec = decoder(list[Action])

    async with _client(m) as client, aiohttp.ClientSession() as http:

        async def streamed() -> int:
            n = 0
            async for _ in client.actions.list(TIMELINE_SPORT, fid):
                n += 1
            return n

        async def whole() -> int:
            n = 0
            for _ in dec.decode(await _get(http, url, headers)):
                n += 1
            return n

        variants = {"streamed": streamed, "whole": whole}
        await _warm(variants, records)
        await _server(m, "big", "reset")
        times = await _rounds(variants, p["repeat"])
        stats = await _server(m, "big", "stats")
    return {"records": records, **times, **stats}


def run(ctx: Context, s: dict[str, Any]) -> Result:
    return ctx.child(stream, records=ctx.sizes.stream_records, **s)


def rows(s: Result | None, counts: Result | None, quick: bool) -> list[Row]:
    """Client CPU, streamed against whole, with the cyclic GC's share of each."""
    if s is None:
        return []
    st, wh = s["streamed"], s["whole"]
    gc_share = {
        k: median(v["gc"]) / median(v["cpu"]) for k, v in s.items() if k in ("streamed", "whole")
    }
    return [
        Row(
            "stream",
            f"{s['records']:,} actions: client.actions.list vs read whole + decode",
            "client CPU",
            "ms",
            median(st["cpu"]) * 1e3,
            median(wh["cpu"]) * 1e3,
            "aiohttp read() + msgspec Decoder(list[Action]).decode",
            "cost",
            1.10,
            f"wall {median(st['wall']):.3f}s vs {median(wh['wall']):.3f}s "
            f"({paired(st['wall'], wh['wall']):.3f}x); cyclic GC: "
            f"{gc_share['streamed']:.0%} of the streamed CPU, {gc_share['whole']:.0%} of "
            f"the whole-body CPU; server cache misses while measured: {s.get('misses', '?')}",
            paired=paired(st["cpu"], wh["cpu"]),
        )
    ]


CASE = Case(
    name="stream",
    run=run,
    rows=rows,
    quick={"repeat": 5},
    full={"repeat": 7},
    order=60,
)
