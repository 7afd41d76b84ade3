"""The benchmarks themselves, each run in a fresh child process (``benchmarks.child``).

Every case takes the server's manifest and its parameters and returns raw numbers
(seconds, KiB, counts); :mod:`benchmarks.report` turns them into ratios and verdicts.
Within a case the variants run interleaved, round after round, so that load on the
machine falls on all of them alike; every round's figures are kept (the report takes
medians, and for a ratio the median of the per-round ratios). Every variant
runs once unmeasured first: that fills the server's cache, opens connections and warms
the decoders. The server's cache misses during measured rounds are reported (they
should be 0: a miss means the server rendered a body while being measured against).
"""

from __future__ import annotations

import contextlib
import gc
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from typing import Any

import aiohttp

from asyncsports import Client
from asyncsports.models import Action, FixturePage, decoder
from benchmarks import sync_bench
from benchmarks.measure import Sample, measure, measure_sync, peak_kb, reset_peak, rss_kb, series
from benchmarks.sinkcase import backfill

# pydantic and httpx are imported by the cases that use them, so that the memory cases
# start without them and every child spends its start-up on what it measures.

__all__ = ["CASES"]

Manifest = dict[str, Any]
Params = dict[str, Any]
SPORT = "basketball"
TIMELINE_SPORT = "american-football"


def _headers(m: Manifest) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {m['token']}",
        "Accept": f"application/vnd.{m['vendor']}.dde.api+json;version=1",
    }


def _client(m: Manifest, base: str = "big") -> Client:
    return Client(m[base], token=m["token"], vendor=m["vendor"])


def _fixtures_path(m: Manifest) -> str:
    return f"/{SPORT}/seasons/{m['big_season_id']}/fixtures"


def _actions_path(m: Manifest, records: int) -> str:
    return f"/{TIMELINE_SPORT}/fixtures/{m['timelines'][str(records)]}/actions"


async def _get(http: aiohttp.ClientSession, url: str, headers: dict[str, str], **kw: Any) -> bytes:
    async with http.get(url, headers=headers, **kw) as resp:
        resp.raise_for_status()
        return await resp.read()


async def _server(m: Manifest, base: str, route: str) -> dict[str, Any]:
    async with aiohttp.ClientSession() as http, http.get(f"{m[base]}/_bench/{route}") as r:
        result: dict[str, Any] = await r.json()
        return result


Variants = Mapping[str, Callable[[], Awaitable[int]]]
Series = dict[str, dict[str, list[float]]]


async def _warm(variants: Variants, expect: int) -> None:
    """Run every variant once, unmeasured, and check it saw ``expect`` records."""
    for name, fn in variants.items():
        n = await fn()
        if n != expect:
            raise AssertionError(f"{name}: {n} records, expected {expect}")


async def _rounds(variants: Variants, repeat: int) -> Series:
    """``repeat`` interleaved measured rounds: each variant's figures, round by round."""
    samples: dict[str, list[Sample]] = {name: [] for name in variants}
    for _ in range(repeat):
        for name, fn in variants.items():
            sample, _n = await measure(fn)
            samples[name].append(sample)
    return {name: series(s) for name, s in samples.items()}


# --------------------------------------------------------------------------- decode


async def decode(m: Manifest, p: Params) -> dict[str, Any]:
    """Decode a fixture page and an action array: asyncsports models vs pydantic v2."""
    from benchmarks.peers import PYDANTIC_ACTIONS, PYDANTIC_PAGE

    headers = _headers(m)
    async with aiohttp.ClientSession() as http:
        page = await _get(
            http,
            m["big"] + _fixtures_path(m),
            headers,
            params=[("paged", "true"), ("size", str(p["page_size"])), ("page", "0")],
        )
        actions = await _get(http, m["big"] + _actions_path(m, p["actions"]), headers)
    page_dec = decoder(FixturePage)
    actions_dec = decoder(list[Action])
    bodies: dict[str, tuple[bytes, dict[str, Callable[[], Any]]]] = {
        "page": (
            page,
            {
                "asyncsports": lambda: page_dec.decode(page),
                "pydantic": lambda: PYDANTIC_PAGE.validate_json(page),
            },
        ),
        "actions": (
            actions,
            {
                "asyncsports": lambda: actions_dec.decode(actions),
                "pydantic": lambda: PYDANTIC_ACTIONS.validate_json(actions),
            },
        ),
    }
    assert len(page_dec.decode(page).content) == len(PYDANTIC_PAGE.validate_json(page).content)
    assert len(actions_dec.decode(actions)) == len(PYDANTIC_ACTIONS.validate_json(actions))
    out: dict[str, Any] = {}
    for body_name, (body, fns) in bodies.items():
        # Calls per round: enough for the slowest variant to take about ``round`` seconds.
        slowest = max(measure_sync(fn).cpu for fn in fns.values())
        number = max(1, int(p["round"] / max(slowest, 1e-6)))
        samples: dict[str, list[Sample]] = {name: [] for name in fns}
        for _ in range(p["rounds"]):
            for name, fn in fns.items():
                samples[name].append(measure_sync(fn, number))
        out[body_name] = {
            "bytes": len(body),
            "records": p["page_size"] if body_name == "page" else p["actions"],
            "calls": number,
            **{name: series(s) for name, s in samples.items()},
        }
    return out


