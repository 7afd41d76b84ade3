"""The consumers of the guide "Onto your bus" (docs/guides/bus.md), run as written against a
bus the publisher filled: each reads every change once, in commit order across every
table. The page's blocks say "not run" to tests/unit/test_docs.py, which starts no bus;
here they run, their URL pointed at the test's server and ``handle`` recording."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from support import until
from support.bus import seqs
from support.docblocks import python_blocks
from support.servers import Bus

from asyncsports.emulator import Emulator
from asyncsports.sync import Mirror, Publisher

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guides" / "bus.md"
URLS = {"redis": "redis://localhost:6379/0", "nats": "nats://localhost:4222"}


def consumer(kind: str) -> str:
    """The guide's Python consumer of ``kind`` (the block that names its URL)."""
    found = [b.code for b in python_blocks(GUIDE, ROOT) if URLS[kind] in b.code]
    assert len(found) == 1, f"the guide has {len(found)} {kind} consumers"
    return found[0]


async def test_the_guides_consumer_reads_every_change_once_in_commit_order(
    bus: Bus, tmp_path: Path, sports_emulator: Emulator
) -> None:
    db = str(tmp_path / "m.sqlite")
    async with sports_emulator.client() as client:
        await Mirror(client, db, sports=["basketball"], clock=sports_emulator.clock.time).once()
    await Publisher(db, bus.url).once()
    want = await seqs(db)
    code = consumer(bus.kind)
    assert code.rstrip().endswith("asyncio.run(main())")
    got: list[int] = []
    scope: dict[str, Any] = {"__name__": "guide"}
    exec(
        compile(
            code.replace(URLS[bus.kind], bus.url).rstrip()[: -len("asyncio.run(main())")],
            str(GUIDE),
            "exec",
        ),
        scope,
    )
    scope["handle"] = lambda change: got.append(change["seq"])
    reading = asyncio.create_task(scope["main"]())
    try:
        await until(lambda: len(got) >= len(want) or reading.done(), within=60)
    finally:
        reading.cancel()
        # Bounded: the reader's own close is not what is tested (one run hung here once).
        await asyncio.wait([reading], timeout=10)
    if reading.done() and not reading.cancelled() and reading.exception() is not None:
        raise AssertionError("the guide's consumer failed") from reading.exception()
    assert got == want  # each once, in commit order across tables
