"""The request path shared by the ``walk``, ``walk20`` and ``gets`` cases: the fixture walks,
the get loop, their floor, their instruction counts and their rows."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

from asyncsports import Client
from asyncsports.models import decoder
from benchmarks.floor import FFixture, FloorPage
from benchmarks.harness.children import Context
from benchmarks.harness.manifest import SPORT, Manifest, Params
from benchmarks.harness.manifest import client as _client
from benchmarks.harness.manifest import control as _server
from benchmarks.harness.manifest import fetch as _get
from benchmarks.harness.manifest import fixtures_path as _fixtures_path
from benchmarks.harness.manifest import headers as _headers
from benchmarks.harness.measure import rounds as _rounds
from benchmarks.harness.measure import warm as _warm
from benchmarks.harness.registry import Case, Result
from benchmarks.harness.report import Row, median, paired


def record_walk(
    client: Client, m: Manifest, size: int, limit: int = 0
) -> Callable[[], Awaitable[int]]:
    async def records() -> int:
        # The usual form: one record at a time. The loop's body is the floor's (a count),
        # so a stop after ``limit`` pages is a loop of its own.
        n = 0
        listing = client.fixtures.list(SPORT, season_id=m["big_season_id"], page_size=size)
        if not limit:
            async for _ in listing:
                n += 1
            return n
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
    url = m["big"] + _fixtures_path(m)
    headers = _headers(m)
    first = [("paged", "true"), ("size", str(size))]
    page_dec = decoder(FloorPage)

    async def pages() -> int:
        # A page at a time, as the floor's loop has them.
        n = 0
        listing = client.fixtures.list(SPORT, season_id=m["big_season_id"], page_size=size)
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
        "asyncsports": record_walk(client, m, size, limit),
        "asyncsports pages()": pages,
        "floor": floor,
    }


async def _fixture_ids(http: aiohttp.ClientSession, m: Manifest, count: int) -> list[str]:
    """The ids of the big season's first ``count`` fixtures (one page, unmeasured)."""
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


WALK_FLOOR = "floor: aiohttp + msgspec Structs (gc=False), same page loop"


GET_FLOOR = "floor: the same GETs on a plain aiohttp session, msgspec decode (gc=False)"


WALK_TARGET = 1.05  # 100 a page (issue 10)


WALK20_TARGET = 1.10  # 20 a page, the service's default (issue 10)


WALK1000_TARGET = 1.05  # 1,000 a page (issue 22)


GET_TARGET = 1.10  # fixtures.get in a loop (issue 10)


RECORDS = ": `async for fixture in client.fixtures.list(...)`"


PAGES = ": `async for page in client.fixtures.list(...).pages()`"


def _walk_case(pages: int, fixtures: int, default: bool) -> str:
    size = fixtures // pages
    return f"{pages:,}-page fixture walk, {size} per page" + (
        " (the service's default)" if default else ""
    )


def _walk_rows(w: dict[str, Any], target: float, default: bool) -> list[Row]:
    """The CPU rows of one walk case: records and pages() against the floor."""
    n = w["fixtures"]
    case = _walk_case(w["pages"], n, default)
    names = ("asyncsports", "asyncsports pages()", "floor")
    cpu = {k: w[k]["cpu"] for k in names}
    per = {k: median(v) / n * 1e6 for k, v in cpu.items()}
    wall = {k: median(w[k]["wall"]) for k in names}
    rounds = (
        f"{len(cpu['floor'])} rounds in {w.get('processes', 1)} processes; "
        f"server cache misses while measured: {w.get('misses', '?')}"
    )
    extra = (n / w["pages"]) * (per["asyncsports"] - per["floor"])
    return [
        Row(
            "walk",
            case + RECORDS,
            "client CPU per fixture",
            "us",
            per["asyncsports"],
            per["floor"],
            WALK_FLOOR,
            "cost",
            target,
            f"wall {wall['asyncsports']:.3f}s vs {wall['floor']:.3f}s (floor); "
            f"{extra:.0f} us more CPU per page (medians); the floor loops over each page's "
            f"records with a plain for; {rounds}",
            paired=paired(cpu["asyncsports"], cpu["floor"]),
        ),
        Row(
            "walk",
            case + PAGES,
            "client CPU per fixture",
            "us",
            per["asyncsports pages()"],
            per["floor"],
            WALK_FLOOR,
            "cost",
            target,
            f"wall {wall['asyncsports pages()']:.3f}s vs {wall['floor']:.3f}s (floor)",
            paired=paired(cpu["asyncsports pages()"], cpu["floor"]),
        ),
    ]


