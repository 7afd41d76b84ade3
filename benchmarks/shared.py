"""One rate budget in Redis shared by four processes, counted at the server.

    python -m benchmarks.shared            # writes benchmarks/results/shared/latest.{json,md}
    python -m benchmarks.shared --quick    # one short round

Each round starts a throwaway Redis (tests/support/servers.py) and the emulator with its own
limit of 20 a second (any request past it is a 429), then four processes, each with four
calls in flight, share ``rate_limit=20`` through Redis (tests/support/shared_limit.py,
``share``). Measured at the server: the most requests in any sliding second (target: at
most 20) and the share of the budget used together (target: at least 95%).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = str(HERE.parent / "tests")


async def bench(rounds: int, seconds: float) -> dict[str, Any]:
    sys.path.insert(0, TESTS)
    from support.servers import RedisServer  # type: ignore[import-not-found]
    from support.shared_limit import RATE, share  # type: ignore[import-not-found]

    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not installed (apt-get install redis-server)")
    runs = []
    for _ in range(rounds):
        server = RedisServer(binary)
        try:
            most, used = await share(server.url(), seconds)
        finally:
            server.close()
        runs.append({"busiest": most, "share": used})
    return {"rate": RATE, "seconds": seconds, "runs": runs, "load": os.getloadavg()[0]}


def markdown(data: dict[str, Any]) -> str:
    most = max(r["busiest"] for r in data["runs"])
    used = statistics.median(r["share"] for r in data["runs"])
    ok = most <= data["rate"] and used >= 0.95
    return (
        "\n".join(
            [
                "# One rate budget in Redis, four processes",
                "",
                f"{len(data['runs'])} rounds of {data['seconds']:g} s; load average "
                f"{data['load']:.1f} at the end.",
                "",
                "| budget | busiest sliding second (max) | share used together (median; each round) "
                "| target | result |",
                "|---|---|---|---|---|",
                f"| {data['rate']}/s | {most} | {used:.1%} ("
                + ", ".join(f"{r['share']:.1%}" for r in data["runs"])
                + f") | <= {data['rate']}, >= 95% | {'pass' if ok else '**miss**'} |",
            ]
        )
        + "\n"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "shared")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.seconds = 1, 2.0
    data = asyncio.run(bench(args.rounds, args.seconds))
    args.out.mkdir(parents=True, exist_ok=True)
    name = "quick" if args.quick else "latest"
    (args.out / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n")
    text = markdown(data)
    (args.out / f"{name}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
