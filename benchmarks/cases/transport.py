"""transport: the pyreqwest spike: a hand loop and the library over it, vs aiohttp (20, 100 a page).

Four walks of every page of the big season, paired in each round of one process: the
floor (aiohttp + msgspec, the ``walk`` cases' loop), the same loop by hand on pyreqwest
(Rust's reqwest) + msgspec, and ``client.fixtures.list`` over each transport
(``AiohttpTransport``, the default, and ``asyncsports/_http/transports/pyreqwest.py``
through ``Client(transport=...)``). CPU time is the whole process's, so the tokio
thread pyreqwest runs its I/O on counts too. Without pyreqwest (the ``bench`` extra)
the case says so in one row and runs nothing.
"""

from __future__ import annotations

import importlib.util
import resource
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

from asyncsports import Client
from asyncsports.models import decoder
from benchmarks.cases._walks import SETTINGS, WALK_FLOOR, pool, record_walk, walk_variants
from benchmarks.floor import FloorPage
from benchmarks.harness.children import Context
from benchmarks.harness.manifest import Manifest, Params
from benchmarks.harness.manifest import control as _server
from benchmarks.harness.manifest import fixtures_path as _fixtures_path
from benchmarks.harness.manifest import headers as _headers
from benchmarks.harness.measure import rounds as _rounds
from benchmarks.harness.measure import warm as _warm
from benchmarks.harness.registry import Case, Result
from benchmarks.harness.report import Row, median, paired

VARIANTS = ("floor", "pyreqwest", "asyncsports", "asyncsports/pyreqwest")
SIZES = (20, 100)
CLAIM = 0.89  # issue 22: the hand loop on pyreqwest against the aiohttp floor, CPU

Walk = Callable[[], Awaitable[int]]


def _hand_loop(http: Any, m: Manifest, size: int) -> Walk:
    """The floor's page loop on pyreqwest: the body whole in Rust, msgspec on its buffer."""
    url = m["big"] + _fixtures_path(m)
    headers = _headers(m)
    first = [("paged", "true"), ("size", str(size))]
    page_dec = decoder(FloorPage)

    async def walk() -> int:
        n = 0
        number = 0
        while True:
            req = http.get(url).query([*first, ("page", str(number))]).headers(headers)
            resp = await req.build().send()
            env = page_dec.decode(await resp.bytes())  # a Bytes: msgspec reads its buffer
            for _ in env.content:
                n += 1
            number += 1
            if env.last or not env.content:
                return n

    return walk


def _usage(fn: Walk, into: list[list[float]]) -> Walk:
    """``fn``, noting the process's user and system seconds and context switches per run."""

    async def run() -> int:
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        n = await fn()
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        into.append(
            [
                r1.ru_utime - r0.ru_utime,
                r1.ru_stime - r0.ru_stime,
                r1.ru_nvcsw - r0.ru_nvcsw,
                r1.ru_nivcsw - r0.ru_nivcsw,
            ]
        )
        return n

    return run


