"""decode: a fixture page and an action array, asyncsports models vs pydantic v2."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import aiohttp

from asyncsports.models import Action, FixturePage, decoder
from benchmarks.harness.children import Context
from benchmarks.harness.manifest import Manifest, Params
from benchmarks.harness.manifest import actions_path as _actions_path
from benchmarks.harness.manifest import fetch as _get
from benchmarks.harness.manifest import fixtures_path as _fixtures_path
from benchmarks.harness.manifest import headers as _headers
from benchmarks.harness.measure import Sample, measure_sync, series
from benchmarks.harness.registry import Case, Result
from benchmarks.harness.report import Row, median, paired


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


def run(ctx: Context, s: dict[str, Any]) -> Result:
    return ctx.child(decode, actions=ctx.sizes.decode_actions, **s)


def rows(d: Result | None, counts: Result | None, quick: bool) -> list[Row]:
    """A row per body: CPU per decode against pydantic's."""
    out: list[Row] = []
    for key, label in (("page", "fixture page"), ("actions", "action array")):
        r = (d or {}).get(key)
        if r is None:
            continue
        ours, theirs = r["asyncsports"]["cpu"], r["pydantic"]["cpu"]
        out.append(
            Row(
                "decode",
                f"{r['records']:,}-record {label} ({r['bytes'] / 1e3:,.0f} kB)",
                "CPU per decode",
                "ms",
                median(ours) * 1e3,
                median(theirs) * 1e3,
                "pydantic v2 TypeAdapter.validate_json",
                "faster",
                3.0,
                paired=paired(theirs, ours),
            )
        )
    return out


CASE = Case(
    name="decode",
    run=run,
    rows=rows,
    quick={"page_size": 100, "rounds": 3, "round": 0.03},
    full={"page_size": 100, "rounds": 7, "round": 0.2},
    order=10,
)
