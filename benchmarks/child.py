"""Run one benchmark case in this (fresh) process: ``python -m benchmarks.child CASE JSON``.

JSON holds ``manifest`` (the server's), ``params`` and optionally ``cpus`` (the CPUs to
run on). The case's result is printed as the last line of stdout, as JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from benchmarks.cases import CASES
from benchmarks.live import LIVE_CASES


def main(argv: list[str] | None = None) -> None:
    name, raw = (argv if argv is not None else sys.argv[1:])[:2]
    spec = json.loads(raw)
    cpus = spec.get("cpus")
    if cpus and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, set(cpus))
    result: dict[str, Any] = asyncio.run(
        {**CASES, **LIVE_CASES}[name](spec["manifest"], spec["params"])
    )
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
