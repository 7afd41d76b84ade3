"""memory: peak RSS growth over iterating a timeline, streamed or read whole."""

from __future__ import annotations

import time
from typing import Any

import aiohttp

from asyncsports.models import Action, decoder
from benchmarks.harness.children import Context
from benchmarks.harness.manifest import TIMELINE_SPORT, Manifest, Params
from benchmarks.harness.manifest import actions_path as _actions_path
from benchmarks.harness.manifest import client as _client
from benchmarks.harness.manifest import fetch as _get
from benchmarks.harness.manifest import headers as _headers
from benchmarks.harness.measure import peak_kb, reset_peak, rss_kb
from benchmarks.harness.registry import Case, Result
from benchmarks.harness.report import Row


async def memory(m: Manifest, p: Params) -> dict[str, Any]:
    """Peak RSS growth over iterating a timeline, streamed or whole (one variant per process)."""
    records = p["records"]
    fid = m["timelines"][str(records)]
    async with _client(m) as client, aiohttp.ClientSession() as http:
        # The baseline is taken with everything imported and both pools open; the peak is
        # reset to it, so import-time transients do not hide growth.
        resettable = reset_peak()
        before = rss_kb()
        start_peak = peak_kb()
        c0, w0 = time.process_time(), time.perf_counter()
        n = 0
        if p["variant"] == "streamed":
            async for _ in client.actions.list(TIMELINE_SPORT, fid):
                n += 1
        else:
            body = await _get(http, m["big"] + _actions_path(m, records), _headers(m))
            for _ in decoder(list[Action]).decode(body):
                n += 1
            del body
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        peak = peak_kb()
    if n != records:
        raise AssertionError(f"{n} records, expected {records}")
    return {
        "records": records,
        "variant": p["variant"],
        "rss_before_kb": before,
        "peak_kb": peak,
        # Without a reset, a peak from before the run would hide growth below it.
        "growth_kb": peak - (before if resettable else max(before, start_peak)),
        "peak_reset": resettable,
        "cpu": cpu,
        "wall": wall,
    }


def run(ctx: Context, s: dict[str, Any]) -> Result:
    # One process per variant: a peak in one must not hide or inflate the other's.
    records = ctx.sizes.memory_records
    variants = {v: ctx.child(memory, records=records, variant=v) for v in s["variants"]}
    errors = [r["error"] for r in variants.values() if "error" in r]
    return {"error": "; ".join(errors)} if errors else variants


def rows(mem: Result | None, counts: Result | None, quick: bool) -> list[Row]:
    """Peak RSS growth of the streamed iteration, the whole body's beside it."""
    if mem is None:
        return []
    st, wh = mem["streamed"], mem["whole"]
    note = "peak RSS (VmHWM) minus RSS before, each variant in a fresh process"
    if quick:
        note += f"; quick mode: {st['records']:,} actions (full mode: 1,000,000)"
    return [
        Row(
            "stream",
            f"{st['records']:,} actions iterated: peak RSS growth",
            "peak RSS growth",
            "MB",
            st["growth_kb"] / 1024,
            wh["growth_kb"] / 1024,
            "whole body read and decoded",
            "below",
            50.0,
            note,
        )
    ]


CASE = Case(
    name="memory",
    run=run,
    rows=rows,
    quick={"variants": ["streamed", "whole"]},
    full={"variants": ["streamed", "whole"]},
    order=80,
    label="stream memory",
)
