"""Run one function of a case in this (fresh) process: ``python -m benchmarks.harness.child
MODULE:FUNCTION JSON``.

JSON holds ``manifest`` (the server's), ``params`` and optionally ``cpus`` (the CPUs to
run on). The function's result is printed as the last line of stdout, as JSON.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import sys
from typing import Any


def main(argv: list[str] | None = None) -> None:
    target, raw = (argv if argv is not None else sys.argv[1:])[:2]
    module, _, name = target.partition(":")
    fn = getattr(importlib.import_module(module), name)
    spec = json.loads(raw)
    cpus = spec.get("cpus")
    if cpus and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, set(cpus))
    result: dict[str, Any] = asyncio.run(fn(spec["manifest"], spec["params"]))
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
