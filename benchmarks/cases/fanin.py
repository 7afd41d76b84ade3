"""fanin: many fixtures' feeds at a pace in one process, delivery latency and CPU per packet."""

from __future__ import annotations

from typing import Any

from benchmarks.cases._live import fanin
from benchmarks.cases._live_rows import fanin_rows
from benchmarks.harness.children import Context
from benchmarks.harness.registry import Case, Result


def run(ctx: Context, s: dict[str, Any]) -> Result:
    # Packets per feed: more than the run can take, so no feed ends early.
    count = int(s["rate"] * (s["warm"] + s["seconds"] + 60))
    return ctx.child(fanin, **{**s, "count": count, "variants": list(s["variants"])})


# Quick mode runs asyncsports and the floor only: each variant costs a second or two, the
# peers are compared in ``live``. ``tick``: the server's pacing turn (500 feeds at 10/s,
# 50 every 10 ms); ``seconds``: the measured window, once every feed flows.
COMMON = {"rate": 10.0, "tick": 0.01}
CASE = Case(
    name="fanin",
    run=run,
    rows=fanin_rows,
    quick={
        **COMMON,
        "fixtures": 100,
        "seconds": 0.5,
        "warm": 0.2,
        "repeat": 1,
        "variants": ["asyncsports merge", "floor"],
    },
    full={**COMMON, "fixtures": 500, "seconds": 5.0, "warm": 1.0, "repeat": 2, "variants": []},
    order=120,
)