# --------------------------------------------------------------------------- walk


def _records(
    client: Client, m: Manifest, size: int, limit: int = 0
) -> Callable[[], Awaitable[int]]:
    async def records() -> int:
        # The usual form: one record at a time.
        n = 0
        listing = client.fixtures.list(SPORT, season_id=m["big_season_id"], size=size)
        async for _ in listing:
            n += 1
            if n == limit * size:
                await listing.aclose()  # stop the page fetched ahead
                break
        return n

    return records


def walk_variants(
    client: Client, http: aiohttp.ClientSession, m: Manifest, size: int, limit: int = 0
) -> dict[str, Callable[[], Awaitable[int]]]:
    """The fixture walks compared with the floor, each returning the records it saw.

    ``limit`` stops each after that many pages (0: at the end of the listing).
    """
    from benchmarks.floor import FloorPage

    url = m["big"] + _fixtures_path(m)
    headers = _headers(m)
    first = [("paged", "true"), ("size", str(size))]
    page_dec = decoder(FloorPage)

    async def pages() -> int:
        # A page at a time, as the floor's loop has them.
        n = 0
        listing = client.fixtures.list(SPORT, season_id=m["big_season_id"], size=size)
        async for page in listing.pages():
            for _ in page:
                n += 1
            if n == limit * size:
                await listing.aclose()
                break
        return n

    async def floor() -> int:
        # The library's page loop by hand: no retries, hooks, checks or prefetch.
        n = 0
        number = 0
        while True:
            async with http.get(url, params=[*first, ("page", str(number))], headers=headers) as r:
                body = await r.read()
            env = page_dec.decode(body)
            for _ in env.content:
                n += 1
            number += 1
            if env.last or not env.content or number == limit:
                return n

    return {
        "asyncsports": _records(client, m, size, limit),
        "asyncsports pages()": pages,
        "floor": floor,
    }


async def _fixture_ids(http: aiohttp.ClientSession, m: Manifest, count: int) -> list[str]:
    """The ids of the big season's first ``count`` fixtures (one page, unmeasured)."""
    from benchmarks.floor import FloorPage

    body = await _get(
        http,
        m["big"] + _fixtures_path(m),
        _headers(m),
        params=[("paged", "true"), ("size", str(count)), ("page", "0")],
    )
    ids = [str(f.id) for f in decoder(FloorPage).decode(body).content]
    if len(ids) != count:
        raise AssertionError(f"{len(ids)} fixture ids, expected {count}")
    return ids


def get_variants(
    client: Client, http: aiohttp.ClientSession, m: Manifest, ids: list[str]
) -> dict[str, Callable[[], Awaitable[int]]]:
    """``fixtures.get`` in a loop, one request per record, and the floor doing the same GETs."""
    from benchmarks.floor import FFixture

    base = m["big"] + f"/{SPORT}/fixtures/"
    headers = _headers(m)
    dec = decoder(FFixture)

    async def gets() -> int:
        n = 0
        for fid in ids:
            await client.fixtures.get(SPORT, fid)
            n += 1
        return n

    async def floor() -> int:
        # A plain aiohttp session and a msgspec decode: a status check, nothing else.
        n = 0
        for fid in ids:
            async with http.get(base + fid, headers=headers) as r:
                if r.status != 200:
                    raise AssertionError(f"GET {fid}: {r.status}")
                body = await r.read()
            dec.decode(body)
            n += 1
        return n

    return {"asyncsports": gets, "floor": floor}


def _group_variants(
    client: Client, http: aiohttp.ClientSession, m: Manifest, group: Params, ids: list[str]
) -> tuple[dict[str, Callable[[], Awaitable[int]]], int]:
    """One group's variants (a walk at ``size`` a page, or ``gets``) and their record count."""
    if "gets" in group:
        return get_variants(client, http, m, ids[: group["gets"]]), group["gets"]
    return walk_variants(client, http, m, group["size"]), group["fixtures"]


