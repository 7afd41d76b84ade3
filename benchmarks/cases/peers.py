"""peers: the fixture walk, asyncsports vs httpx.AsyncClient + pydantic v2 models."""

from __future__ import annotations

from typing import Any

from benchmarks.cases._walks import RECORDS, record_walk
from benchmarks.harness.children import Context
from benchmarks.harness.manifest import Manifest, Params
from benchmarks.harness.manifest import client as _client
from benchmarks.harness.manifest import fixtures_path as _fixtures_path
from benchmarks.harness.manifest import headers as _headers
from benchmarks.harness.measure import rounds as _rounds
from benchmarks.harness.measure import warm as _warm
from benchmarks.harness.registry import Case, Result
from benchmarks.harness.report import Row, median, paired


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

        variants = {"asyncsports": record_walk(client, m, size), "httpx+pydantic": httpx_pydantic}
        await _warm(variants, p["fixtures"])
        times = await _rounds(variants, p["repeat"])
    return {"fixtures": p["fixtures"], "pages": p["fixtures"] // size, **times}


def run(ctx: Context, s: dict[str, Any]) -> Result:
    return ctx.child(peers, fixtures=ctx.sizes.walk_fixtures, **s)


def rows(pe: Result | None, counts: Result | None, quick: bool) -> list[Row]:
    """CPU per fixture against httpx + pydantic."""
    if pe is None:
        return []
    n = pe["fixtures"]
    ours, theirs = pe["asyncsports"]["cpu"], pe["httpx+pydantic"]["cpu"]
    return [
        Row(
            "walk",
            f"{pe['pages']}-page fixture walk, {n // pe['pages']} per page" + RECORDS,
            "client CPU per fixture",
            "us",
            median(ours) / n * 1e6,
            median(theirs) / n * 1e6,
            "httpx.AsyncClient + pydantic v2 models, same page loop",
            "faster",
            5.0,
            f"wall {median(pe['asyncsports']['wall']):.3f}s vs "
            f"{median(pe['httpx+pydantic']['wall']):.3f}s (httpx)",
            paired=paired(theirs, ours),
        )
    ]


CASE = Case(
    name="peers",
    run=run,
    rows=rows,
    quick={"size": 100, "repeat": 3},
    full={"size": 100, "repeat": 5},
    order=50,
    label="walk vs httpx",
)
