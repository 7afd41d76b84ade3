"""live: one feed flat out, client CPU per action, asyncsports and the peers vs the floor."""

from __future__ import annotations

import subprocess
from typing import Any

from benchmarks.cases._live import LIVE_VARIANTS, live, live_icount
from benchmarks.cases._live_rows import live_rows
from benchmarks.harness.children import Context
from benchmarks.harness.registry import Case, Result


def run(ctx: Context, s: dict[str, Any]) -> Result:
    return ctx.child(live, actions=s["actions"], repeat=s["repeat"])


def count(ctx: Context, s: dict[str, Any]) -> Result:
    """Instructions of one whole feed (``icount_actions`` packets) for each variant.

    A variant that cannot run (asyncsports before ``client.live``, a peer not installed)
    is left out, with its error under ``errors``.
    """
    n = s["icount_actions"]
    out: dict[str, Any] = {"actions": n, "errors": {}}
    for variant in LIVE_VARIANTS:
        try:
            out[variant] = ctx.instructions(live_icount, actions=n, variant=variant)
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            out["errors"][variant] = f"{type(exc).__name__}: {exc}"
    return out


CASE = Case(
    name="live",
    run=run,
    rows=live_rows,
    quick={"actions": 1_000, "repeat": 3, "icount_actions": 500},
    full={"actions": 20_000, "repeat": 7, "icount_actions": 2_000},  # callgrind: 50x slower
    order=110,
    count=count,
)
