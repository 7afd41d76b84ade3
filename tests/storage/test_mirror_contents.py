"""What a database holds, on both engines (``MirrorStore.contents``): a mirror's
bookkeeping, records no mirror wrote (a backfill's), or nothing yet. ``asyncsports changes``
refuses the second (issue 43, item 6): every database holds the change log's table, so a
backfill's database looked like a mirror whose feed is empty for ever."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import msgspec
import pytest
from support.samples import fixture

from asyncsports.models import Fixture, decode
from asyncsports.store import MirrorStore, Unit, Write, Writer, engine, fixture_row, open_mirror


def _row(n: int) -> tuple[object, ...]:
    f = decode(Fixture, msgspec.json.encode(fixture(n, status="Completed")))
    return tuple(fixture_row("basketball", f))


async def _backfilled(db: Path | str) -> None:
    """A fixture written as the backfill writes it: no change logged."""
    writer = Writer(engine(db, "job"), pending=4, linger=0.01)
    async with anyio.create_task_group() as tg:
        await tg.start(writer.run)
        row = _row(1)
        await writer.put(Unit("fixture 1", "fixtures", [row], members=[str(row[0])]))
        writer.close(finished=True)


async def _contents(db: Path | str) -> str:
    store = await open_mirror(db)
    try:
        return await store.contents()
    finally:
        await store.close()


async def test_a_new_database_holds_nothing_a_backfilled_one_records(db: Path | str) -> None:
    assert await _contents(db) == "nothing"
    await _backfilled(db)
    assert await _contents(db) == "records"
    store = await open_mirror(db)
    try:  # a mirror's write on it logs a change: a mirror from then on
        await store.write([Write("fixtures", [_row(2)])])
        assert await store.contents() == "mirror"
    finally:
        await store.close()


async def _mark(store: MirrorStore) -> None:
    await store.write([], marks=["fixtures:basketball"], at=1.0)


async def _position(store: MirrorStore) -> None:
    await store.write([], positions={"live:x": 3})


async def _cursor(store: MirrorStore) -> None:
    await store.save_cursor("app", 1)


async def _change(store: MirrorStore) -> None:
    await store.write([Write("fixtures", [_row(3)])])


@pytest.mark.parametrize(
    "keep",
    [_mark, _position, _cursor, _change],
    ids=["a-mark", "a-position", "a-cursor", "a-change"],
)
async def test_anything_a_mirror_keeps_makes_it_a_mirror_backfilled_rows_or_not(
    db: Path | str, keep: Callable[[MirrorStore], Awaitable[None]]
) -> None:
    """A mirror that found every record as the backfill left it logs no change, but it
    marks what it did: a mirror all the same."""
    await _backfilled(db)
    store = await open_mirror(db)
    try:
        await keep(store)
        assert await store.contents() == "mirror"
    finally:
        await store.close()