def _walk_instruction_rows(c: dict[str, Any], target: float, default: bool) -> list[Row]:
    """The callgrind rows of one walk case: instructions per page."""
    case = _walk_case(c["requests"], c["fixtures"], default)
    return [
        Row(
            "walk",
            f"{case}, {form}: instructions (valgrind callgrind)",
            "instructions per page",
            "M",
            c[name] / 1e6,
            c["floor"] / 1e6,
            WALK_FLOOR,
            "cost",
            target,
            "a count, not a time: it does not move with the machine's load"
            if form == "records"
            else "",
        )
        for name, form in (("asyncsports", "records"), ("asyncsports pages()", "pages()"))
    ]


def get_rows(g: dict[str, Any]) -> list[Row]:
    """The CPU row of the get loop against the floor."""
    n = g["gets"]
    cpu = {k: g[k]["cpu"] for k in ("asyncsports", "floor")}
    per = {k: median(v) / n * 1e6 for k, v in cpu.items()}
    wall = {k: median(g[k]["wall"]) for k in cpu}
    return [
        Row(
            "get",
            f"{n:,} x `await client.fixtures.get(sport, id)`, one request per record",
            "client CPU per request",
            "us",
            per["asyncsports"],
            per["floor"],
            GET_FLOOR,
            "cost",
            GET_TARGET,
            f"wall {wall['asyncsports']:.3f}s vs {wall['floor']:.3f}s (floor); "
            f"{per['asyncsports'] - per['floor']:.0f} us more CPU per request (medians); "
            f"{len(cpu['floor'])} rounds in {g.get('processes', 1)} processes; server cache "
            f"misses while measured: {g.get('misses', '?')}",
            paired=paired(cpu["asyncsports"], cpu["floor"]),
        )
    ]


WALK_VARIANTS = ("asyncsports", "asyncsports pages()", "floor")


def pool(results: list[Result]) -> Result:
    """One result from several processes' results: their rounds end to end."""
    errors = [r["error"] for r in results if "error" in r]
    if errors:
        return {"error": "; ".join(errors)}
    out = dict(results[0])
    for key, value in out.items():
        if isinstance(value, dict) and "cpu" in value:
            out[key] = {field: [x for r in results for x in r[key][field]] for field in value}
        elif key in ("hits", "misses"):
            out[key] = sum(r[key] for r in results)
    out["processes"] = len(results)
    return out


def run_together(ctx: Context, settings: dict[str, dict[str, Any]]) -> dict[str, Result]:
    """The selected request-path cases in the same ``processes`` fresh processes, pooled.

    Every round of a process runs every variant of every case one after another, so they
    share the load and the process. Several processes: where code and heap land shifts
    these close comparisons by a few percent from one process to the next, so no one
    process decides.
    """
    first = next(iter(settings.values()))
    groups = {
        name: {"gets": s["gets"]}
        if "gets" in s
        else {"size": s["size"], "fixtures": ctx.sizes.walk_fixtures}
        for name, s in settings.items()
    }
    runs = [
        ctx.child(requests, groups=groups, repeat=first["repeat"])
        for _ in range(first["processes"])
    ]
    return {name: pool([r.get(name, r) for r in runs]) for name in groups}


def run_alone(name: str) -> Callable[[Context, dict[str, Any]], Result]:
    """``run`` of one request-path case: :func:`run_together` with itself only."""

    def run(ctx: Context, s: dict[str, Any]) -> Result:
        return run_together(ctx, {name: s})[name]

    return run


SETTINGS = {"quick": {"repeat": 12, "processes": 2}, "full": {"repeat": 9, "processes": 5}}


def count(ctx: Context, params: dict[str, Any], variants: tuple[str, ...], requests: int) -> Result:
    """Instructions per request of each variant, each in its own process under callgrind.

    Unlike CPU time, a count does not move with the load on the machine or with where
    code and heap land, so it settles close calls. The counters are zeroed after the
    warm-up and dumped after the measured run, so start-up and warm-up are not counted.
    """
    out: dict[str, Any] = {**params, "requests": requests}
    for variant in variants:
        out[variant] = ctx.instructions(icount, **params, variant=variant) / (
            params["walks"] * requests
        )
    return out


def walk_case(name: str, size: int, target: float, order: int) -> Case:
    """The case of a whole walk of the big season at ``size`` a page."""
    default = size == 20

    def rows(w: Result | None, c: Result | None, quick: bool) -> list[Row]:
        out = _walk_rows(w, target, default) if w is not None else []
        return out + (_walk_instruction_rows(c, target, default) if c is not None else [])

    def counts(ctx: Context, s: dict[str, Any]) -> Result:
        n = ctx.sizes.walk_fixtures
        params = {"case": "walk", "size": size, "fixtures": n, "walks": 1}
        return count(ctx, params, WALK_VARIANTS, n // size)

    return Case(
        name=name,
        run=run_alone(name),
        rows=rows,
        quick={**SETTINGS["quick"], "size": size},
        full={**SETTINGS["full"], "size": size},
        order=order,
        count=counts,
        together=run_together,
    )
