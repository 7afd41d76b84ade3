"""idle: resident memory per idle connected feed, one process per variant."""

from __future__ import annotations

from typing import Any

from benchmarks.cases._live import IDLE_VARIANTS, idle
from benchmarks.cases._live_rows import idle_rows
from benchmarks.harness.children import Context
from benchmarks.harness.registry import Case, Result


def run(ctx: Context, s: dict[str, Any]) -> Result:
    """One process per variant, as RSS once grown does not shrink for the next."""
    out: dict[str, Any] = {}
    for variant in s["variants"] or IDLE_VARIANTS:
        result = ctx.child(idle, feeds=s["feeds"], variant=variant)
        if "error" in result and "no variant" in result["error"]:
            continue  # asyncsports' own rows wait for client.live
        out[variant] = result
    errors = [f"{v}: {r['error']}" for v, r in out.items() if "error" in r]
    return {"error": "; ".join(errors)} if errors else out


CASE = Case(
    name="idle",
    run=run,
    rows=idle_rows,
    quick={"feeds": 100, "variants": ["asyncsports", "floor"]},
    full={"feeds": 1_000, "variants": []},
    order=130,
)
