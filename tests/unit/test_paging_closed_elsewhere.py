"""An AsyncList closed by one task while another reads it: ``aclose`` returns, the reader
ends after the request under way (its records not handed out), nothing of the walk is left
running, and the list's token resumes where the reader stopped."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from asyncsports.paging import AsyncList, Page

READERS: dict[str, Callable[[AsyncList[int], list[int]], Awaitable[None]]] = {}


def reader(name: str) -> Callable[[Callable[..., Awaitable[None]]], None]:
    def add(read: Callable[..., Awaitable[None]]) -> None:
        READERS[name] = read

    return add


@reader("async for")
async def _loop(listing: AsyncList[int], got: list[int]) -> None:
    async for x in listing:
        got.append(x)


@reader("anext")
async def _anext(listing: AsyncList[int], got: list[int]) -> None:
    while True:
        try:
            got.append(await anext(listing))
        except StopAsyncIteration:
            return


@reader("pages")
async def _pages(listing: AsyncList[int], got: list[int]) -> None:
    async for page in listing.pages():
        got.extend(page)


@reader("collect")
async def _collect(listing: AsyncList[int], got: list[int]) -> None:
    got.extend(await listing.collect())


async def page_of(n: int) -> Page[int]:
    return Page([3 * n, 3 * n + 1, 3 * n + 2], n, 3, n == 2)


@pytest.mark.parametrize("lookahead", [0, 1])
@pytest.mark.parametrize("name", list(READERS))
async def test_a_list_closed_while_another_task_reads_it_ends_that_reader(
    name: str, lookahead: int
) -> None:
    asked: list[int] = []
    gate, waiting = asyncio.Event(), asyncio.Event()

    async def fetch(n: int) -> Page[int]:
        asked.append(n)
        if n == 1:
            waiting.set()
            await gate.wait()
        return await page_of(n)

    listing = AsyncList.paged(fetch, 3, lookahead=lookahead)
    got: list[int] = []
    task = asyncio.create_task(READERS[name](listing, got))
    async with asyncio.timeout(5):
        await waiting.wait()
        await listing.aclose()  # raised RuntimeError: the source was running in the task
        gate.set()
        await task
    assert got == [0, 1, 2]
    # Nothing of the walk's is left running (a page asked ahead is cancelled or done).
    assert asyncio.all_tasks() == {asyncio.current_task()}
    rest = AsyncList.paged(page_of, 3, resume=listing.resume_token, lookahead=0)
    assert await rest.collect() == [3, 4, 5, 6, 7, 8]
