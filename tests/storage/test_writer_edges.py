"""The batching writer's edges (store/_writer.py): a writer with no ``wrote`` callback
writes and counts all the same, and one with no room to batch is refused at once."""

from __future__ import annotations

from pathlib import Path

import anyio
import msgspec
import pytest
from support.samples import fixture

from asyncsports.models import Fixture, decode
from asyncsports.store import SqliteEngine, Writer
from asyncsports.store._rows import fixture_row
from asyncsports.store._types import Unit


def _unit(n: int) -> Unit:
    f = decode(Fixture, msgspec.json.encode(fixture(n, status="Completed")))
    row = fixture_row("basketball", f)
    return Unit(f"fixture {n}", "fixtures", [row], members=[row[0]])


async def test_a_writer_without_a_callback_writes_every_batch_and_counts_the_rows(
    tmp_path: Path,
) -> None:
    writer = Writer(SqliteEngine(tmp_path / "w.sqlite", "job"), pending=2, linger=0.01)
    async with anyio.create_task_group() as tg:
        state = await tg.start(writer.run)
        assert not state.resumed
        for n in range(1, 6):
            await writer.put(_unit(n))  # five units in batches of at most two
        writer.close(finished=True)
    assert writer.rows["fixtures"] == 5


@pytest.mark.parametrize("pending", [0, -1])
def test_a_writer_with_no_room_for_an_item_is_refused(tmp_path: Path, pending: int) -> None:
    engine = SqliteEngine(tmp_path / "w.sqlite", "job")
    with pytest.raises(ValueError, match=f"pending: must be >= 1, got {pending}"):
        Writer(engine, pending=pending)
    assert not (tmp_path / "w.sqlite").exists()  # refused before anything was opened