async def spike(m: Manifest, p: Params) -> dict[str, Any]:
    """Every variant at every size of ``p["sizes"]``, ``p["repeat"]`` paired rounds."""
    # Here, not with the module: the case imports (and says why it did not run) without it.
    from pyreqwest.client import ClientBuilder

    from asyncsports._http.transports.pyreqwest import PyreqwestTransport

    n = p["fixtures"]
    usage: dict[str, list[list[float]]] = {}
    async with (
        Client(m["big"], token=m["token"], vendor=m["vendor"]) as lib,
        Client(m["big"], token=m["token"], vendor=m["vendor"], transport=PyreqwestTransport) as rq,
        aiohttp.ClientSession() as http,
        ClientBuilder().build() as hand,
    ):
        variants: dict[str, Walk] = {}
        for size in p["sizes"]:
            fns = {
                "floor": walk_variants(lib, http, m, size)["floor"],
                "pyreqwest": _hand_loop(hand, m, size),
                "asyncsports": record_walk(lib, m, size),
                "asyncsports/pyreqwest": record_walk(rq, m, size),
            }
            await _warm(fns, n)
            for v, fn in fns.items():
                key = f"{size}/{v}"
                variants[key] = _usage(fn, usage.setdefault(key, []))
        for runs in usage.values():
            runs.clear()  # the warm-up's
        await _server(m, "big", "reset")
        times = await _rounds(variants, p["repeat"])
        stats = await _server(m, "big", "stats")
    out: dict[str, Any] = {}
    for size in p["sizes"]:
        mine = {v: {**times[f"{size}/{v}"], "usage": usage[f"{size}/{v}"]} for v in VARIANTS}
        out[str(size)] = {"fixtures": n, "pages": n // size, **mine, **stats}
    return out


def run(ctx: Context, s: dict[str, Any]) -> Result:
    """``processes`` fresh processes of :func:`spike`, their rounds pooled per size."""
    if importlib.util.find_spec("pyreqwest") is None:
        return {"skipped": "pyreqwest is not installed (pip install -e '.[bench]'): not measured"}
    params = {"sizes": list(SIZES), "fixtures": ctx.sizes.walk_fixtures, "repeat": s["repeat"]}
    runs = [ctx.child(spike, **params) for _ in range(s["processes"])]
    errors = [r["error"] for r in runs if "error" in r]
    if errors:
        return {"error": "; ".join(errors)}
    return {str(size): _pool_usage([r[str(size)] for r in runs]) for size in SIZES}


def _pool_usage(results: list[Result]) -> Result:
    out = pool(results)
    for v in VARIANTS:
        out[v]["usage"] = [u for r in results for u in r[v]["usage"]]
    return out


def _split(w: Result, v: str) -> str:
    """User and system time per request, and context switches per request (medians)."""
    usage, pages = w[v]["usage"], w["pages"]
    user, system, vol, invol = (median([u[i] for u in usage]) for i in range(4))
    return (
        f"{v}: user {user / pages * 1e6:.0f} + sys {system / pages * 1e6:.0f} us/request, "
        f"{vol / pages:.1f} voluntary + {invol / pages:.1f} forced switches/request"
    )


def _row(w: Result, top: str, bottom: str, what: str, base: str, note: str) -> Row:
    n, size = w["fixtures"], w["fixtures"] // w["pages"]
    cpu = {k: w[k]["cpu"] for k in (top, bottom)}
    per = {k: median(v) / w["pages"] * 1e6 for k, v in cpu.items()}
    return Row(
        "transport",
        f"{w['pages']:,}-page fixture walk, {size} per page ({n:,} fixtures): {what}",
        "client CPU per request",
        "us",
        per[top],
        per[bottom],
        base,
        "cost",
        None,
        f"{note}{'; ' if note else ''}{_split(w, top)}; {_split(w, bottom)}; "
        f"{len(cpu[bottom])} paired rounds in {w.get('processes', 1)} processes",
        paired=paired(cpu[top], cpu[bottom]),
    )


def rows(result: Result | None, counts: Result | None, quick: bool) -> list[Row]:
    """Per size: the hand loop and the library over each transport against the floor,
    and the library over pyreqwest against the library over aiohttp."""
    out: list[Row] = []
    for size in SIZES:
        w = (result or {}).get(str(size))
        if w is None:
            continue
        out += [
            _row(
                w,
                "pyreqwest",
                "floor",
                "hand loop, pyreqwest + msgspec",
                WALK_FLOOR,
                f"issue 22 measured {CLAIM}x",
            ),
            _row(
                w,
                "asyncsports",
                "floor",
                "`client.fixtures.list`, AiohttpTransport",
                WALK_FLOOR,
                "",
            ),
            _row(
                w,
                "asyncsports/pyreqwest",
                "floor",
                "`client.fixtures.list`, PyreqwestTransport",
                WALK_FLOOR,
                "",
            ),
            _row(
                w,
                "asyncsports/pyreqwest",
                "asyncsports",
                "the library over pyreqwest vs over aiohttp",
                "`client.fixtures.list` over AiohttpTransport",
                "",
            ),
        ]
    return out


CASE = Case(
    name="transport",
    run=run,
    rows=rows,
    quick=dict(SETTINGS["quick"]),
    full=dict(SETTINGS["full"]),
    order=35,
)