async def requests(m: Manifest, p: Params) -> dict[str, Any]:
    """The request path: fixture walks (at 100 a page and at the default 20) and a get loop.

    ``p["groups"]`` maps a group's name to ``{"size", "fixtures"}`` (walk every page of the
    big season: asyncsports, records and pages(), vs the floor, aiohttp + msgspec) or to
    ``{"gets"}`` (``fixtures.get`` that many times vs the same GETs on a plain aiohttp
    session). Every round runs every variant of every group, one after another, so the
    groups share the load and the process; the result has one entry per group.

    This process imports neither httpx nor pydantic: loading them was measured to shift
    the library's CPU time against the floor's by several percent (where code and heap
    land, not work: the instruction counts do not change), which is no part of either.
    """
    groups: dict[str, Params] = p["groups"]
    async with _client(m) as client, aiohttp.ClientSession() as http:
        most = max((g["gets"] for g in groups.values() if "gets" in g), default=0)
        ids = await _fixture_ids(http, m, most) if most else []
        variants: dict[str, Callable[[], Awaitable[int]]] = {}
        for name, group in groups.items():
            fns, expect = _group_variants(client, http, m, group, ids)
            await _warm(fns, expect)
            variants.update({f"{name}/{v}": fn for v, fn in fns.items()})
        await _server(m, "big", "reset")
        times = await _rounds(variants, p["repeat"])
        stats = await _server(m, "big", "stats")
    out: dict[str, Any] = {}
    for name, group in groups.items():
        mine = {k.partition("/")[2]: v for k, v in times.items() if k.startswith(name + "/")}
        if "gets" in group:
            out[name] = {"gets": group["gets"], **mine, **stats}
        else:
            pages = group["fixtures"] // group["size"]
            out[name] = {"fixtures": group["fixtures"], "pages": pages, **mine, **stats}
    return out


async def icount(m: Manifest, p: Params) -> dict[str, Any]:
    """One variant for an instruction count (the parent runs this under callgrind).

    ``p["case"]`` is ``walk`` (the whole walk at ``size`` a page) or ``gets`` (``gets``
    requests). Warms up, says ``ready`` and waits for a line on stdin (the
    parent zeroes the counters), runs ``walks`` times, says ``done`` and waits again
    (the parent dumps the counters), so that only the measured runs are counted.
    """
    async with _client(m) as client, aiohttp.ClientSession() as http:
        # A short warm-up (each step costs 50 times more under callgrind).
        if p["case"] == "gets":
            ids = await _fixture_ids(http, m, p["gets"])
            fn = get_variants(client, http, m, ids)[p["variant"]]
            await get_variants(client, http, m, ids[:5])[p["variant"]]()
        else:
            fn = walk_variants(client, http, m, p["size"])[p["variant"]]
            await walk_variants(client, http, m, p["size"], limit=3)[p["variant"]]()
        print("ready", flush=True)
        sys.stdin.readline()
        for _ in range(p["walks"]):
            await fn()
        print("done", flush=True)
        sys.stdin.readline()
    return {"variant": p["variant"], "walks": p["walks"]}


async def peers(m: Manifest, p: Params) -> dict[str, Any]:
    """The same walk: asyncsports vs httpx.AsyncClient + pydantic v2 models."""
    import httpx

    from benchmarks.peers import PYDANTIC_PAGE

    size = p["size"]
    url = m["big"] + _fixtures_path(m)
    first = [("paged", "true"), ("size", str(size))]

    async with _client(m) as client, httpx.AsyncClient(headers=_headers(m), timeout=60) as hx:

        async def httpx_pydantic() -> int:
            n = 0
            number = 0
            while True:
                resp = await hx.get(url, params=[*first, ("page", str(number))])
                resp.raise_for_status()
                env = PYDANTIC_PAGE.validate_json(resp.content)
                for _ in env.content:
                    n += 1
                if env.last or not env.content:
                    return n
                number += 1

        variants = {"asyncsports": _records(client, m, size), "httpx+pydantic": httpx_pydantic}
        await _warm(variants, p["fixtures"])
        times = await _rounds(variants, p["repeat"])
    return {"fixtures": p["fixtures"], "pages": p["fixtures"] // size, **times}


# --------------------------------------------------------------------------- stream


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


# --------------------------------------------------------------------------- fan-out


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


CASES: dict[str, Callable[[Manifest, Params], Coroutine[Any, Any, dict[str, Any]]]] = {
    "decode": decode,
    "requests": requests,
    "icount": icount,
    "peers": peers,
    "stream": stream,
    "framing": framing,
    "memory": memory,
    "fanout": fanout,
    "backfill": backfill,  # benchmarks/sinkcase.py
    "sync": sync_bench.sync,
}
