"""gets: ``fixtures.get`` in a loop, one request per record, vs the same GETs on aiohttp."""

from __future__ import annotations

from typing import Any

from benchmarks.cases._walks import (
    GET_FLOOR,
    GET_TARGET,
    SETTINGS,
    count,
    get_rows,
    run_alone,
    run_together,
)
from benchmarks.harness.children import Context
from benchmarks.harness.registry import Case, Result
from benchmarks.harness.report import Row


def counts(ctx: Context, s: dict[str, Any]) -> Result:
    params = {"case": "gets", "gets": s["gets"], "walks": 1}
    return count(ctx, params, ("asyncsports", "floor"), s["gets"])


def rows(g: Result | None, c: Result | None, quick: bool) -> list[Row]:
    """CPU per request against the floor; instructions per request when counted."""
    out = get_rows(g) if g is not None else []
    if c is not None:
        out.append(
            Row(
                "get",
                f"{c['requests']:,} x `await client.fixtures.get(...)`: instructions "
                "(valgrind callgrind)",
                "instructions per request",
                "k",
                c["asyncsports"] / 1e3,
                c["floor"] / 1e3,
                GET_FLOOR,
                "cost",
                GET_TARGET,
                "a count, not a time: it does not move with the machine's load",
            )
        )
    return out


CASE = Case(
    name="gets",
    run=run_alone("gets"),
    rows=rows,
    quick={**SETTINGS["quick"], "gets": 100},
    full={**SETTINGS["full"], "gets": 1_000},
    order=40,
    count=counts,
    label="get",
    together=run_together,
)
